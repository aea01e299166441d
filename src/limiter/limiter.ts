import type { Clock } from '../clock.js'
import { refusal } from '../errors.js'
import type { Reply } from '../http/respond.js'
import { deliverThenRelease, withHeaders } from './hold-until-delivered.js'
import { memoryLimiterStore } from './memory-store.js'
import { resetSeconds, retryAfterSeconds } from './token-bucket.js'
import type { LimitDecision, RateLimitOptions, RateLimitRule } from './types.js'

export const RATE_LIMIT_MESSAGE = 'Rate limit exceeded. Please retry later.'

/** An admitted request: it holds one in-flight slot of its key until `run`'s response is delivered. */
export interface Admission {
  /**
   * Runs the request's work (which answers errors as responses) and answers its response with the
   * `RateLimit-*` headers. The slot is released exactly once: when `work` throws, when the body
   * has been read to the end or cancelled, or, for a client that aborted (`request.signal`),
   * as soon as the work is done.
   */
  run(request: Request, work: () => Promise<Response>): Promise<Response>
  /**
   * Runs the request's work (which answers errors as replies) and answers its reply with the
   * `RateLimit-*` headers and a `done` that releases the slot: whoever delivers the reply calls it.
   * When `work` throws the slot is released at once. A failing release goes to `onError`.
   */
  hold(work: () => Promise<Reply>, onError: (error: unknown) => void): Promise<Reply>
}

/** Decides, per key, whether a request may run. */
export interface Limiter {
  /** Admits one request of `keyId` or throws the 429 AffiliateError (with `Retry-After`). */
  admit(keyId: string): Promise<Admission>
}

const unlimited: Admission = { run: (_request, work) => work(), hold: (work) => work() }

/** `rateLimit: false`: everything is admitted and no header is added. */
export const noLimiter: Limiter = { admit: async () => unlimited }

/** @default 5 tokens, 5 per second, 5 in flight: the limits of the interface. */
export const DEFAULT_RATE_LIMIT = { capacity: 5, refillPerSecond: 5, maxInFlight: 5 } as const

/** Checks the options once, at start, so a bad number fails loudly instead of refusing every request. */
export function resolveRule(options: RateLimitOptions): RateLimitRule {
  const capacity = options.capacity ?? DEFAULT_RATE_LIMIT.capacity
  const refillPerSecond = options.refillPerSecond ?? DEFAULT_RATE_LIMIT.refillPerSecond
  const maxInFlight = options.maxInFlight ?? DEFAULT_RATE_LIMIT.maxInFlight
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('rateLimit.capacity must be a whole number of at least 1')
  if (!Number.isFinite(refillPerSecond) || refillPerSecond <= 0) {
    throw new RangeError('rateLimit.refillPerSecond must be a finite number above 0')
  }
  if (maxInFlight !== false && (!Number.isInteger(maxInFlight) || maxInFlight < 1)) {
    throw new RangeError('rateLimit.maxInFlight must be a whole number of at least 1, or false')
  }
  return { capacity, refillPerSecond, maxInFlight: maxInFlight === false ? Infinity : maxInFlight }
}

const headersFor = (rule: RateLimitRule, decision: LimitDecision): Record<string, string> => ({
  'RateLimit-Limit': String(rule.capacity),
  'RateLimit-Remaining': String(decision.remaining),
  'RateLimit-Reset': String(resetSeconds(decision)),
})


/**
 * The per-key limiter: one `consume` on the store per request, and one `release` (not awaited)
 * when the request is done with.
 */
export function createLimiter(
  options: RateLimitOptions | false | undefined,
  clock: Clock,
  onError: (error: unknown, request: Request) => void,
): Limiter {
  if (options === false) return noLimiter
  const rule = resolveRule(options ?? {})
  const store = options?.store ?? memoryLimiterStore()

  /** Gives the slot back once, whatever asks again; a failing store goes to `onError`. */
  const releaser = (keyId: string, lease: string | undefined, report: (error: unknown) => void) => {
    let released = false
    return () => {
      if (released) return
      released = true
      try {
        store.release(keyId, lease).catch(report)
      } catch (error) {
        report(error)
      }
    }
  }

  const limit = String(rule.capacity)

  const admitted = (keyId: string, decision: LimitDecision): Admission => ({
    async run(request, work) {
      const { lease } = decision
      const release = releaser(keyId, lease, (error) => onError(error, request))
      let response: Response
      try {
        response = await work()
      } catch (error) {
        release()
        throw error
      }
      return deliverThenRelease(request, response.body, (body) => withHeaders(response, body, headersFor(rule, decision)), release)
    },
    async hold(work, report) {
      const release = releaser(keyId, decision.lease, report)
      let reply: Reply
      try {
        reply = await work()
      } catch (error) {
        release()
        throw error
      }
      // The names as a reply carries them: lower case.
      const headers = {
        ...reply.headers,
        'ratelimit-limit': limit,
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(resetSeconds(decision)),
      }
      return { status: reply.status, headers, body: reply.body, done: release }
    },
  })

  return {
    async admit(keyId) {
      const decision = await store.consume(keyId, rule, clock.now())
      if (!decision.allowed) {
        throw refusal(429, RATE_LIMIT_MESSAGE, undefined, {
          ...headersFor(rule, decision),
          'Retry-After': String(retryAfterSeconds(decision)),
        })
      }
      return admitted(keyId, decision)
    },
  }
}
