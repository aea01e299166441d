/** The options every site has. */
export interface SiteOptionsGiven {
  /** Where the pages are, beside `basePath`. */
  path?: string
  /** The name in every page's header and title. */
  title?: string
  /** Mark cookies `Secure`. @default true when the request's URL is https */
  secureCookies?: boolean
}

/**
 * Checks a site's `path`, `title` and `secureCookies` (of the option `name`, e.g. `portal`) once,
 * at start: the path must lie beside each of `beside` (the API's `basePath`, another site), not in
 * or around it. A wrong one throws a TypeError naming it.
 */
export function resolveSiteOptions(
  name: string,
  options: SiteOptionsGiven,
  defaults: { path: string; title: string },
  beside: readonly { path: string; what: string }[],
): { path: string; title: string; secureCookies: boolean | null } {
  const path = (options.path ?? defaults.path).replace(/\/+$/, '')
  if (!/^\/[A-Za-z0-9._~\-/]*[A-Za-z0-9._~-]$/.test(path))
    throw new TypeError(`${name}.path must be a path starting with "/", such as "${defaults.path}"`)
  const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b === ''
  for (const other of beside)
    if (overlaps(path, other.path) || overlaps(other.path, path)) throw new TypeError(`${name}.path must lie beside ${other.what}`)
  const title = options.title ?? defaults.title
  if (typeof title !== 'string' || title.trim() === '' || title.length > 100)
    throw new TypeError(`${name}.title must be a string of 1 to 100 characters`)
  if (options.secureCookies !== undefined && typeof options.secureCookies !== 'boolean')
    throw new TypeError(`${name}.secureCookies must be a boolean`)
  return { path, title, secureCookies: options.secureCookies ?? null }
}

/** A site's limit of sign-in forms per client address, as given: a token bucket, or `false` for none. */
export type SignInLimitGiven = false | { capacity?: number; refillPerSecond?: number }

/** Checks a site's `signInLimit` (of the option `name`) once, at start; a wrong one throws a TypeError naming it. */
export function resolveSignInLimit(
  name: string,
  given: SignInLimitGiven | undefined,
  defaults: { capacity: number; refillPerSecond: number },
): false | { capacity: number; refillPerSecond: number } {
  if (given === false) return false
  if (given !== undefined && (typeof given !== 'object' || given === null))
    throw new TypeError(`${name}.signInLimit must be false or { capacity, refillPerSecond }`)
  const capacity = given?.capacity ?? defaults.capacity
  const refillPerSecond = given?.refillPerSecond ?? defaults.refillPerSecond
  if (!Number.isInteger(capacity) || capacity < 1) throw new TypeError(`${name}.signInLimit.capacity must be a whole number of at least 1`)
  if (typeof refillPerSecond !== 'number' || !Number.isFinite(refillPerSecond) || refillPerSecond <= 0)
    throw new TypeError(`${name}.signInLimit.refillPerSecond must be a finite number above 0`)
  return { capacity, refillPerSecond }
}
