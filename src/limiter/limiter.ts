import type { Clock } from '../clock.js'
import { AffiliateError } from '../errors.js'
import { memoryLimiterStore } from './memory-store.js'
import { resetSeconds, retryAfterSeconds } from './token-bucket.js'
import type { LimitDecision, RateLimitOptions, RateLimitRule } from './types.js'

export const RATE_LIMIT_MESSAGE = 'Rate limit exceeded. Please retry later.'

/** An admitted request: it holds one in-flight slot of its key until `release`. */
export interface Admission {
  /** `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` for the answer. */
  headers: Record<string, string>
  /**
   * Gives the slot back: when the answer is complete (a streamed answer: once delivered). Calls
   * after the first do nothing; a failing store goes to the limiter's `onError`.
   */
  release(): void
}

/** Decides, per key, whether a request may run. */
export interface Limiter {
  /**
   * Admits one request of `keyId` or throws the 429 AffiliateError (with `Retry-After`). A store
   * that fails to take the slot back later is reported to `onReleaseError`.
   */
  admit(keyId: string, onReleaseError: (error: unknown) => void): Promise<Admission>
}

const unlimited: Admission = { headers: {}, release: () => undefined }

/** `rateLimit: false`: everything is admitted and no header is added. */
export const noLimiter: Limiter = { admit: async () => unlimited }

/** @default 5 tokens, 5 per second, 5 in flight: the limits of the interface. */
export const DEFAULT_RATE_LIMIT = { capacity: 5, refillPerSecond: 5, maxInFlight: 5 } as const

/** Checks the options once, at start, so a bad number fails loudly instead of refusing every request. */
export function resolveRule(options: RateLimitOptions, name = 'rateLimit'): RateLimitRule {
  const capacity = options.capacity ?? DEFAULT_RATE_LIMIT.capacity
  const refillPerSecond = options.refillPerSecond ?? DEFAULT_RATE_LIMIT.refillPerSecond
  const maxInFlight = options.maxInFlight ?? DEFAULT_RATE_LIMIT.maxInFlight
  if (!Number.isInteger(capacity) || capacity < 1) throw new TypeError(`${name}.capacity must be a whole number of at least 1`)
  if (!Number.isFinite(refillPerSecond) || refillPerSecond <= 0) {
    throw new TypeError(`${name}.refillPerSecond must be a finite number above 0`)
  }
  if (maxInFlight !== false && (!Number.isInteger(maxInFlight) || maxInFlight < 1)) {
    throw new TypeError(`${name}.maxInFlight must be a whole number of at least 1, or false`)
  }
  return { capacity, refillPerSecond, maxInFlight: maxInFlight === false ? Infinity : maxInFlight }
}

const headersFor = (rule: RateLimitRule, decision: LimitDecision): Record<string, string> => ({
  'RateLimit-Limit': String(rule.capacity),
  'RateLimit-Remaining': String(decision.remaining),
  'RateLimit-Reset': String(resetSeconds(decision)),
})

/** The 429 of a refused decision, with `Retry-After` and the `RateLimit-*` headers. */
export const tooManyRequests = (rule: RateLimitRule, decision: LimitDecision): AffiliateError =>
  new AffiliateError(429, RATE_LIMIT_MESSAGE, {
    headers: { ...headersFor(rule, decision), 'Retry-After': String(retryAfterSeconds(decision)) },
  })

/**
 * The per-key limiter: one `consume` on the store per request, and one `release` (not awaited)
 * when the request is done with.
 */
export function createLimiter(options: RateLimitOptions | false | undefined, clock: Clock): Limiter {
  if (options === false) return noLimiter
  const rule = resolveRule(options ?? {})
  const store = options?.store ?? memoryLimiterStore()

  return {
    async admit(keyId, onReleaseError) {
      const decision = await store.consume(keyId, rule, clock.now())
      if (!decision.allowed) throw tooManyRequests(rule, decision)
      let released = false
      return {
        headers: headersFor(rule, decision),
        release() {
          if (released) return
          released = true
          try {
            store.release(keyId, decision.lease).catch(onReleaseError)
          } catch (error) {
            onReleaseError(error)
          }
        },
      }
    },
  }
}
