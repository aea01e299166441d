import { createClient } from 'redis'
import { consumeToken } from '../../src/limiter/token-bucket.js'
import type { LimitDecision, LimiterStore, RateLimitRule } from '../../src/limiter/types.js'
import { CONSUME, CONSUME_SHA } from './scripts.js'

/**
 * What the store needs of a Redis client: one way to send a command. A node-redis client
 * (`createClient()`, v4 or later) is one as it is; wrap any other client in a line, e.g. ioredis:
 * `{ sendCommand: (args) => ioredis.call(args[0]!, ...args.slice(1)) }`.
 */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>
}

export interface RedisLimiterStoreOptions {
  /**
   * A connected client to send commands through; the store never closes it. Give this or `url`.
   * @example redisLimiterStore({ client: await createClient({ url }).connect() })
   */
  client?: RedisCommandClient
  /**
   * Where Redis is, for a node-redis client the store makes, connects on first use and closes on
   * `close()`. Commands fail at once while it is disconnected (no offline queue), so a request
   * is answered 500 instead of waiting for Redis to return.
   * @example redisLimiterStore({ url: 'redis://127.0.0.1:6379' })
   */
  url?: string
  /**
   * Put before every key the store writes (`<prefix>{<api key id>}:bucket` and `…:leases`; the
   * braces keep a key's two entries on one Redis Cluster slot). Give each service its own.
   * @default 'affiliate-service:limit:'
   */
  prefix?: string
  /**
   * How long an in-flight slot is held at most, in ms of the service's clock. A slot is given back
   * when its request is done; this only matters when an instance died with requests in flight,
   * whose slots come back after it. Keep it above your slowest response (streamed ones included):
   * a request still running after it no longer counts against the cap.
   * @default 60000
   */
  leaseMs?: number
}

/** The Redis limiter store: the LimiterStore contract, plus start-up and shutdown. */
export interface RedisLimiterStore extends LimiterStore {
  /** Connects (when the store made its client) and checks that Redis answers. Call it at start to fail fast. */
  ready(): Promise<void>
  /** Closes the client if the store made it. */
  close(): Promise<void>
}

export const DEFAULT_PREFIX = 'affiliate-service:limit:'
/** @default 60,000 ms */
export const DEFAULT_LEASE_MS = 60_000

const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith('NOSCRIPT')

/** A number as Lua's tonumber() reads it back exactly: JavaScript's shortest round-trip form. */
const arg = (value: number): string => String(value)

/**
 * Token buckets and in-flight caps in Redis, so every instance of the service counts one key
 * against one limit. `consume` is one Lua script (EVALSHA, falling back to EVAL when Redis has not
 * seen it, e.g. after a restart or SCRIPT FLUSH): refill, prune expired slots, decide, take a token
 * and a slot, all in one step, with the arithmetic of `consumeToken`. Each admission holds a
 * slot named by a random lease id in a sorted set scored by its expiry, so a dead instance's
 * slots come back after `leaseMs`, and `release(key, lease)` removes exactly its own.
 *
 * `redis` (node-redis) is an optional peer dependency: install it (`npm i redis`) to use `url`.
 *
 * @example
 * import { redisLimiterStore } from 'affiliate-service/redis'
 *
 * const store = redisLimiterStore({ url: process.env.REDIS_URL })
 * await store.ready()
 * createAffiliateService({ storage, keyStore, rateLimit: { store } })
 */
export function redisLimiterStore(options: RedisLimiterStoreOptions): RedisLimiterStore {
  if (Boolean(options.client) === Boolean(options.url)) throw new Error('redisLimiterStore: give either `client` or `url`')
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  if (!Number.isInteger(leaseMs) || leaseMs < 1) throw new RangeError('redisLimiterStore: `leaseMs` must be a whole number of at least 1')

  const owned = options.url
    ? createClient({ url: options.url, disableOfflineQueue: true }).on('error', () => {
        // Reported by the commands that fail meanwhile; without a listener a lost connection would crash the process.
      })
    : null
  const client: RedisCommandClient = owned ?? options.client!
  let connecting: Promise<void> | null = null
  const connect = (): Promise<void> =>
    (connecting ??= (async () => {
      if (owned && !owned.isOpen) await owned.connect()
    })().catch((error: unknown) => {
      connecting = null
      throw error
    }))

  const keys = (key: string) => {
    // Braces would end the hash tag early; an API key id never holds them, but a caller's key might.
    const tag = key.replaceAll('{', '(').replaceAll('}', ')')
    return [`${prefix}{${tag}}:bucket`, `${prefix}{${tag}}:leases`] as const
  }

  async function evaluate(scriptKeys: readonly string[], args: string[]): Promise<unknown> {
    const tail = [String(scriptKeys.length), ...scriptKeys, ...args]
    try {
      return await client.sendCommand(['EVALSHA', CONSUME_SHA, ...tail])
    } catch (error) {
      if (!isNoScript(error)) throw error
      // EVAL runs the script and leaves it cached, so the next EVALSHA finds it.
      return client.sendCommand(['EVAL', CONSUME, ...tail])
    }
  }

  return {
    async consume(key: string, rule: RateLimitRule, now: number): Promise<LimitDecision> {
      await connect()
      const lease = crypto.randomUUID()
      const maxInFlight = rule.maxInFlight === Infinity ? -1 : rule.maxInFlight
      const reply = (await evaluate(keys(key), [
        arg(now),
        arg(rule.capacity),
        arg(rule.refillPerSecond),
        arg(maxInFlight),
        lease,
        arg(leaseMs),
      ])) as [number, string, string]
      const allowed = Number(reply[0]) === 1
      // The answer's numbers from the bucket as left, by consumeToken itself: read at its own time
      // it refills nothing, and a full cap of slots keeps it from taking a token.
      const { decision } = consumeToken({ milliTokens: Number(reply[1]), at: Number(reply[2]) }, Infinity, rule, Number(reply[2]))
      return allowed ? { ...decision, allowed, lease } : decision
    },
    async release(key: string, lease?: string): Promise<void> {
      await connect()
      const [, leases] = keys(key)
      // Without a lease (a caller of the older contract) the slot to expire first is freed.
      await client.sendCommand(lease === undefined ? ['ZPOPMIN', leases] : ['ZREM', leases, lease])
    },
    async ready() {
      await connect()
      await client.sendCommand(['PING'])
    },
    async close() {
      if (owned?.isOpen) await owned.close()
    },
  }
}
