import { resolveSignInLimit, resolveSiteOptions, type SignInLimitGiven } from '../site/options.js'

/** Who is signed in to the admin: what `admin.authorize` answers. */
export interface AdminIdentity {
  /** The host's id of the person (recorded on links they create). */
  userId: string
  /** The workspaces they run, or `'*'` for every workspace (the admin of `npm start`). */
  workspaceIds: readonly string[] | '*'
}

/** Options of the admin dashboard (`createAffiliateService({ admin })`). */
export interface AdminOptions {
  /**
   * The host's own auth: who is asking, or null. A null answer shows nothing of the admin: a
   * sign-in page (or a redirect to `signInUrl`). Leave it out when `tokenHash` signs people in.
   * @example authorize: async (request) => { const user = await auth.session(request); return user?.isOwner ? { userId: user.id, workspaceIds: user.workspaceIds } : null }
   */
  authorize?(request: Request): AdminIdentity | null | Promise<AdminIdentity | null>
  /** Where to send a browser `authorize` refuses (the host's sign-in page). Without it, a sign-in page says so. */
  signInUrl?: string
  /**
   * SHA-256 (hex) of an admin token: the admin's own sign-in form takes the token and a session
   * cookie follows, for an admin of every workspace (this is what `npm start` uses).
   */
  tokenHash?: string
  /** Where the pages are, beside `basePath`. @default '/admin' */
  path?: string
  /** The name in every page's header and title. @default 'Affiliate admin' */
  title?: string
  /**
   * Keys the CSRF tokens and the token sign-in's sessions: 32+ characters, the same on every
   * instance. @default a random secret kept in the storage (`settings` record `adminSecret`)
   */
  secret?: string
  /** Mark cookies `Secure`. @default true when the request's URL is https */
  secureCookies?: boolean
  /** How long a token sign-in lasts, in hours. @default 12 */
  sessionHours?: number
  /**
   * Token sign-in forms sent per client address (the adapters supply it), a token bucket: the
   * eleventh within a minute is a 429 page with `Retry-After`. Requests without a client address
   * (an in-process `fetch`) share one bucket. `false` turns it off.
   * @default { capacity: 10, refillPerSecond: 10 / 60 }
   */
  signInLimit?: SignInLimitGiven
}

export interface ResolvedAdminOptions {
  authorize: AdminOptions['authorize'] | null
  signInUrl: string | null
  tokenHash: string | null
  path: string
  title: string
  secret: string | null
  secureCookies: boolean | null
  sessionMs: number
  signInLimit: false | { capacity: number; refillPerSecond: number }
}

/** Checks the options once, at start: a wrong one throws a TypeError naming it. */
export function resolveAdminOptions(options: AdminOptions, basePath: string, portalPath: string | null): ResolvedAdminOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('admin must be an object: { authorize, signInUrl? }')
  if (options.authorize !== undefined && typeof options.authorize !== 'function')
    throw new TypeError('admin.authorize must be a function (request) => { userId, workspaceIds } | null')
  if (options.tokenHash !== undefined && !/^[0-9a-f]{64}$/.test(options.tokenHash))
    throw new TypeError('admin.tokenHash must be the SHA-256 of the admin token, 64 lowercase hex digits')
  if (!options.authorize && !options.tokenHash) throw new TypeError('admin needs authorize (your own auth) or tokenHash (a token sign-in)')
  const beside = [
    { path: basePath, what: `basePath (${basePath || '/'}), not in or around it` },
    ...(portalPath === null ? [] : [{ path: portalPath, what: `the portal (${portalPath})` }]),
  ]
  const site = resolveSiteOptions('admin', options, { path: '/admin', title: 'Affiliate admin' }, beside)
  if (options.signInUrl !== undefined && (typeof options.signInUrl !== 'string' || !/^(https?:\/\/|\/)/.test(options.signInUrl))) {
    throw new TypeError('admin.signInUrl must be an http(s) URL or a path starting with "/"')
  }
  if (options.secret !== undefined && (typeof options.secret !== 'string' || options.secret.length < 32))
    throw new TypeError('admin.secret must be a string of at least 32 characters')
  const hours = options.sessionHours ?? 12
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours <= 0 || hours > 24 * 31)
    throw new TypeError('admin.sessionHours must be a number of hours above 0, at most 744')
  return {
    authorize: options.authorize ?? null,
    signInUrl: options.signInUrl ?? null,
    tokenHash: options.tokenHash ?? null,
    ...site,
    secret: options.secret ?? null,
    sessionMs: Math.round(hours * 3_600_000),
    signInLimit: resolveSignInLimit('admin', options.signInLimit, { capacity: 10, refillPerSecond: 10 / 60 }),
  }
}
