import { LRUCache } from 'lru-cache'
import type { Clock } from '../clock.js'
import { tooManyRequests } from './limiter.js'
import { consumeToken, type BucketState } from './token-bucket.js'
import type { RateLimitRule } from './types.js'

/** A token bucket per client address, for events that must not come fast from one address. */
export interface AddressThrottle {
  /** Throws the 429 (with `Retry-After`) when `address` has no token left; takes nothing. */
  check(address: string): void
  /** Takes one token of `address`. */
  spend(address: string): void
}

/** @default 10,000 addresses; past it the least recently seen starts again with a full bucket. */
const MAX_ADDRESSES = 10_000

/**
 * Buckets per address in this process's memory (an LRU, so a flood of addresses costs bounded
 * memory). `check` and `spend` are apart so that only what failed is counted (a wrong API key),
 * while every request from an address that is out of tokens is refused before any work.
 */
export function addressThrottle(rule: Pick<RateLimitRule, 'capacity' | 'refillPerSecond'>, clock: Clock): AddressThrottle {
  const full: RateLimitRule = { ...rule, maxInFlight: Infinity }
  // Made with the first address it counts (an LRU allocates its tables up front), not at start.
  let lru: LRUCache<string, BucketState> | undefined
  const buckets = () => (lru ??= new LRUCache<string, BucketState>({ max: MAX_ADDRESSES }))
  return {
    check(address) {
      const { decision } = consumeToken(buckets().get(address), 0, full, clock.now())
      if (!decision.allowed) throw tooManyRequests(full, decision)
    },
    spend(address) {
      buckets().set(address, consumeToken(buckets().get(address), 0, full, clock.now()).bucket)
    },
  }
}
