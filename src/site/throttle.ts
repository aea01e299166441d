import type { Clock } from '../clock.js'
import { AffiliateError } from '../errors.js'
import { clientAddressOf } from '../http/client-address.js'
import { addressThrottle } from '../limiter/address-throttle.js'
import { PageError } from './page-error.js'
import type { Visit } from './visit.js'

/**
 * Counts a site's sign-in (or join) forms per client address on a token bucket
 * (`addressThrottle`): the form that finds its address's bucket empty is a 429 page with
 * `Retry-After`, before anything of it is read. A request without a client address (an
 * in-process `fetch`) is not counted, or, with `unknownAddress: 'shared'`, counted in one bucket
 * shared by every such request (the admin token: guesses stay limited where the host passes no
 * address). Null when the limit is off.
 */
export function formThrottle(
  limit: false | { capacity: number; refillPerSecond: number },
  clock: Clock,
  unknownAddress: 'skip' | 'shared',
): ((v: Visit) => void) | null {
  if (!limit) return null
  const throttle = addressThrottle(limit, clock)
  return (v) => {
    const address = clientAddressOf(v.request, v.context) ?? (unknownAddress === 'shared' ? '' : undefined)
    if (address === undefined) return
    try {
      throttle.check(address)
    } catch (error) {
      const after = error instanceof AffiliateError ? error.headers?.['Retry-After'] : undefined
      throw new PageError(
        429,
        'Too many attempts',
        `Too many attempts from your network. Try again in ${after ?? 'a few'} seconds.`,
        undefined,
        after ? { 'retry-after': after } : {},
      )
    }
    throttle.spend(address)
  }
}
