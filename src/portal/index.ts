import type { AffiliateApi } from '../http/typed-api.js'
import type { Clock } from '../clock.js'
import type { Affiliate } from '../domain/affiliate.js'
import type { PortalTokenRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import type { BodyLimits } from '../http/body.js'
import { clientAddressOf } from '../http/client-address.js'
import { addressThrottle, type AddressThrottle } from '../limiter/address-throttle.js'
import type { Storage } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { pages, PageError, refusal, type Site, type Visit as PageVisit } from '../views/http.js'
import type { Frame } from './layout.js'
import { resolvePortalOptions, type PortalOptions } from './options.js'
import {
  choosePage,
  confirmPage,
  dashboardPage,
  joinedPage,
  joinPage,
  messagePage,
  PAYOUT_METHODS,
  signInPage,
  signInSentPage,
  type Choice,
  type DashboardView,
} from './pages.js'
import type { FieldErrors } from '../views/forms.js'
import { cspHash } from '../views/secrets.js'
import { SCRIPT, STYLE } from '../views/styles.js'
import { portalTokens } from './tokens.js'

export type { PortalOptions, PortalThemeVariable } from './options.js'

export interface PortalDeps {
  api: AffiliateApi
  storage: Storage
  clock: Clock
  basePath: string
  body: BodyLimits
  onError: (error: unknown, request: Request) => void
}

const SESSION_COOKIE = 'affiliate_portal_session'
const CSRF_COOKIE = 'affiliate_portal_csrf'
/** Each e-mail has at most this many affiliate records a session may choose from. */
const MAX_CHOICES = 100

/** What `?notice=` may say: fixed texts only, so a URL cannot put words on the page. */
const NOTICES = new Map([
  ['link-created', 'Your new link is ready.'],
  ['settings-saved', 'Your payout settings are saved.'],
  ['signed-out', 'You are signed out.'],
])

/** A request to the portal: the shared visit and the frame its pages are drawn in. */
interface Visit extends PageVisit {
  frame: Frame
}

/**
 * The affiliate portal: server-rendered pages under `path`, answering from the service's own
 * operations (`api`), so its rules and checks are the API's. Every read and write is keyed by the
 * affiliate of the session, never by an id a form or URL supplies.
 */
export function createPortal(options: PortalOptions, deps: PortalDeps): Site {
  const config = resolvePortalOptions(options, deps.basePath)
  const { api, clock, onError } = deps
  const { path } = config
  const tokens = portalTokens(deps.storage, clock, config.key, config.sessionMs)
  const throttle: AddressThrottle | null = config.signInLimit ? addressThrottle(config.signInLimit, clock) : null
  const style = STYLE + config.theme
  const csp = [
    "default-src 'none'",
    `style-src ${cspHash(style)}`,
    `script-src ${cspHash(SCRIPT)}`,
    "img-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
  const shared = pages({ path, key: config.key, csrfCookie: CSRF_COOKIE, secureCookies: config.secureCookies, sameSite: 'Lax', csp, body: deps.body })
  const { page, redirect, form } = shared

  function visit(request: Request): Visit {
    const v = shared.visit(request)
    return { ...v, frame: { path, site: config.title, style, csrf: v.csrf } }
  }

  /** One more sign-in or join form from this address; 429 when it has sent too many. */
  function countForm(v: Visit, context: unknown): void {
    if (!throttle) return
    const address = clientAddressOf(v.request, context)
    if (address === undefined) return
    try {
      throttle.check(address)
    } catch (error) {
      const after = error instanceof AffiliateError ? error.headers?.['Retry-After'] : undefined
      throw new PageError(429, 'Too many attempts', `Too many attempts from your network. Try again in ${after ?? 'a few'} seconds.`, undefined, after ? { 'retry-after': after } : {})
    }
    throttle.spend(address)
  }

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
   * Tells the old payout e-mail and the account's e-mail that the payout e-mail changed from
   * `before`'s to `after`, so an owner who did not change it (someone else signed in) hears of it.
   * Not awaited: a failing `sendNotice` goes to `onError`.
   */
  function noticePayoutEmail(v: Visit, before: Affiliate, after: string, campaignName: string): void {
    const old = before.payoutEmail
    const to = new Map([old, before.email].filter((email) => email !== '').map((email) => [email.toLowerCase(), email]))
    const subject = `Your payout e-mail for ${campaignName} was changed`
    const text = [
      `The payout e-mail of your affiliate account ${before.email} in ${campaignName} was changed`,
      `from ${old || '(none)'} to ${after || '(none)'} at ${new Date(clock.now()).toISOString()}.`,
      'Payouts go to the new address from now on.',
      '',
      `If you did not make this change, sign in at ${config.publicUrl}${path}/sign-in, set your payout e-mail back, and tell ${campaignName}.`,
    ].join('\n')
    for (const email of to.values()) {
      Promise.resolve()
        .then(() => config.sendNotice(email, subject, text))
        .catch((error: unknown) => onError(error, v.request))
    }
  }

  function endSession(v: Visit): void {
    shared.cookie(v, SESSION_COOKIE, '', 0)
  }

  /** The visit's session, when its cookie names one that lasts. */
  async function sessionOf(v: Visit): Promise<PortalTokenRecord | null> {
    const token = v.cookies.get(SESSION_COOKIE)
    if (!token) return null
    const session = await tokens.session(token)
    if (!session) endSession(v)
    return session
  }

  /**
   * The signed-in affiliate, or the answer to give instead: to sign in without a session, to the
   * chooser when it has not chosen, out when the affiliate is banned (or gone) since.
   */
  async function signedIn(v: Visit): Promise<{ session: PortalTokenRecord; affiliate: Affiliate } | Response> {
    const session = await sessionOf(v)
    if (!session) return redirect(v, `${path}/sign-in`)
    if (session.affiliateId === null) return redirect(v, `${path}/choose`)
    const affiliate = await api.affiliates.get(session.affiliateId).catch((error: unknown) => {
      if (error instanceof AffiliateError && error.code === 'not_found') return null
      throw error
    })
    if (!affiliate || affiliate.isBanned || affiliate.email.toLowerCase() !== session.email) {
      await tokens.endSession(v.cookies.get(SESSION_COOKIE)!)
      endSession(v)
      return page(v, signInPage(v.frame, { problem: 'This account cannot sign in.' }), 403)
    }
    v.frame.signedInAs = affiliate.email
    return { session, affiliate }
  }

  async function dashboard(v: Visit, failed?: DashboardView['failed'], status = 200): Promise<Response> {
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const { affiliate, session } = who
    const pageNumber = Number(v.url.searchParams.get('page') ?? '1')
    const page_ = Number.isSafeInteger(pageNumber) && pageNumber >= 1 && pageNumber <= 100_000 ? pageNumber : 1
    const [campaign, links, commissions, balance, payouts, choices] = await Promise.all([
      api.campaigns.get(affiliate.campaignId),
      api.links.list({ affiliateId: affiliate.id }),
      api.commissions.list({ affiliateId: affiliate.id, page: page_, limit: 10 }),
      api.affiliates.balance(affiliate.id),
      api.payouts.list({ affiliateId: affiliate.id, limit: 10 }),
      eligible(session.email),
    ])
    const notice = NOTICES.get(v.url.searchParams.get('notice') ?? '')
    const view: DashboardView = {
      affiliate,
      campaign,
      shareBase: `${config.publicUrl}${deps.basePath}/r/`,
      links: links.items,
      commissions,
      balance,
      payouts: payouts.items,
      canSwitch: choices.length > 1,
      ...(notice && !failed ? { notice } : {}),
      ...(failed ? { failed } : {}),
    }
    return page(v, dashboardPage(v.frame, view), status)
  }

  async function signIn(v: Visit, context: unknown): Promise<Response> {
    if (v.request.method !== 'POST') {
      const notice = NOTICES.get(v.url.searchParams.get('notice') ?? '')
      return page(v, signInPage(v.frame, notice ? { notice } : {}))
    }
    countForm(v, context)
    const email = (await form(v)).get('email')
    try {
      await offerLink(v, email)
    } catch (error) {
      const { errors } = refusal(error, ['email'])
      return page(v, signInPage(v.frame, { email, errors: { email: errors.email ?? 'Enter a valid e-mail address' } }), 400)
    }
    return page(v, signInSentPage(v.frame, email))
  }

  const linkGone = () =>
    new PageError(400, 'Link no longer valid', 'This sign-in link is no longer valid: each link works once, for 15 minutes.', {
      href: `${path}/sign-in`,
      label: 'Get a new link',
    })

  async function confirm(v: Visit): Promise<Response> {
    if (v.request.method !== 'POST') {
      const token = v.url.searchParams.get('token') ?? ''
      if (!/^[A-Za-z0-9_-]{43}$/.test(token) || !(await tokens.linkWorks(token))) throw linkGone()
      return page(v, confirmPage(v.frame, token))
    }
    const token = (await form(v)).get('token')
    const email = /^[A-Za-z0-9_-]{43}$/.test(token) ? await tokens.useLink(token) : null
    if (email === null) throw linkGone()
    const choices = await eligible(email)
    if (choices.length === 0) throw new PageError(403, 'Cannot sign in', 'This account cannot sign in.')
    const previous = v.cookies.get(SESSION_COOKIE)
    if (previous) await tokens.endSession(previous)
    const session = await tokens.startSession(email, choices.length === 1 ? choices[0]!.id : null)
    shared.cookie(v, SESSION_COOKIE, session, Math.floor(config.sessionMs / 1000))
    return redirect(v, choices.length === 1 ? path : `${path}/choose`)
  }

  async function choose(v: Visit): Promise<Response> {
    const session = await sessionOf(v)
    if (!session) return redirect(v, `${path}/sign-in`)
    const affiliates = await eligible(session.email)
    if (v.request.method === 'POST') {
      const chosen = (await form(v)).get('affiliateId')
      // Only one of this session's own affiliates: any other id is refused like an unknown one.
      if (!affiliates.some((affiliate) => affiliate.id === chosen)) throw new PageError(404, 'Not found', 'There is no such program for your account.')
      await tokens.choose(session, chosen)
      return redirect(v, path)
    }
    if (affiliates.length === 0) {
      await tokens.endSession(v.cookies.get(SESSION_COOKIE)!)
      endSession(v)
      return page(v, signInPage(v.frame, { problem: 'This account cannot sign in.' }), 403)
    }
    v.frame.signedInAs = affiliates[0]!.email
    const choices: Choice[] = await Promise.all(affiliates.map(async (affiliate) => ({ affiliate, campaign: await api.campaigns.get(affiliate.campaignId) })))
    return page(v, choosePage(v.frame, choices))
  }

  async function makeLink(v: Visit): Promise<Response> {
    const sent = await form(v)
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const values = { referralCode: sent.get('referralCode'), urlParameter: sent.get('urlParameter') }
    if (!who.affiliate.isActive) throw new PageError(403, 'Awaiting approval', 'You can make links once your account is approved.', { href: path, label: 'Back to your dashboard' })
    try {
      await api.links.create({
        affiliateId: who.affiliate.id,
        ...(values.referralCode ? { referralCode: values.referralCode } : {}),
        ...(values.urlParameter ? { urlParameter: values.urlParameter } : {}),
      })
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['referralCode', 'urlParameter'])
      return dashboard(v, { form: 'link', problem, errors, values }, status)
    }
    return redirect(v, `${path}?notice=link-created#links`)
  }

  async function saveSettings(v: Visit): Promise<Response> {
    const sent = await form(v)
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const values = { payoutEmail: sent.get('payoutEmail'), payoutMethod: sent.get('payoutMethod') }
    const method = PAYOUT_METHODS.find(([value]) => value === values.payoutMethod)?.[0] ?? null
    if (values.payoutMethod !== '' && method === null) {
      return dashboard(v, { form: 'settings', problem: 'Please correct the following:', errors: { payoutMethod: 'Choose a payout method from the list' }, values }, 400)
    }
    let saved: Affiliate
    try {
      saved = await api.affiliates.update(who.affiliate.id, { payoutEmail: values.payoutEmail, payoutMethod: method })
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['payoutEmail', 'payoutMethod'])
      return dashboard(v, { form: 'settings', problem, errors, values }, status)
    }
    if (saved.payoutEmail.toLowerCase() !== who.affiliate.payoutEmail.toLowerCase()) {
      const campaign = await api.campaigns.get(who.affiliate.campaignId)
      noticePayoutEmail(v, who.affiliate, saved.payoutEmail, campaign.campaignName)
    }
    return redirect(v, `${path}?notice=settings-saved#settings`)
  }

  async function signOut(v: Visit): Promise<Response> {
    await form(v)
    const token = v.cookies.get(SESSION_COOKIE)
    if (token) await tokens.endSession(token)
    endSession(v)
    return redirect(v, `${path}/sign-in?notice=signed-out`)
  }

  async function join(v: Visit, campaignId: string, context: unknown): Promise<Response> {
    const campaign = isUuid(campaignId)
      ? await api.campaigns.get(campaignId).catch((error: unknown) => {
          if (error instanceof AffiliateError && error.code === 'not_found') return null
          throw error
        })
      : null
    if (!campaign) throw new PageError(404, 'Program not found', 'There is no affiliate program at this address. Check the link you were given.')
    if (v.request.method !== 'POST') return page(v, joinPage(v.frame, { campaign }))
    countForm(v, context)
    const sent = await form(v)
    const values = Object.fromEntries(['email', 'firstName', 'lastName', 'website', 'about'].map((name) => [name, sent.get(name)]))
    const info = campaign.collectAdditionalInfo ? { website: values.website!, about: values.about! } : null
    const errors: FieldErrors = {}
    if (info && info.website.length > 500) errors.website = 'website must be at most 500 characters'
    if (info && info.about.length > 2000) errors.about = 'about must be at most 2000 characters'
    if (Object.keys(errors).length === 0) {
      try {
        await api.affiliates.create({
          email: values.email!,
          campaignId: campaign.id,
          firstName: values.firstName!,
          lastName: values.lastName!,
          details: info && (info.website || info.about) ? JSON.stringify(info) : null,
        })
      } catch (error) {
        const known = error instanceof AffiliateError && error.code === 'duplicate'
        // Already in the campaign: answered like a new member (a sign-in link goes to the address), so the form tells nobody who is in.
        if (!known) Object.assign(errors, refusal(error, ['email', 'firstName', 'lastName']).errors)
        if (!known && Object.keys(errors).length === 0) throw error
      }
    }
    if (Object.keys(errors).length > 0) return page(v, joinPage(v.frame, { campaign, values, errors }), 400)
    await offerLink(v, values.email!)
    return page(v, joinedPage(v.frame, campaign, values.email!))
  }

  async function route(v: Visit, context: unknown): Promise<Response> {
    const rest = v.url.pathname.slice(path.length).replace(/\/+$/, '')
    const method = v.request.method
    const allow = (methods: string) => {
      if (!methods.split(', ').includes(method)) throw new PageError(405, 'Not allowed', `This page answers ${methods} only.`, undefined, { allow: methods })
    }
    if (rest === '') return allow('GET, HEAD'), dashboard(v)
    if (rest === '/sign-in') return allow('GET, HEAD, POST'), signIn(v, context)
    if (rest === '/sign-in/confirm') return allow('GET, HEAD, POST'), confirm(v)
    if (rest === '/choose') return allow('GET, HEAD, POST'), choose(v)
    if (rest === '/links') return allow('POST'), makeLink(v)
    if (rest === '/settings') return allow('POST'), saveSettings(v)
    if (rest === '/sign-out') return allow('POST'), signOut(v)
    const joining = /^\/join\/([^/]+)$/.exec(rest)
    // A campaign id is a UUID, which needs no decoding; anything else is answered 404 in `join`.
    if (joining) return allow('GET, HEAD, POST'), join(v, joining[1]!, context)
    throw new PageError(404, 'Page not found', 'There is no page at this address.', { href: path, label: 'Go to your dashboard' })
  }

  return {
    path,
    serves(request) {
      const url = request.url
      // The path part of an absolute URL: after the third '/'.
      const start = url.indexOf('/', url.indexOf('//') + 2)
      if (start < 0) return false
      const end = url.slice(start).search(/[?#]/)
      const pathname = end < 0 ? url.slice(start) : url.slice(start, start + end)
      return pathname === path || pathname.startsWith(`${path}/`)
    },
    async fetch(request, context) {
      const v = visit(request)
      try {
        return await route(v, context)
      } catch (error) {
        if (error instanceof PageError) return page(v, messagePage(v.frame, error.title, error.message, error.link), error.status, error.headers)
        onError(error, request)
        return page(v, messagePage(v.frame, 'Something went wrong', 'The page could not be shown. Try again in a moment.'), 500)
      }
    },
  }
}
