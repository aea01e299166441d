import { siteRouter } from '../site/router.js'
import { createSite, type Site } from '../site/site.js'
import { portalContext, type PortalDeps } from './context.js'
import { dashboardPages } from './dashboard.js'
import { joinPages } from './join.js'
import { notificationPages } from './notifications.js'
import type { PortalOptions } from './options.js'
import { messagePage } from './pages.js'
import { signInPages } from './sign-in.js'

export type { PortalOptions, PortalThemeVariable } from './options.js'

const CSRF_COOKIE = 'affiliate_portal_csrf'

/** What `?notice=` may say. */
const NOTICES = {
  'link-created': 'Your new link is ready.',
  'settings-saved': 'Your payout settings are saved.',
  'notifications-saved': 'Your e-mail choices are saved.',
  'signed-out': 'You are signed out.',
}

/**
 * The affiliate portal: server-rendered pages under `path`, answering from the service's own
 * operations (`api`), so its rules and checks are the API's.
 */
export function createPortal(options: PortalOptions, deps: PortalDeps): Site {
  const portal = portalContext(options, deps)
  const { config, path, frameOf } = portal
  const router = siteRouter(path, 'Go to your dashboard')
  router.open({ ...dashboardPages(portal), ...signInPages(portal), ...joinPages(portal), ...notificationPages(portal) })
  return createSite({
    path,
    key: config.key,
    csrfCookie: CSRF_COOKIE,
    sameSite: 'Lax',
    secureCookies: config.secureCookies,
    style: portal.style,
    body: deps.body,
    notices: NOTICES,
    showRefusals: false,
    onError: deps.onError,
    message: (v, title, text, link) => messagePage(frameOf(v), title, text, link),
    router,
  })
}
