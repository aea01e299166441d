/** What generated publishable keys start with; every publishable key starts with `pk_`. */
export const PUBLISHABLE_PREFIX = 'pk_'

/** True for a key that names itself publishable (`pk_…`): such a key is never a secret key. */
export const isPublishableKey = (key: string): boolean => key.startsWith(PUBLISHABLE_PREFIX)

/**
 * An allowed origin as browsers send it in `Origin` (`https://shop.example.com`, a port when not
 * the default), or `*` for any origin. Throws a TypeError naming the value otherwise: a path, a
 * query or another scheme is a mistake better seen when the key is made.
 */
export function normalizeOrigin(value: unknown): string {
  if (value === '*') return '*'
  let url: URL | undefined
  try {
    url = typeof value === 'string' ? new URL(value) : undefined
  } catch {
    url = undefined
  }
  if (
    !url ||
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    url.pathname !== '/'
  ) {
    throw new TypeError(`allowedOrigins: ${JSON.stringify(value)} is not an origin such as https://shop.example.com (or *)`)
  }
  return url.origin
}

/** Whether a browser at `origin` may read the beacon's answers under `allowed`. */
export const originAllowed = (allowed: readonly string[], origin: string): boolean => allowed.includes('*') || allowed.includes(origin)
