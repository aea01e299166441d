import type { ResourceApi } from '../http/typed-api.js'
import type { Pagination } from '../api/shared.js'
import type { KeyManagement, KeyStore } from '../keys/types.js'
import { confirmForm } from '../site/confirm.js'
import type { Schema } from '../schemas/validate.js'
import { csrfField, refusal } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import type { Form } from '../site/form-reader.js'
import { PageError } from '../site/page-error.js'
import { parseQuery } from '../site/parse-form.js'
import type { Handler as PageHandler } from '../site/router.js'
import { SCRIPT_PATH } from '../site/script.js'
import { documentShell } from '../site/shell.js'
import { STYLE } from '../site/styles.js'
import type { Visit } from '../site/visit.js'
import type { MailboxReader } from '../notifications/options.js'
import type { NotificationPreferences } from '../notifications/preferences.js'
import type { AdminIdentity } from './options.js'

/** What every admin page handler gets. */
export interface Ctx {
  v: Visit
  /** The operations as the signed-in admin: the API's rules, scoped to their workspaces. */
  api: ResourceApi
  who: AdminIdentity
  /** The workspace the pages show (chosen with the switcher). */
  workspaceId: string
  workspaces: string[]
  path: string
  site: string
  keys: (KeyStore & Partial<KeyManagement>) | null
  /** The form of this POST (CSRF checked). */
  form(): Promise<Form>
  page(title: string, main: Html, status?: number): Response
  redirect(to: string): Response
  /** The one-time notice this URL names (`?notice=`), when it names a known one. */
  notice(): string | undefined
  /** The origin API links are shown with. */
  origin: string
  /** The API's base path (`/api/v1`): the provider endpoints are under it. */
  basePath: string
  /** The affiliate portal, when it is on: its path and the public origin its links are built from. */
  portal: { path: string; publicUrl: string } | null
  /** The service's clock. */
  now(): number
  /** The notifications' settings, when the service sends them (`notify`). */
  notifications: AdminNotifications | null
}

/** What the admin's e-mail pages work with. */
export interface AdminNotifications {
  preferences: NotificationPreferences
  /** The development mailbox's messages, when the service has one. */
  mailbox: MailboxReader | null
  /** `notify.owners` when the host set them (then the admin cannot change them). */
  fixedOwners: readonly string[] | null
}

export const NAV = [
  ['', 'Overview'],
  ['/campaigns', 'Campaigns'],
  ['/affiliates', 'Affiliates'],
  ['/commissions', 'Commissions'],
  ['/payouts', 'Payouts'],
  ['/settings/integrations', 'Settings'],
] as const

export const ADMIN_STYLE = `
.admin{display:flex;min-height:100vh}
.side{background:var(--portal-surface);border-right:1px solid var(--portal-border);padding:1rem;width:14rem;flex:none}
.side ul{list-style:none;margin:1rem 0;padding:0}
.side a{display:block;padding:.4rem .6rem;border-radius:6px;text-decoration:none}
.side a[aria-current=page]{background:var(--portal-accent);color:var(--portal-accent-text)}
.content{flex:1;min-width:0;padding:1rem 1.5rem}
.head{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between}
.head h1{margin:.5rem 0}
.head-actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end}
.filters label{margin:0 0 .25rem}
.filters>div{min-width:9rem}
.filters input,.filters select{height:2.875rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:.75rem;margin:0 0 1rem}
.cards div{background:var(--portal-surface);border:1px solid var(--portal-border);border-radius:var(--portal-radius);padding:.75rem}
.cards dt{color:var(--portal-muted);font-size:.85rem}
.cards dd{margin:0;font-size:1.25rem;font-weight:700}
.cards .change{display:block;font-size:.85rem;font-weight:400;color:var(--portal-muted)}
.st-active,.st-paid,.st-succeeded,.st-processed{border-color:var(--portal-success);color:var(--portal-success)}
.st-banned,.st-failed,.st-refunded,.st-dead,.st-canceled,.st-revoked,.st-voided{border-color:var(--portal-danger);color:var(--portal-danger)}
.secret{font-family:ui-monospace,monospace;background:var(--portal-bg);padding:.5rem;border-radius:6px;overflow-wrap:anywhere;display:block}
.providers{list-style:none;margin:0 0 1rem;padding:0}
.workspaces{list-style:none;margin:0;padding:0}
.providers li{border-bottom:1px solid var(--portal-border);padding:0 0 1rem;margin:0 0 1rem}
.providers h3{margin:0;font-size:1rem}
.providers p{margin:.25rem 0 0}
.field-name{font-weight:600;margin:.75rem 0 .25rem}
.card>.field-name:first-child{margin-top:0}
.copy{align-items:flex-start}
code.url{flex:1;min-width:0;font-family:ui-monospace,monospace;font-size:.9rem;background:var(--portal-bg);border:1px solid var(--portal-border);border-radius:calc(var(--portal-radius) / 2);padding:.55rem .65rem;overflow-wrap:anywhere}
time{white-space:nowrap}
.stats time{white-space:normal}
.admin .stats dd:not(.hint){font-size:1.2rem}
.table td a{overflow-wrap:anywhere}
.chart .scroll{overflow-x:auto}
/* Never drawn much narrower than its 720 units: its labels stay readable, and a phone scrolls it. */
.chart svg{width:100%;min-width:40rem;height:auto;display:block}
td input[type=checkbox]{width:auto}
.answers dt{font-weight:600;margin:.5rem 0 0}
.answers dd{margin:0}
.answers dd p{margin:.25rem 0}
.history{margin:0;padding-left:1.25rem}
.history li{margin:.35rem 0}
.cards dd+dd{margin-top:.25rem}
/* A long list of checkboxes (a webhook's events) in columns as wide as the page allows. */
fieldset#events{columns:15rem}
fieldset#events .check{break-inside:avoid;margin:.3rem 0}
.ws{display:flex;gap:.5rem;align-items:end;flex-wrap:wrap}
@media (max-width:48rem){
.admin{display:block}
.side{width:auto;border-right:0;border-bottom:1px solid var(--portal-border);padding:.5rem}
.side ul{display:flex;flex-wrap:wrap;gap:.25rem;margin:.5rem 0}
.content{padding:.75rem}
}
`.trim()

export const ADMIN_CSS = `${STYLE}\n${ADMIN_STYLE}`

export function adminLayout(
  c: { path: string; site: string; csrf: string; current: string; workspaceId: string | null; workspaces: string[] },
  title: string,
  main: Html,
): string {
  const nav = NAV.map(
    ([href, label]) => html`<li><a href="${c.path}${href}"${c.current === href ? html` aria-current="page"` : ''}>${label}</a></li>`,
  )
  const switcher =
    c.workspaceId === null
      ? ''
      : c.workspaces.length > 1
        ? html`<form class="ws" method="post" action="${c.path}/workspace">${csrfField(c.csrf)}<div><label for="workspace-switch">Workspace</label><select id="workspace-switch" name="workspaceId">${c.workspaces.map(
            (id) => html`<option value="${id}"${id === c.workspaceId ? html` selected` : ''}>${id}</option>`,
          )}</select></div><button class="quiet" type="submit">Switch</button> <a href="${c.path}/workspaces">All workspaces</a></form>`
        : html`<p class="muted"><a href="${c.path}/workspaces">Workspace</a> <span class="hint">${c.workspaceId}</span></p>`
  return documentShell({
    title: `${title} · ${c.site}`,
    style: ADMIN_CSS,
    body: html`<div class="admin"><nav class="side" aria-label="Admin"><a class="brand" href="${c.path}">${c.site}</a>
${c.workspaceId === null ? '' : html`<ul>${nav}</ul>`}
${switcher}
${c.workspaceId === null ? '' : html`<form method="post" action="${c.path}/sign-out">${csrfField(c.csrf)}<button class="quiet" type="submit">Sign out</button></form>`}
</nav>
<main id="main" class="content">
${main}
</main></div>`,
    script: `${c.path}${SCRIPT_PATH}`,
  })
}

/** The page head: the title and, at its right, the page's one primary action. */
export const head = (title: string, action?: Html): Html =>
  html`<div class="head"><h1>${title}</h1>${action ? html`<div class="head-actions">${action}</div>` : ''}</div>`

/** The e-mail of each affiliate of `ids` that still exists (one read each: callers pass a page's worth). */
export async function affiliateEmails(c: Ctx, ids: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(ids)]
  const emails = await Promise.all(
    unique.map((id) =>
      c.api.affiliates.get(id).then(
        (affiliate) => affiliate.email,
        () => null,
      ),
    ),
  )
  return new Map(unique.flatMap((id, i) => (emails[i] ? [[id, emails[i]] as const] : [])))
}

/** A link to an affiliate's page named by their e-mail, or by the start of their id once deleted. */
export const affiliateLink = (c: Ctx, id: string, emails: ReadonlyMap<string, string>): Html =>
  html`<a href="${c.path}/affiliates/detail?affiliateId=${id}">${emails.get(id) ?? id.slice(0, 8)}</a>`

/** A date shown in UTC, the instant in `<time datetime>`. */
export const when = (iso: string | null | undefined): Html | '' =>
  iso ? html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')}</time>` : ''

/** The day of an instant in UTC, the instant in `<time datetime>`: for narrow tables. */
export const day = (iso: string | null | undefined): Html | '' => (iso ? html`<time datetime="${iso}">${iso.slice(0, 10)}</time>` : '')

/** A status as a word with a colour (the word is the signal, the colour a help). */
export const badge = (status: string): Html =>
  html`<span class="status st-${status.replace(/[^a-z-]/g, '')}">${status.replace(/-/g, ' ')}</span>`

/** "41-60 of 1,203" with previous and next links keeping the query. */
export function pager(url: URL, p: Pagination): Html {
  if (p.total === 0) return html``
  const first = (p.page - 1) * p.limit + 1
  const last = Math.min(p.total, p.page * p.limit)
  const link = (page: number) => {
    const q = new URLSearchParams(url.search)
    q.set('page', String(page))
    q.delete('notice')
    return `${url.pathname}?${q}`
  }
  return html`<nav class="pages" aria-label="Pages"><span>${first.toLocaleString('en-US')}-${last.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')}</span>${
    p.page > 1 ? html`<a href="${link(p.page - 1)}">Previous</a>` : ''
  }${p.page < p.totalPages ? html`<a href="${link(p.page + 1)}">Next</a>` : ''}</nav>`
}

/** A confirmation page: what will happen, and the same form again with `confirmed=yes`. */
export function confirmation(
  c: Ctx,
  title: string,
  sentence: string,
  action: string,
  fields: Record<string, string | string[]>,
  button: string,
  back: string,
): Response {
  return c.page(
    title,
    html`${head(title)}<div class="card"><p>${sentence}</p>
${confirmForm(c.v.csrf, action, fields, button, back)}</div>`,
  )
}

/** One page or form of the admin. */
export type Handler = PageHandler<Ctx>

/**
 * A list page's query (or an export's): the filters in its URL, its page (1 when unreadable) and
 * the workspace, 20 a page, checked by the list route's own query schema. A filter the route refuses is a 400 page
 * naming it, with a link that clears the filters.
 */
export function listQuery<T>(c: Ctx, schema: Schema<T>, fixed: Record<string, unknown> = {}): T {
  const page = Number(c.v.url.searchParams.get('page') ?? 1) || 1
  const paged = schema.fields.has('page') ? { page, limit: 20 } : {}
  try {
    return parseQuery(schema, c.v.url.searchParams, { ...paged, workspaceId: c.workspaceId, ...fixed })
  } catch (error) {
    const { problem, status } = refusal(error, [])
    throw new PageError(status, 'Filter not understood', problem, {
      href: `${c.v.url.pathname}${fixed.integrationId ? `?integrationId=${String(fixed.integrationId)}` : ''}`,
      label: 'Clear the filters',
    })
  }
}
