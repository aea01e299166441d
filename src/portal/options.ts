import { resolveSignInLimit, resolveSiteOptions, type SignInLimitGiven } from '../site/options.js'
import { THEME_DEFAULTS } from '../site/styles.js'

/** The theme variables a host may set (see docs/portal.md for what each colours). */
export type PortalThemeVariable = keyof typeof THEME_DEFAULTS

/** Options of the affiliate portal (`createAffiliateService({ portal })`). */
export interface PortalOptions {
  /**
   * Keys the hashes of sign-in links, sessions and CSRF tokens: at least 32 characters, kept
   * secret, the same on every instance. Changing it signs everyone out and voids links sent.
   */
  secret: string
  /**
   * Sends `url`, a single-use sign-in link valid 15 minutes, to `email`. Called only for addresses
   * of affiliates that may sign in, and not awaited: the page answers the same, as fast, either way.
   * A rejection is passed to the service's `onError`.
   * @example sendSignInLink: (email, url) => mailer.send({ to: email, subject: 'Your sign-in link', text: url })
   */
  sendSignInLink(email: string, url: string): void | Promise<void>
  /**
   * Sends a plain-text notice to `email`. The portal calls it when an affiliate changes their
   * payout e-mail: the old payout e-mail and the account's e-mail are told (what changed, when,
   * and where to sign in), so a change the owner did not make does not go unnoticed. Not awaited;
   * a rejection is passed to the service's `onError`.
   * @example sendNotice: (email, subject, text) => mailer.send({ to: email, subject, text })
   */
  sendNotice(email: string, subject: string, text: string): void | Promise<void>
  /** Where the pages are, beside `basePath`. @default '/portal' */
  path?: string
  /**
   * The origin the service is reached at from outside, e.g. `https://partners.example.com`.
   * Required: e-mailed sign-in links and the referral links the dashboard shows
   * (`<publicUrl><basePath>/r/<code>`) are built from it alone, never from the request's `Host`,
   * which a client chooses. Only its origin is used.
   */
  publicUrl: string
  /** The name in every page's header and title. @default 'Affiliate portal' */
  title?: string
  /**
   * CSS custom properties overriding the defaults, e.g. `{ '--portal-accent': '#7a1fa2' }`.
   * Values may not hold `;`, `{`, `}`, `<`, `>` or `\`.
   */
  theme?: Partial<Record<PortalThemeVariable, string>>
  /**
   * Sign-in and join forms sent per client address (the adapters supply it): a token bucket.
   * Calls without a client address (in-process `fetch`) are not counted. `false` turns it off.
   * @default { capacity: 5, refillPerSecond: 1 / 60 }
   */
  signInLimit?: SignInLimitGiven
  /** How long a session lasts, in days. @default 7 */
  sessionDays?: number
  /** Mark cookies `Secure`. @default true when the request's URL is https */
  secureCookies?: boolean
}

export interface ResolvedPortalOptions {
  key: Uint8Array
  sendSignInLink: PortalOptions['sendSignInLink']
  sendNotice: PortalOptions['sendNotice']
  path: string
  publicUrl: string
  title: string
  theme: string
  signInLimit: false | { capacity: number; refillPerSecond: number }
  sessionMs: number
  secureCookies: boolean | null
}

const SAFE_VALUE = /^[^;{}<>\\]{1,200}$/

/** Checks the options once, at start: a wrong one throws a TypeError naming it. */
export function resolvePortalOptions(options: PortalOptions, basePath: string): ResolvedPortalOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('portal must be an object: { secret, publicUrl, sendSignInLink, sendNotice }')
  if (typeof options.secret !== 'string' || options.secret.length < 32)
    throw new TypeError('portal.secret must be a string of at least 32 characters')
  if (typeof options.sendSignInLink !== 'function') throw new TypeError('portal.sendSignInLink must be a function (email, url) => void')
  if (typeof options.sendNotice !== 'function') throw new TypeError('portal.sendNotice must be a function (email, subject, text) => void')
  const site = resolveSiteOptions('portal', options, { path: '/portal', title: 'Affiliate portal' }, [
    { path: basePath, what: `basePath (${basePath || '/'}), not in or around it` },
  ])
  let url: URL | null = null
  try {
    if (typeof options.publicUrl === 'string') url = new URL(options.publicUrl)
  } catch {}
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError(
      `portal.publicUrl ${options.publicUrl === undefined ? 'is required' : 'must be'}: the http(s) origin the service is reached at, such as https://partners.example.com (sign-in links are built from it, never from the request's Host)`,
    )
  }
  const publicUrl = url.origin
  const theme = Object.entries(options.theme ?? {}).map(([name, value]) => {
    if (!(name in THEME_DEFAULTS))
      throw new TypeError(`portal.theme: unknown variable ${name}; known: ${Object.keys(THEME_DEFAULTS).join(', ')}`)
    if (typeof value !== 'string' || !SAFE_VALUE.test(value))
      throw new TypeError(`portal.theme: ${name} must be a CSS value without ; { } < > or \\`)
    return `${name}:${value}`
  })
  const signInLimit = resolveSignInLimit('portal', options.signInLimit, { capacity: 5, refillPerSecond: 1 / 60 })
  const days = options.sessionDays ?? 7
  if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0 || days > 366)
    throw new TypeError('portal.sessionDays must be a number of days above 0, at most 366')
  return {
    key: new TextEncoder().encode(options.secret),
    sendSignInLink: options.sendSignInLink,
    sendNotice: options.sendNotice,
    ...site,
    publicUrl,
    theme: theme.length ? `:root{${theme.join(';')}}` : '',
    signInLimit,
    sessionMs: Math.round(days * 86_400_000),
  }
}
