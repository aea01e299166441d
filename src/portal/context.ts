import type { Affiliate } from '../domain/affiliate.js'
import type { PortalTokenRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import { sessionCookie } from '../site/session.js'
import { formThrottle } from '../site/throttle.js'
import type { SiteDeps } from '../site/site.js'
import { STYLE } from '../site/styles.js'
import type { Visit } from '../site/visit.js'
import type { Frame } from './layout.js'
import { resolvePortalOptions, type PortalOptions } from './options.js'
import { signInPage } from './pages.js'
import { portalTokens } from './tokens.js'

const SESSION_COOKIE = 'affiliate_portal_session'
/** The most device hashes an affiliate keeps (the latest last): a day's salt makes each device a new hash daily. */
const MAX_PORTAL_DEVICES = 20

/** Each e-mail has at most this many affiliate records a session may choose from. */
const MAX_CHOICES = 100

/**
 * What the portal's pages share: its options, the API, sign-in links and sessions, and who is
 * signed in. Every read and write is keyed by the affiliate of the session, never by an id a form
 * or URL supplies.
 */
/** What the service hands the portal: the site's dependencies and what `notify` says of e-mails. */
export interface PortalDeps extends SiteDeps {
  /** Whether the service sends notifications (the dashboard then offers the affiliate's choices). */
  notifying?: boolean
  /** `notify.programName`, when given. */
  programName?: string | null
  /** The device hash of a request (null without a client address): what the portal keeps of an affiliate's own visits for `self_referral`. */
  deviceOf?: (request: Request, context: unknown) => Promise<string | null>
}

export function portalContext(options: PortalOptions, deps: PortalDeps) {
  const config = resolvePortalOptions(options, deps.basePath)
  const { api, clock, onError } = deps
  const { path } = config
  const tokens = portalTokens(deps.storage, clock, config.key, config.sessionMs)
  const style = STYLE + config.theme
  const sessions = sessionCookie(SESSION_COOKIE, config.sessionMs, {
    read: (token: string) => tokens.session(token),
    start: (email: string, affiliateId: string | null) => tokens.startSession(email, affiliateId),
    end: (token: string) => tokens.endSession(token),
  })
  /** What every page of this visit shares. */
  const frameOf = (v: Visit): Frame => ({
    path,
    site: config.title,
    style,
    csrf: v.csrf,
    ...(v.signedInAs ? { signedInAs: v.signedInAs } : {}),
  })

  /** One more sign-in or join form from this address; 429 when it has sent too many. */
  const throttle = formThrottle(config.signInLimit, clock, 'skip')
  const countForm = (v: Visit): void => throttle?.(v)

  /** The affiliate records of an e-mail that may sign in: every one not banned. */
  async function eligible(email: string): Promise<Affiliate[]> {
    const { items } = await api.affiliates.list({ email, limit: MAX_CHOICES })
    return items.filter((affiliate) => !affiliate.isBanned)
  }

  /** E-mails a sign-in link when the address has an affiliate that may sign in; sends nothing otherwise. Not awaited. */
  async function offerLink(v: Visit, email: string): Promise<void> {
    const [first] = await eligible(email)
    if (!first) return
    const token = await tokens.issueLink(email.toLowerCase())
    // From publicUrl alone: the request's origin comes from `Host`, which the client chooses.
    const url = `${config.publicUrl}${path}/sign-in/confirm?token=${token}`
    Promise.resolve()
      .then(() => config.sendSignInLink(first.email, url))
      .catch((error: unknown) => onError(error, v.request))
  }

  /**
   * Keeps the device this visit comes from (its address and user agent, hashed under the day's click
   * salt: src/tracking/visitor.ts) on the affiliate, so the `self_referral` fraud rule knows a click
   * from it as the affiliate's own. Written only when new; a failure goes to `onError`, the page is shown.
   */
  async function noteDevice(v: Visit, affiliateId: string): Promise<void> {
    try {
      const device = await deps.deviceOf?.(v.request, v.context)
      if (!device) return
      await deps.storage.transaction(async (tx) => {
        const record = await tx.get('affiliates', affiliateId)
        if (!record || record.portalDevices.includes(device)) return
        await tx.update('affiliates', affiliateId, { portalDevices: [...record.portalDevices, device].slice(-MAX_PORTAL_DEVICES) })
      })
    } catch (error) {
      onError(error, v.request)
    }
  }

  /**
   * The signed-in affiliate, or the answer to give instead: to sign in without a session, to the
   * chooser when it has not chosen, out when the affiliate is banned (or gone) since.
   */
  async function signedIn(v: Visit): Promise<{ session: PortalTokenRecord; affiliate: Affiliate } | Response> {
    const session = await sessions.get(v)
    if (!session) return v.redirect(`${path}/sign-in`)
    if (session.affiliateId === null) return v.redirect(`${path}/choose`)
    const affiliate = await api.affiliates.get(session.affiliateId).catch((error: unknown) => {
      if (error instanceof AffiliateError && error.code === 'not_found') return null
      throw error
    })
    if (!affiliate || affiliate.isBanned || affiliate.email.toLowerCase() !== session.email) {
      await sessions.end(v)
      return v.page(signInPage(frameOf(v), { problem: 'This account cannot sign in.' }), 403)
    }
    v.signedInAs = affiliate.email
    await noteDevice(v, affiliate.id)
    return { session, affiliate }
  }

  /** The program's name in the portal's e-mails: the workspace's default campaign's, else this campaign's. */
  async function programNameOf(workspaceId: string, fallback: string): Promise<string> {
    if (deps.programName) return deps.programName
    const [campaign] = await deps.storage.transaction((tx) => tx.find('campaigns', { where: { workspaceId, isDefault: true }, limit: 1 }), {
      readOnly: true,
    })
    return campaign?.campaignName ?? fallback
  }

  return {
    config,
    api,
    clock,
    onError,
    path,
    basePath: deps.basePath,
    storage: deps.storage,
    style,
    tokens,
    sessions,
    frameOf,
    countForm,
    eligible,
    offerLink,
    signedIn,
    programNameOf,
    notifying: deps.notifying === true,
  }
}

export type Portal = ReturnType<typeof portalContext>
