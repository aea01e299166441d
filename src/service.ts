import { createApi, createOperations, type AffiliateApi } from './api/index.js'
import { systemClock, type Clock } from './clock.js'
import { DEFAULT_MAX_BODY_BYTES } from './http/body.js'
import { createHandler } from './http/handler.js'
import type { IdempotencyOptions } from './http/idempotency.js'
import { REPLY } from './http/incoming.js'
import type { KeyStore } from './keys/types.js'
import { createLimiter } from './limiter/limiter.js'
import type { RateLimitOptions } from './limiter/types.js'
import type { Storage } from './storage/types.js'

export interface AffiliateServiceOptions {
  /** Where records live: `memoryStorage()`, `sqlJsStorage()`, or your own (see `Storage`). */
  storage: Storage
  /** Resolves `x-auth-service` keys to principals, e.g. `memoryKeyStore([...])`. */
  keyStore: KeyStore
  /** Where time comes from. @default the system clock */
  clock?: Clock
  /** Largest request body accepted, in bytes; a larger one is refused with 413. @default 102400 */
  maxBodyBytes?: number
  /**
   * Per-key limits, counted per API key id: a token bucket (`capacity` tokens, refilled at
   * `refillPerSecond`) and at most `maxInFlight` requests being answered at once. A request over
   * either gets 429 with `Retry-After`; every keyed response carries `RateLimit-Limit`,
   * `RateLimit-Remaining` and `RateLimit-Reset`. `false` turns limiting off.
   * @default { capacity: 5, refillPerSecond: 5, maxInFlight: 5, store: memoryLimiterStore() }
   * @example
   * rateLimit: { capacity: 20, refillPerSecond: 10, store: memoryLimiterStore({ maxKeys: 50_000 }) }
   */
  rateLimit?: false | RateLimitOptions
  /**
   * `Idempotency-Key` on POST: a retry with the same key and body answers the first answer
   * (`Idempotent-Replayed: true`) and changes nothing. Answers are kept in `storage`.
   * @default { ttlMs: 86_400_000, leaseMs: 60_000 }
   */
  idempotency?: IdempotencyOptions
  /**
   * Called with every unexpected error (the ones answered 500) so you can log it; the response
   * never carries its message or stack. @default logs to `console.error`
   */
  onError?: (error: unknown, request: Request) => void
}

export interface AffiliateService {
  /** Answers a web-standard Request; `export default service` serves it under Bun, Deno and workers. */
  fetch(request: Request): Promise<Response>
  /** The typed programmatic API: the same rules and shapes as HTTP, without HTTP. */
  api: AffiliateApi
}

const logError = (error: unknown) => console.error('affiliate-service: unexpected error', error)

/**
 * Builds the service. It holds no global state: create as many as you like, one per test if you wish.
 *
 * @example
 * const service = createAffiliateService({
 *   storage: memoryStorage(),
 *   keyStore: memoryKeyStore([{ key: 'secret', userId, workspaceIds: [workspaceId] }]),
 * })
 * const response = await service.fetch(new Request('http://localhost/api/v1/health'))
 */
export function createAffiliateService(options: AffiliateServiceOptions): AffiliateService {
  const clock = options.clock ?? systemClock
  const ops = createOperations({ storage: options.storage, clock })
  const onError = options.onError ?? logError
  const handler = createHandler({
    ops,
    storage: options.storage,
    idempotency: options.idempotency ?? {},
    keyStore: options.keyStore,
    clock,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    limiter: createLimiter(options.rateLimit, clock, onError),
    onError,
  })
  const service: AffiliateService = { fetch: handler.fetch, api: createApi(ops) }
  // The answer path without web Request/Response objects, for this package's Node adapter. Not
  // enumerable and symbol-keyed: it is no part of the public shape, and spreading the service or
  // printing it never shows it.
  Object.defineProperty(service, REPLY, { value: handler.reply })
  return service
}
