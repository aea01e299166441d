import type { AffiliateApi } from '../http/typed-api.js'
import { isoAt, type Clock } from '../clock.js'
import { constantTimeEqual, sha256Hex } from '../crypto.js'
import type { BodyLimits } from '../http/body.js'
import type { KeyStore } from '../keys/types.js'
import type { Storage } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { AffiliateError } from '../errors.js'
import { csrfField } from '../views/forms.js'
import { html } from '../views/html.js'
import { pages, PageError, type Site, type Visit } from '../views/http.js'
import { cspHash, keyedHash, randomToken } from '../views/secrets.js'
import { affiliatePages } from './affiliates.js'
import { campaignPages } from './campaigns.js'
import { commissionPages } from './commissions.js'
import { overviewPages } from './overview.js'
import { resolveAdminOptions, type AdminIdentity, type AdminOptions } from './options.js'
import { payoutPages } from './payouts.js'
import { settingsPages } from './settings.js'
import { ADMIN_CSS, ADMIN_SCRIPT, adminLayout, NAV, type Ctx, type Handler } from './ui.js'

export type { AdminIdentity, AdminOptions } from './options.js'

export interface AdminDeps {
  api: AffiliateApi
  storage: Storage
  keyStore: KeyStore
  clock: Clock
  basePath: string
  portalPath: string | null
  body: BodyLimits
  onError: (error: unknown, request: Request) => void
}

const SESSION_COOKIE = 'affiliate_admin_session'
const CSRF_COOKIE = 'affiliate_admin_csrf'
const WORKSPACE_COOKIE = 'affiliate_admin_workspace'
const SECRET_SETTING = 'adminSecret'

/** What `?notice=` may say: fixed texts only, so a URL cannot put words on the page. */
export const NOTICES: Record<string, string> = {
  'campaign-created': 'Campaign created.',
  'campaign-saved': 'Campaign saved.',
  'campaign-default': 'Campaign made the default.',
  'campaign-deleted': 'Campaign deleted.',
  'affiliate-saved': 'Affiliate saved.',
  approved: 'Applicants approved.',
  rejected: 'Applicants rejected.',
  banned: 'Affiliate banned.',
  unbanned: 'Affiliate unbanned.',
  'commission-created': 'Commission added.',
  refunded: 'Commission refunded.',
  'payouts-run': 'Payouts made.',
  'payout-moved': 'Payout updated.',
  'key-revoked': 'API key revoked.',
  'webhook-test': 'Test event queued.',
  'delivery-retried': 'Delivery scheduled again.',
  'webhook-deleted': 'Webhook deleted.',
  'integration-connected': 'Stripe connected. Paste its endpoint URL into Stripe’s dashboard (Developers → Webhooks).',
  'integration-secret': 'Signing secret replaced.',
  'integration-disconnected': 'Stripe disconnected.',
  'signed-out': 'You are signed out.',
}

/** The storage's admin secret: made on first use, kept in `settings`, shared by every instance. */
async function storedAdminSecret(storage: Storage, clock: Clock): Promise<string> {
  const read = () => storage.transaction((tx) => tx.get('settings', SECRET_SETTING), { readOnly: true })
  const found = await read()
  if (found) return found.value
  try {
    await storage.transaction(async (tx) => {
      if (await tx.get('settings', SECRET_SETTING)) return
      const now = isoAt(clock)
      await tx.insert('settings', { id: SECRET_SETTING, value: randomToken(), createdAt: now, updatedAt: now })
    })
  } catch (error) {
    if (!(await read())) throw error
  }
  return (await read())!.value
}

/**
 * The admin dashboard: server-rendered pages under `path` where a program owner runs campaigns,
 * affiliates, commissions, payouts, keys and webhooks. Every action calls the API's operations
 * as the admin (`api.as`), so rules, refusals, events and webhooks are the API's own.
 */
export function createAdmin(options: AdminOptions, deps: AdminDeps): Site {
  const config = resolveAdminOptions(options, deps.basePath, deps.portalPath)
  const { path } = config
  const csp = [
    "default-src 'none'",
    `style-src ${cspHash(ADMIN_CSS)}`,
    "script-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
  let shared: Promise<{ key: Uint8Array; p: ReturnType<typeof pages> }> | null = null
  const setup = () =>
    (shared ??= (config.secret ? Promise.resolve(config.secret) : storedAdminSecret(deps.storage, deps.clock)).then((secret) => {
      const key = new TextEncoder().encode(secret)
      return { key, p: pages({ path, key, csrfCookie: CSRF_COOKIE, secureCookies: config.secureCookies, sameSite: 'Strict', csp, body: deps.body }) }
    })).catch((error: unknown) => {
      shared = null
      throw error
    })

  const handlers = new Map<string, Handler>(
    [overviewPages, campaignPages, affiliatePages, commissionPages, payoutPages, settingsPages].flatMap((section) => Object.entries(section)),
  )

  /** A token sign-in's session: `<expiry ms>.<HMAC of expiry and token hash>`, nothing stored. */
  const sessionValue = (key: Uint8Array, expires: number) => `${expires}.${keyedHash(key, `admin-session:${expires}:${config.tokenHash}`)}`
  function tokenSession(key: Uint8Array, v: Visit): boolean {
    if (!config.tokenHash) return false
    const value = v.cookies.get(SESSION_COOKIE) ?? ''
    const expires = Number(value.split('.')[0])
    return Number.isSafeInteger(expires) && expires > deps.clock.now() && constantTimeEqual(value, sessionValue(key, expires))
  }

  async function identify(key: Uint8Array, v: Visit): Promise<AdminIdentity | null> {
    if (tokenSession(key, v)) return { userId: 'admin', workspaceIds: '*' }
    if (!config.authorize) return null
    const who = await config.authorize(v.request)
    if (who === null || who === undefined) return null
    if (typeof who.userId !== 'string' || !(who.workspaceIds === '*' || (Array.isArray(who.workspaceIds) && who.workspaceIds.every(isUuid)))) {
      throw new TypeError('admin.authorize must answer { userId: string, workspaceIds: UUID[] | "*" } or null')
    }
    return who
  }

  /** The workspaces an admin of every workspace can open: those of the keys and of the campaigns. */
  async function knownWorkspaces(): Promise<string[]> {
    const found = new Set<string>()
    const manage = deps.keyStore as KeyStore & { list?: () => Promise<{ workspaceIds: string[] }[]> }
    if (typeof manage.list === 'function') for (const key of await manage.list()) for (const id of key.workspaceIds) found.add(id)
    for (const campaign of (await deps.api.campaigns.list({ limit: 100 })).items) found.add(campaign.workspaceId)
    return [...found].sort()
  }

  function signInPage(p: ReturnType<typeof pages>, v: Visit, problem?: string, notice?: string): Response {
    const main = config.tokenHash
      ? html`<div class="narrow"><h1>Sign in</h1>${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${problem ? html`<div class="alert" role="alert">${problem}</div>` : ''}
<form class="card" method="post" action="${path}/sign-in">${csrfField(v.csrf)}
<label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Sign in</button></div></form></div>`
      : html`<div class="narrow"><h1>Sign in</h1><div class="card"><p>Sign in to your account to open the affiliate admin.</p></div></div>`
    // 401 whether or not a token was refused: every request the admin does not let in sees this page.
    return p.page(v, adminLayout({ path, site: config.title, csrf: v.csrf, current: 'sign-in', workspaceId: null, workspaces: [] }, 'Sign in', main), 401)
  }

  async function route(p: ReturnType<typeof pages>, key: Uint8Array, v: Visit): Promise<Response> {
    const rest = v.url.pathname.slice(path.length).replace(/\/+$/, '')
    const method = v.request.method === 'HEAD' ? 'GET' : v.request.method
    if (rest === '/assets/admin.js') {
      return new Response(v.request.method === 'HEAD' ? null : ADMIN_SCRIPT, {
        headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' },
      })
    }
    if (rest === '/sign-in' && config.tokenHash) {
      if (method !== 'POST') return signInPage(p, v, undefined, v.url.searchParams.get('notice') === 'signed-out' ? NOTICES['signed-out'] : undefined)
      const token = (await p.form(v)).get('token')
      if (!constantTimeEqual(sha256Hex(token), config.tokenHash)) return signInPage(p, v, 'That is not the admin token.')
      const expires = deps.clock.now() + config.sessionMs
      p.cookie(v, SESSION_COOKIE, sessionValue(key, expires), Math.floor(config.sessionMs / 1000))
      return p.redirect(v, path)
    }
    const who = await identify(key, v)
    if (!who) {
      // Nothing of the admin for a refused request: a sign-in page or the host's sign-in, whatever was asked.
      if (config.signInUrl && !(config.tokenHash && rest === '/sign-in')) return p.redirect(v, config.signInUrl)
      if (config.tokenHash && rest !== '/sign-in') return p.redirect(v, `${path}/sign-in`)
      return signInPage(p, v)
    }
    if (rest === '/sign-out' && method === 'POST') {
      await p.form(v)
      p.cookie(v, SESSION_COOKIE, '', 0)
      return p.redirect(v, config.tokenHash ? `${path}/sign-in?notice=signed-out` : path)
    }
    const workspaces = who.workspaceIds === '*' ? await knownWorkspaces() : [...who.workspaceIds].map((id) => id.toLowerCase())
    if (rest === '/workspace' && method === 'POST') {
      const chosen = (await p.form(v)).get('workspaceId').toLowerCase()
      if (!isUuid(chosen) || (who.workspaceIds !== '*' && !workspaces.includes(chosen))) throw new PageError(404, 'Not found', 'There is no such workspace for your account.', { href: path, label: 'Back' })
      p.cookie(v, WORKSPACE_COOKIE, chosen)
      return p.redirect(v, path)
    }
    const picked = v.cookies.get(WORKSPACE_COOKIE)?.toLowerCase()
    const workspaceId = picked && (workspaces.includes(picked) || (who.workspaceIds === '*' && isUuid(picked))) ? picked : workspaces[0]
    if (picked && workspaceId === picked && !workspaces.includes(picked)) workspaces.push(picked)
    const nav = NAV.map(([href]) => href as string)
    const current = [...nav].reverse().find((href) => (href === '' ? rest === '' : rest === href || rest.startsWith(`${href}/`))) ?? ''
    const frame = (title: string, main: ReturnType<typeof html>, ws: string | null) =>
      adminLayout({ path, site: config.title, csrf: v.csrf, current, workspaceId: ws, workspaces }, title, main)
    if (workspaceId === undefined) {
      const main = html`<div class="narrow"><h1>Open a workspace</h1><form class="card" method="post" action="${path}/workspace">${csrfField(v.csrf)}
<label for="workspaceId">Workspace ID</label><input id="workspaceId" name="workspaceId" required>
<div class="actions"><button type="submit">Open</button></div></form></div>`
      return p.page(v, frame('Open a workspace', main, null))
    }
    const handler = handlers.get(`${method} ${rest}`)
    if (!handler) {
      const known = [...handlers.keys()].filter((name) => name.endsWith(` ${rest}`)).map((name) => name.split(' ')[0]!)
      if (known.length) throw new PageError(405, 'Not allowed', `This page answers ${known.join(', ')} only.`, undefined, { allow: known.join(', ') })
      throw new PageError(404, 'Page not found', 'There is no page at this address.', { href: path, label: 'Go to the overview' })
    }
    const api = who.workspaceIds === '*' ? deps.api : deps.api.as({ keyId: `admin:${who.userId}`, userId: who.userId, workspaceIds: workspaces })
    let form: Promise<Awaited<ReturnType<typeof p.form>>> | null = null
    const ctx: Ctx = {
      v,
      api,
      who,
      workspaceId,
      workspaces,
      path,
      site: config.title,
      keys: deps.keyStore,
      origin: v.url.origin,
      basePath: deps.basePath,
      now: () => deps.clock.now(),
      form: () => (form ??= p.form(v)),
      page: (title, main, status = 200) => p.page(v, frame(title, main, workspaceId), status),
      redirect: (to) => p.redirect(v, to),
      notice: () => NOTICES[v.url.searchParams.get('notice') ?? ''],
    }
    return handler(ctx)
  }

  return {
    path,
    serves(request) {
      const url = request.url
      const start = url.indexOf('/', url.indexOf('//') + 2)
      if (start < 0) return false
      const end = url.slice(start).search(/[?#]/)
      const pathname = end < 0 ? url.slice(start) : url.slice(start, start + end)
      return pathname === path || pathname.startsWith(`${path}/`)
    },
    async fetch(request) {
      let p: ReturnType<typeof pages>
      let key: Uint8Array
      try {
        ;({ p, key } = await setup())
      } catch (error) {
        deps.onError(error, request)
        return new Response('The admin could not start. Try again in a moment.', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } })
      }
      const v = p.visit(request)
      const message = (title: string, text: string, link?: { href: string; label: string }) =>
        adminLayout(
          { path, site: config.title, csrf: v.csrf, current: 'message', workspaceId: null, workspaces: [] },
          title,
          html`<div class="narrow"><h1>${title}</h1><div class="card"><p>${text}</p>${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}</div></div>`,
        )
      try {
        return await route(p, key, v)
      } catch (error) {
        if (error instanceof PageError) return p.page(v, message(error.title, error.message, error.link), error.status, error.headers)
        // A refusal of the API that no form shows beside a field: its message, its status.
        if (error instanceof AffiliateError && error.status < 500) return p.page(v, message('Not done', error.errors?.map((e) => `${e.path}: ${e.msg}`).join('; ') || error.message, { href: path, label: 'Go to the overview' }), error.status)
        deps.onError(error, request)
        return p.page(v, message('Something went wrong', 'The page could not be shown. Try again in a moment.'), 500)
      }
    },
  }
}
