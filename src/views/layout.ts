import { Html, html } from './html.js'

export interface DocumentParts {
  /** The `<title>`. */
  title: string
  /** The one style sheet, inline (the CSP allows it by hash). */
  style: string
  /** What stands after the skip link: the header, `<main id="main">` and any footer. */
  body: Html
  /** Inline script (allowed by hash) or script files of this origin, after the body. */
  scripts?: { inline?: string; files?: readonly string[] }
}

/** The document around every page of the portal and the admin: one style sheet, scripts last. */
export function documentShell(parts: DocumentParts): string {
  const scripts = parts.scripts ?? {}
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${parts.title}</title>
<style>${new Html(parts.style)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${parts.body}
${scripts.inline ? html`<script>${new Html(scripts.inline)}</script>` : ''}${(scripts.files ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</body>
</html>
`.value
}
