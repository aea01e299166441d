/**
 * One key's limits. The store is handed the rule on every call, so a shared store needs no
 * configuration of its own and every instance of the service applies the same numbers.
 */
export interface RateLimitRule {
  /** Tokens a full bucket holds: the most requests a key can make at once after being idle. */
  capacity: number
  /** Tokens added per second, continuously (5 per second is one every 200 ms). */
  refillPerSecond: number
  /** The most requests of one key admitted and not yet released; `Infinity` for no cap. */
  maxInFlight: number
}

/** What the store answers to `consume`. */
export interface LimitDecision {
  /** True when the request was admitted: one token and one in-flight slot were taken. */
  allowed: boolean
  /** Whole tokens left in the bucket after this decision. */
  remaining: number
  /** Milliseconds until the bucket holds a whole token again; 0 when it holds one now. */
  tokenWaitMs: number
  /** Milliseconds until the bucket is full again; 0 when it is full. */
  fullInMs: number
  /**
   * Names the in-flight slot this admission took, for stores whose slots expire on their own: a
   * store shared by several instances outlives each of them, so the slot of a request whose
   * instance died must come back by itself. The service hands it back to `release`, so a release
   * that comes after its slot expired frees nothing instead of another request's slot.
   * Stores whose slots never expire (the memory store) leave it out.
   * @default undefined
   * @example { allowed: true, remaining: 4, tokenWaitMs: 0, fullInMs: 200, lease: '5f0c…' }
   */
  lease?: string
}

/**
 * Where buckets and in-flight counts live. Implement it on a shared store (Redis, a database) to
 * limit a key across every instance of the service.
 *
 * The contract:
 * - **Atomic.** Each method is one indivisible step on the store (a Lua script in Redis, a
 *   conditional update in SQL), never a read followed by a separate write: two instances that
 *   consume the same key at once must not both take the last token or the last slot.
 * - **A refusal changes nothing.** When `consume` answers `allowed: false` the key keeps every
 *   token and slot it had (the store may record the refill up to `now`, which changes no count).
 * - **Pure arithmetic.** The numbers must be those of `consumeToken` in `token-bucket.ts`; a
 *   store may call it directly. `now` comes from the service's clock: the store never reads time.
 * - **Release pairs with an admission.** The service calls `release` exactly once for every
 *   `consume` that answered `allowed: true`, and never otherwise, with the decision's `lease`.
 *   A count never goes below zero.
 * - **Slots may expire.** A shared store may free a slot after a time of its own choosing (its
 *   instance may have died); it then answers a `lease` so a late `release` frees nothing else.
 * - **Forgetting is allowed.** A store may drop a key it has not seen for a while; the key then
 *   starts again with a full bucket.
 */
export interface LimiterStore {
  /**
   * Refills `key`'s bucket up to `now` (epoch ms); then, if it holds a whole token and fewer than
   * `rule.maxInFlight` requests of `key` are in flight, takes one token and one slot.
   */
  consume(key: string, rule: RateLimitRule, now: number): Promise<LimitDecision>
  /**
   * Gives back one in-flight slot of `key`, taken by an admitting `consume`. `lease` is that
   * decision's `lease`, which the service always passes when there is one; a store that answers
   * leases frees exactly that slot (nothing when it has expired already).
   */
  release(key: string, lease?: string): Promise<void>
}

/**
 * The `rateLimit` option of `createAffiliateService`: limits counted per API key (per `keyId`).
 *
 * @example
 * createAffiliateService({ storage, keyStore, rateLimit: { capacity: 20, refillPerSecond: 10 } })
 */
export interface RateLimitOptions {
  /** Bucket size: requests a key may make in one burst after being idle. A whole number, at least 1. @default 5 */
  capacity?: number
  /** Tokens added back per second (may be fractional, e.g. `0.5` for one every two seconds). @default 5 */
  refillPerSecond?: number
  /** The most requests of one key being answered at once; `false` for no cap. @default 5 */
  maxInFlight?: number | false
  /**
   * Where buckets live. Share one store between services to share their limits.
   * @default memoryLimiterStore() (10,000 keys)
   */
  store?: LimiterStore
}
