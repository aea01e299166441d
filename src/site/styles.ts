// The portal's and the admin's style sheet, inlined in every page and allowed by its hash in the
// Content-Security-Policy (the one script is a file of this origin: script.ts).

/**
 * The theme's variables with their defaults; a host overrides any of them with `portal.theme`.
 * The defaults meet WCAG AA contrast (axe checks every page in the end-to-end tests).
 */
export const THEME_DEFAULTS = {
  '--portal-font': 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  '--portal-bg': '#f4f5f7',
  '--portal-surface': '#ffffff',
  '--portal-text': '#1c2128',
  '--portal-muted': '#565e6b',
  '--portal-border': '#d5dae1',
  '--portal-accent': '#1f5fbf',
  '--portal-accent-text': '#ffffff',
  '--portal-danger': '#a4262c',
  '--portal-success': '#1d6b35',
  '--portal-radius': '10px',
} as const

export const STYLE = `
:root{${Object.entries(THEME_DEFAULTS)
  .map(([name, value]) => `${name}:${value}`)
  .join(';')}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font-family:var(--portal-font);font-size:16px;line-height:1.5;color:var(--portal-text);background:var(--portal-bg)}
a{color:var(--portal-accent)}
.skip{position:absolute;left:-999px;top:0;background:var(--portal-surface);padding:.5rem 1rem}
.skip:focus{left:.5rem;top:.5rem;z-index:2}
.top{background:var(--portal-surface);border-bottom:1px solid var(--portal-border)}
.bar{max-width:64rem;margin:0 auto;padding:.75rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem}
.brand{font-weight:700;font-size:1.1rem;margin-right:auto;text-decoration:none}
fieldset{min-width:0}
legend{font-weight:700;padding:0 .25rem}
.who{color:var(--portal-muted);font-size:.9rem;overflow-wrap:anywhere}
.wrap{max-width:64rem;margin:0 auto;padding:1rem}
.narrow{max-width:28rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:0 0 .75rem}
.card{background:var(--portal-surface);border:1px solid var(--portal-border);border-radius:var(--portal-radius);padding:1rem 1.25rem;margin:0 0 1rem}
.grid{display:grid;gap:1rem;margin:0 0 1rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr))}
.grid>.card{margin:0}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(8rem,1fr));gap:.75rem;margin:0}
.stats div{background:var(--portal-bg);border-radius:var(--portal-radius);padding:.75rem}
.stats dt{color:var(--portal-muted);font-size:.85rem}
.stats dd{margin:0;font-size:1.4rem;font-weight:700}
.stats dd.hint{font-size:.95rem;font-weight:400;overflow-wrap:anywhere}
.muted{color:var(--portal-muted)}
.notice{border-left:4px solid var(--portal-success);background:var(--portal-surface);padding:.75rem 1rem;margin:0 0 1rem;border-radius:var(--portal-radius)}
.alert{border-left:4px solid var(--portal-danger);background:var(--portal-surface);padding:.75rem 1rem;margin:0 0 1rem;border-radius:var(--portal-radius)}
.alert ul{margin:.25rem 0 0;padding-left:1.25rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{display:block;font-weight:400;color:var(--portal-muted);font-size:.875rem}
label .hint{display:inline}
input,select,textarea{font:inherit;color:inherit;width:100%;padding:.55rem .65rem;border:1px solid var(--portal-muted);border-radius:calc(var(--portal-radius) / 2);background:var(--portal-surface)}
textarea{min-height:6rem}
input:focus,select:focus,textarea:focus,button:focus,a:focus{outline:3px solid var(--portal-accent);outline-offset:2px}
[aria-invalid=true]{border-color:var(--portal-danger)}
.field-error{color:var(--portal-danger);font-size:.9rem;margin:.25rem 0 0}
button{font:inherit;font-weight:600;cursor:pointer;border:1px solid var(--portal-accent);border-radius:calc(var(--portal-radius) / 2);padding:.55rem 1rem;background:var(--portal-accent);color:var(--portal-accent-text)}
button.quiet{background:var(--portal-surface);color:var(--portal-accent)}
form.inline{display:inline}
.actions{margin-top:1rem;display:flex;gap:.5rem;flex-wrap:wrap;align-items:center}
.table{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.5rem;border-bottom:1px solid var(--portal-border);vertical-align:top}
th{color:var(--portal-muted);font-weight:600;font-size:.85rem}
td.num,th.num{text-align:right;white-space:nowrap}
.copy{display:flex;gap:.5rem}
.copy input{min-width:0}
.status{display:inline-block;padding:0 .5rem;border-radius:999px;border:1px solid var(--portal-border);font-size:.85rem}
.pages{display:flex;gap:1rem;margin-top:.75rem}
a.button{display:inline-block;font-weight:600;border:1px solid var(--portal-accent);border-radius:calc(var(--portal-radius) / 2);padding:.55rem 1rem;background:var(--portal-accent);color:var(--portal-accent-text);text-decoration:none}
a.button.quiet{background:var(--portal-surface);color:var(--portal-accent)}
button.danger{background:var(--portal-danger);border-color:var(--portal-danger)}
.check{display:flex;gap:.5rem;align-items:baseline;margin:.75rem 0}
.check input{width:auto}
.check label{margin:0}
dialog{border:1px solid var(--portal-border);border-radius:var(--portal-radius);max-width:30rem}
@media (max-width:40rem){
.wrap{padding:.75rem}.card{padding:.75rem}h1{font-size:1.3rem}
table.stack thead{display:none}
table.stack tr{display:block;padding:.5rem 0;border-bottom:1px solid var(--portal-border)}
table.stack td{display:block;border:0;padding:.15rem 0;text-align:left}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--portal-muted);font-size:.85rem}
}
`.trim()
