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
import { refusal, type FieldErrors } from '../site/forms.js'
import { PageError } from '../site/page-error.js'
import { siteRouter } from '../site/router.js'
import { sessionCookie } from '../site/session.js'
import { createSite, type Site } from '../site/site.js'
import { STYLE } from '../site/styles.js'
import type { Visit } from '../site/visit.js'
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

/** What `?notice=` may say. */
const NOTICES = {
  'link-created': 'Your new link is ready.',
  'settings-saved': 'Your payout settings are saved.',
  'signed-out': 'You are signed out.',
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
  const sessions = sessionCookie(SESSION_COOKIE, config.sessionMs, {
    read: (token: string) => tokens.session(token),
    start: (email: string, affiliateId: string | null) => tokens.startSession(email, affiliateId),
    end: (token: string) => tokens.endSession(token),
  })
  /** What every page of this visit shares. */
  const frameOf = (v: Visit): Frame => ({ path, site: config.title, style, csrf: v.csrf, ...(v.signedInAs ? { signedInAs: v.signedInAs } : {}) })

  /** One more sign-in or join form from this address; 429 when it has sent too many. */
  function countForm(v: Visit): void {
    if (!throttle) return
    const address = clientAddressOf(v.request, v.context)
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
    const notice = v.notice()
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
    return v.page(dashboardPage(frameOf(v), view), status)
  }

  function signInForm(v: Visit): Response {
    const notice = v.notice()
    return v.page(signInPage(frameOf(v), notice ? { notice } : {}))
  }

  async function signIn(v: Visit): Promise<Response> {
    countForm(v)
    const email = (await v.form()).get('email')
    try {
      await offerLink(v, email)
    } catch (error) {
      const { errors } = refusal(error, ['email'])
      return v.page(signInPage(frameOf(v), { email, errors: { email: errors.email ?? 'Enter a valid e-mail address' } }), 400)
    }
    return v.page(signInSentPage(frameOf(v), email))
  }

  const linkGone = () =>
    new PageError(400, 'Link no longer valid', 'This sign-in link is no longer valid: each link works once, for 15 minutes.', {
      href: `${path}/sign-in`,
      label: 'Get a new link',
    })

  async function confirmForm(v: Visit): Promise<Response> {
    const token = v.url.searchParams.get('token') ?? ''
    if (!/^[A-Za-z0-9_-]{43}$/.test(token) || !(await tokens.linkWorks(token))) throw linkGone()
    return v.page(confirmPage(frameOf(v), token))
  }

  async function confirm(v: Visit): Promise<Response> {
    const token = (await v.form()).get('token')
    const email = /^[A-Za-z0-9_-]{43}$/.test(token) ? await tokens.useLink(token) : null
    if (email === null) throw linkGone()
    const choices = await eligible(email)
    if (choices.length === 0) throw new PageError(403, 'Cannot sign in', 'This account cannot sign in.')
    await sessions.start(v, email, choices.length === 1 ? choices[0]!.id : null)
    return v.redirect(choices.length === 1 ? path : `${path}/choose`)
  }

  async function choose(v: Visit): Promise<Response> {
    const session = await sessions.get(v)
    if (!session) return v.redirect(`${path}/sign-in`)
    const affiliates = await eligible(session.email)
    if (v.request.method === 'POST') {
      const chosen = (await v.form()).get('affiliateId')
      // Only one of this session's own affiliates: any other id is refused like an unknown one.
      if (!affiliates.some((affiliate) => affiliate.id === chosen)) throw new PageError(404, 'Not found', 'There is no such program for your account.')
      await tokens.choose(session, chosen)
      return v.redirect(path)
    }
    if (affiliates.length === 0) {
      await sessions.end(v)
      return v.page(signInPage(frameOf(v), { problem: 'This account cannot sign in.' }), 403)
    }
    v.signedInAs = affiliates[0]!.email
    const choices: Choice[] = await Promise.all(affiliates.map(async (affiliate) => ({ affiliate, campaign: await api.campaigns.get(affiliate.campaignId) })))
    return v.page(choosePage(frameOf(v), choices))
  }

  async function makeLink(v: Visit): Promise<Response> {
    const sent = await v.form()
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
    return v.redirect(`${path}?notice=link-created#links`)
  }

  async function saveSettings(v: Visit): Promise<Response> {
    const sent = await v.form()
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
    return v.redirect(`${path}?notice=settings-saved#settings`)
  }

  async function signOut(v: Visit): Promise<Response> {
    await v.form()
    await sessions.end(v)
    return v.redirect(`${path}/sign-in?notice=signed-out`)
  }

  async function join(v: Visit): Promise<Response> {
    // A campaign id is a UUID, which needs no decoding; anything else is answered 404.
    const { campaignId = '' } = v.params
    const campaign = isUuid(campaignId)
      ? await api.campaigns.get(campaignId).catch((error: unknown) => {
          if (error instanceof AffiliateError && error.code === 'not_found') return null
          throw error
        })
      : null
    if (!campaign) throw new PageError(404, 'Program not found', 'There is no affiliate program at this address. Check the link you were given.')
    if (v.request.method !== 'POST') return v.page(joinPage(frameOf(v), { campaign }))
    countForm(v)
    const sent = await v.form()
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
    if (Object.keys(errors).length > 0) return v.page(joinPage(frameOf(v), { campaign, values, errors }), 400)
    await offerLink(v, values.email!)
    return v.page(joinedPage(frameOf(v), campaign, values.email!))
  }

  const router = siteRouter(path, 'Go to your dashboard')
  router.open({
    'GET /': (v) => dashboard(v),
    'GET /sign-in': signInForm,
    'POST /sign-in': signIn,
    'GET /sign-in/confirm': confirmForm,
    'POST /sign-in/confirm': confirm,
    'GET /choose': choose,
    'POST /choose': choose,
    'POST /links': makeLink,
    'POST /settings': saveSettings,
    'POST /sign-out': signOut,
    'GET /join/:campaignId': join,
    'POST /join/:campaignId': join,
  })
  return createSite({
    path,
    key: config.key,
    csrfCookie: CSRF_COOKIE,
    sameSite: 'Lax',
    secureCookies: config.secureCookies,
    style,
    body: deps.body,
    notices: NOTICES,
    showRefusals: false,
    onError,
    message: (v, title, text, link) => messagePage(frameOf(v), title, text, link),
    router,
  })
}
