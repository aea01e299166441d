import { constantTimeEqual, sha256Hex } from '../crypto.js'
import type { KeyStore } from '../keys/types.js'
import { isUuid } from '../uuid.js'
import { csrfField } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { siteRouter } from '../site/router.js'
import { sessionCookie } from '../site/session.js'
import { formThrottle } from '../site/throttle.js'
import { messageMain, noticeBox } from '../site/shell.js'
import { createSite, madeOnce, type Site, type SiteDeps } from '../site/site.js'
import type { Visit } from '../site/visit.js'
import { authorized, storedAdminSecret, tokenSessions, workspacesOf } from './access.js'
import { affiliatePages } from './affiliates.js'
import { campaignPages } from './campaigns.js'
import { commissionPages } from './commissions.js'
import { overviewPages } from './overview.js'
import { resolveAdminOptions, type AdminIdentity, type AdminOptions } from './options.js'
import { payoutPages } from './payouts.js'
import { settingsPages } from './settings.js'
import { mailPages } from './mail.js'
import type { MailboxReader } from '../notifications/options.js'
import { notificationPreferences } from '../notifications/preferences.js'
import { ADMIN_CSS, adminLayout, NAV, type Ctx } from './ui.js'

export type { AdminIdentity, AdminOptions } from './options.js'

export interface AdminDeps extends SiteDeps {
  keyStore: KeyStore
  /** Where the portal is, when it is on: the admin lies beside it. */
  portalPath: string | null
  /** The portal's public origin (its join and referral links are built from it), when it is on. */
  publicUrl: string | null
  /** Whether the service sends notifications (`notify`), its development mailbox and fixed owners. */
  notifying?: boolean
  mailbox?: MailboxReader | null
  notifyOwners?: readonly string[] | null
}

const SESSION_COOKIE = 'affiliate_admin_session'
const CSRF_COOKIE = 'affiliate_admin_csrf'
const WORKSPACE_COOKIE = 'affiliate_admin_workspace'

/** What `?notice=` may say: fixed texts only, so a URL cannot put words on the page. */
const NOTICES = {
  'campaign-created': 'Campaign created.',
  'campaign-saved': 'Campaign saved.',
  'campaign-default': 'Campaign made the default.',
  'campaign-deleted': 'Campaign deleted.',
  'affiliate-saved': 'Affiliate saved.',
  'promo-code-added': 'Promo code added.',
  'promo-code-deleted': 'Promo code deleted.',
  approved: 'Applicants approved.',
  rejected: 'Applicants rejected.',
  banned: 'Affiliate banned.',
  unbanned: 'Affiliate unbanned.',
  'commission-created': 'Commission added.',
  refunded: 'Commission refunded.',
  released: 'Commissions released: they are paid with the next payout run once due.',
  voided: 'Commissions voided: they earn nothing.',
  'payouts-run': 'Payouts made.',
  'payout-moved': 'Payout updated.',
  'key-revoked': 'API key revoked.',
  'webhook-test': 'Test event queued.',
  'delivery-retried': 'Delivery scheduled again.',
  'webhook-deleted': 'Webhook deleted.',
  'integration-connected': 'Stripe connected. Paste its endpoint URL into Stripe’s dashboard (Developers → Webhooks).',
  'integration-secret': 'Signing secret replaced.',
  'integration-disconnected': 'Stripe disconnected.',
  'paddle-connected':
    'Paddle Billing connected. Add its endpoint URL as a notification destination in Paddle (Developer tools → Notifications).',
  'paddle-disconnected': 'Paddle Billing disconnected.',
  'lemonsqueezy-connected': 'Lemon Squeezy connected. Add its endpoint URL as a webhook in Lemon Squeezy (Settings → Webhooks).',
  'lemonsqueezy-disconnected': 'Lemon Squeezy disconnected.',
  'signed-out': 'You are signed out.',
  'workspace-created': 'New workspace opened: create its first campaign.',
  'mail-saved': 'E-mail settings saved.',
}

/** Who is signed in, and the request they made. */
interface SignedIn {
  v: Visit
  who: AdminIdentity
}

/**
 * The admin dashboard: server-rendered pages under `path` where a program owner runs campaigns,
 * affiliates, commissions, payouts, keys and webhooks. Every action calls the API's operations
 * as the admin (`api.as`), so rules, refusals, events and webhooks are the API's own.
 */
export function createAdmin(options: AdminOptions, deps: AdminDeps): Site {
  const config = resolveAdminOptions(options, deps.basePath, deps.portalPath)
  const { path, tokenHash } = config
  const key = madeOnce(async () => new TextEncoder().encode(config.secret ?? (await storedAdminSecret(deps.storage, deps.clock))))
  const notifications = deps.notifying
    ? {
        preferences: notificationPreferences(deps.storage, deps.clock),
        mailbox: deps.mailbox ?? null,
        fixedOwners: deps.notifyOwners ?? null,
      }
    : null
  const sessions = tokenHash
    ? sessionCookie(SESSION_COOKIE, config.sessionMs, tokenSessions(deps.storage, key, tokenHash, deps.clock, config.sessionMs))
    : null
  const countSignIn = formThrottle(config.signInLimit, deps.clock, 'shared')

  /** A page outside the workspaces (signing in, a message): no navigation. */
  const bare = (v: Visit, title: string, main: Html) =>
    adminLayout({ path, site: config.title, csrf: v.csrf, current: 'message', workspaceId: null, workspaces: [] }, title, main)

  function signInPage(v: Visit, problem?: string): Response {
    const notice = v.notice() === NOTICES['signed-out'] ? NOTICES['signed-out'] : undefined
    const main = tokenHash
      ? html`<div class="narrow"><h1>Sign in</h1>${noticeBox(notice)}${problem ? html`<div class="alert" role="alert">${problem}</div>` : ''}
<form class="card" method="post" action="${path}/sign-in">${csrfField(v.csrf)}
<label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Sign in</button></div></form></div>`
      : html`<div class="narrow"><h1>Sign in</h1><div class="card"><p>Sign in to your account to open the affiliate admin.</p></div></div>`
    // 401 whether or not a token was refused: every request the admin does not let in sees this page.
    return v.page(bare(v, 'Sign in', main), 401)
  }

  /** The admin of the request, or where they go instead: the host's sign-in, the token sign-in, or a sign-in page. Nothing of the admin either way. */
  async function signedIn(v: Visit): Promise<SignedIn | Response> {
    const who = (await sessions?.get(v)) ?? (await authorized(config, v.request))
    if (who) return { v, who }
    if (config.signInUrl) return v.redirect(config.signInUrl)
    if (tokenHash) return v.redirect(`${path}/sign-in`)
    return signInPage(v)
  }

  /** The page's context: the admin, the workspace they chose (or a page to open one), the API as them. */
  async function inWorkspace(v: Visit): Promise<Ctx | Response> {
    const entered = await signedIn(v)
    if (entered instanceof Response) return entered
    const { who } = entered
    const workspaces = await workspacesOf(who, deps.keyStore, deps.storage)
    const picked = v.cookies.get(WORKSPACE_COOKIE)?.toLowerCase()
    const workspaceId = picked && (workspaces.includes(picked) || (who.workspaceIds === '*' && isUuid(picked))) ? picked : workspaces[0]
    if (picked && workspaceId === picked && !workspaces.includes(picked)) workspaces.push(picked)
    const rest = v.url.pathname.slice(path.length).replace(/\/+$/, '')
    const current =
      [...NAV.map(([href]) => href as string)]
        .reverse()
        .find((href) => (href === '' ? rest === '' : rest === href || rest.startsWith(`${href}/`))) ??
      (rest.startsWith('/settings/') ? '/settings/integrations' : '')
    const frame = (title: string, main: Html, ws: string | null) =>
      adminLayout({ path, site: config.title, csrf: v.csrf, current, workspaceId: ws, workspaces }, title, main)
    if (workspaceId === undefined) return chooser(v, who, workspaces)
    return {
      v,
      api:
        who.workspaceIds === '*' ? deps.api : deps.api.as({ keyId: `admin:${who.userId}`, userId: who.userId, workspaceIds: workspaces }),
      who,
      workspaceId,
      workspaces,
      path,
      site: config.title,
      keys: deps.keyStore,
      origin: v.url.origin,
      basePath: deps.basePath,
      portal: deps.portalPath === null || deps.publicUrl === null ? null : { path: deps.portalPath, publicUrl: deps.publicUrl },
      now: () => deps.clock.now(),
      notifications,
      form: () => v.form(),
      page: (title, main, status = 200) => v.page(frame(title, main, workspaceId), status),
      redirect: (to) => v.redirect(to),
      notice: () => v.notice(),
    }
  }

  /**
   * The workspaces this admin may open, each with its campaigns' names, and for the admin of every
   * workspace a new one: never a box to type an id in.
   */
  async function chooser(v: Visit, who: AdminIdentity, workspaces: readonly string[], current?: string): Promise<Response> {
    const campaigns = await Promise.all(workspaces.map((workspaceId) => deps.api.campaigns.list({ workspaceId, limit: 3 })))
    const rows = workspaces.map((id, i) => {
      const { items, pagination } = campaigns[i]!
      const names = items.map((campaign) => campaign.campaignName).join(', ')
      const more = pagination.total > items.length ? ` and ${pagination.total - items.length} more` : ''
      const what =
        pagination.total === 0
          ? 'No campaigns yet'
          : `${pagination.total === 1 ? '1 campaign' : `${pagination.total} campaigns`}: ${names}${more}`
      return html`<li><form class="card" method="post" action="${path}/workspace">${csrfField(v.csrf)}<input type="hidden" name="workspaceId" value="${id}">
<p><strong>${what}</strong><span class="hint">Workspace ${id}</span>${id === current ? html` <span class="muted">(open now)</span>` : ''}</p>
<button type="submit" aria-label="Open workspace ${id}">Open</button></form></li>`
    })
    const list = rows.length
      ? html`<ul class="workspaces">${rows}</ul>`
      : html`<p class="card">${who.workspaceIds === '*' ? 'There are no workspaces yet: start a new one.' : 'Your account has no workspaces. Ask the owner of the program to add you to one.'}</p>`
    const fresh =
      who.workspaceIds === '*'
        ? html`<form class="card" method="post" action="${path}/workspace">${csrfField(v.csrf)}<input type="hidden" name="workspaceId" value="new">
<p>A workspace keeps a program apart from the others: its campaigns, affiliates, keys and webhooks.</p><button type="submit">New workspace</button></form>`
        : ''
    const main = html`<div class="narrow"><h1>Workspaces</h1>${noticeBox(v.notice())}${list}${fresh}</div>`
    return v.page(
      adminLayout({ path, site: config.title, csrf: v.csrf, current: 'message', workspaceId: null, workspaces: [] }, 'Workspaces', main),
    )
  }

  const router = siteRouter(path, 'Go to the overview')
  if (sessions && tokenHash) {
    router.open({
      'GET /sign-in': (v) => signInPage(v),
      async 'POST /sign-in'(v) {
        countSignIn?.(v)
        const token = (await v.form()).get('token')
        if (!constantTimeEqual(sha256Hex(token), tokenHash)) return signInPage(v, 'That is not the admin token.')
        await sessions.start(v)
        return v.redirect(path)
      },
    })
  }
  router.guarded(signedIn, {
    async 'POST /sign-out'({ v }) {
      await v.form()
      await sessions?.end(v)
      return v.redirect(tokenHash ? `${path}/sign-in?notice=signed-out` : path)
    },
    async 'GET /workspaces'({ v, who }) {
      const workspaces = await workspacesOf(who, deps.keyStore, deps.storage)
      const open = v.cookies.get(WORKSPACE_COOKIE)?.toLowerCase()
      // A new workspace of the admin of every workspace has no records yet: it is listed while open.
      if (open && who.workspaceIds === '*' && isUuid(open) && !workspaces.includes(open)) workspaces.push(open)
      return chooser(v, who, workspaces, open)
    },
    async 'POST /workspace'({ v, who }) {
      const chosen = (await v.form()).get('workspaceId').toLowerCase()
      if (chosen === 'new' && who.workspaceIds === '*') {
        v.cookie(WORKSPACE_COOKIE, crypto.randomUUID())
        return v.redirect(`${path}/campaigns?notice=workspace-created`)
      }
      const mine = who.workspaceIds === '*' || (await workspacesOf(who, deps.keyStore, deps.storage)).includes(chosen)
      if (!isUuid(chosen) || !mine)
        throw new PageError(404, 'Not found', 'There is no such workspace for your account.', {
          href: `${path}/workspaces`,
          label: 'Back to the workspaces',
        })
      v.cookie(WORKSPACE_COOKIE, chosen)
      return v.redirect(path)
    },
  })
  router.guarded(inWorkspace, {
    ...overviewPages,
    ...campaignPages,
    ...affiliatePages,
    ...commissionPages,
    ...payoutPages,
    ...settingsPages,
    ...mailPages,
  })
  router.otherwise(inWorkspace)

  return createSite({
    path,
    key,
    csrfCookie: CSRF_COOKIE,
    sameSite: 'Strict',
    secureCookies: config.secureCookies,
    style: ADMIN_CSS,
    body: deps.body,
    notices: NOTICES,
    showRefusals: true,
    onError: deps.onError,
    message: (v, title, text, link) => bare(v, title, messageMain(title, text, link)),
    router,
  })
}
