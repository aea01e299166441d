import { LRUCache } from 'lru-cache'
import { consumeToken, type BucketState } from './token-bucket.js'
import type { LimiterStore } from './types.js'

export interface MemoryLimiterStoreOptions {
  /**
   * The most keys whose buckets are kept. Past it the least recently used bucket is dropped, and
   * that key starts again with a full bucket: a flood of distinct keys costs bounded memory.
   * @default 10000
   */
  maxKeys?: number
}

/** A limiter store in this process's memory. */
export interface MemoryLimiterStore extends LimiterStore {
  /** How many buckets are held now; never more than `maxKeys`. */
  readonly size: number
}

/** @default 10,000 */
export const DEFAULT_MAX_KEYS = 10_000

/**
 * Buckets in an LRU (lru-cache, no TTL and so no timers), in-flight counts in a map that holds a
 * key only while one of its requests is in flight. The counts live apart from the buckets so that
 * evicting a bucket can never forget a request still running: the map's size is bounded by the
 * number of requests being answered, the LRU by `maxKeys`. Each method runs without awaiting, so
 * it is atomic within the process. Its slots live and die with the process that holds them, so
 * they never expire and it answers no `lease`.
 *
 * @example
 * const store = memoryLimiterStore({ maxKeys: 50_000 })
 * createAffiliateService({ storage, keyStore, rateLimit: { store } })
 */
export function memoryLimiterStore(options: MemoryLimiterStoreOptions = {}): MemoryLimiterStore {
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS
  if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError('maxKeys must be a whole number of at least 1')
  // Made with the first request it counts: an LRU of 10,000 allocates its tables up front, which a
  // cold start (or a service that never limits) need not pay.
  let lru: LRUCache<string, BucketState> | undefined
  const buckets = () => (lru ??= new LRUCache<string, BucketState>({ max: maxKeys }))
  const inFlight = new Map<string, number>()
  return {
    get size() {
      return lru?.size ?? 0
    },
    async consume(key, rule, now) {
      const held = inFlight.get(key) ?? 0
      const { decision, bucket } = consumeToken(buckets().get(key), held, rule, now)
      buckets().set(key, bucket)
      if (decision.allowed) inFlight.set(key, held + 1)
      return decision
    },
    async release(key) {
      const held = inFlight.get(key) ?? 0
      if (held > 1) inFlight.set(key, held - 1)
      else inFlight.delete(key)
    },
  }
}
