import type { RedisClientOptions } from 'redis'
import type { LimitDecision, LimiterStore, RateLimitRule } from '../../src/limiter/types.js'
import { consumeToken } from '../../src/limiter/token-bucket.js'
import { redactUrl } from '../../src/redact.js'
import { CONSUME, CONSUME_SHA } from './scripts.js'
import { limiterPrefix } from '../deployment.js'

/**
 * A Redis client that sends a command as an array of words: a node-redis client (`createClient()`,
 * v4 or later) is one as it is.
 */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>
}

/** A Redis client that sends a command by name and arguments: an ioredis client is one as it is. */
export interface RedisCallClient {
  call(command: string, ...args: string[]): Promise<unknown>
}

export interface RedisLimiterStoreOptions {
  /**
   * A connected client of yours to send commands through; the store never closes it. Give this or
   * `url`. Any client with `call(command, ...args)` (ioredis) or `sendCommand(args)` (node-redis)
   * will do, and `call` is used when it has both; with a client of your own the `redis` package
   * need not be installed.
   * @example redisLimiterStore({ client: await createClient({ url }).connect() }) // node-redis
   * @example redisLimiterStore({ client: new Redis(url) }) // ioredis
   */
  client?: RedisCommandClient | RedisCallClient
  /**
   * Where Redis is, for a node-redis client the store makes (the `redis` package, loaded only
   * then: install it), connects on first use and closes on `close()`. A first connection that
   * fails is an error at once (`ready()` rejects, naming the url without its password); a
   * connection lost later is retried in the background. Commands fail at once while it is
   * disconnected (no offline queue), so a request is answered 500 instead of waiting for Redis.
   * @example redisLimiterStore({ url: 'redis://127.0.0.1:6379' })
   */
  url?: string
  /**
   * Put before every key the store writes (`<prefix>{<api key id>}:bucket` and `…:leases`; the
   * braces keep a key's two entries on one Redis Cluster slot). Give each deployment its own:
   * `limiterPrefix(schema)` names it after the deployment's PostgreSQL schema, as `npm start` does.
   * @default 'affiliate_service:limit:' (`limiterPrefix()`, the default schema's)
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

/** `limiterPrefix()`: the default schema's prefix, the one `npm start` and the README use. */
export const DEFAULT_PREFIX = limiterPrefix()
/** @default 60,000 ms */
export const DEFAULT_LEASE_MS = 60_000

const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith('NOSCRIPT')

/** A number as Lua's tonumber() reads it back exactly: JavaScript's shortest round-trip form. */
const arg = (value: number): string => String(value)

type Send = (args: string[]) => Promise<unknown>

/** One way to send a command, whichever shape the client has (`call` first: ioredis also has a `sendCommand` of another shape). */
function sender(client: RedisCommandClient | RedisCallClient): Send {
  if (typeof (client as Partial<RedisCallClient>).call === 'function') {
    const callClient = client as RedisCallClient
    return ([command, ...args]) => callClient.call(command!, ...args)
  }
  if (typeof (client as Partial<RedisCommandClient>).sendCommand === 'function') {
    const commandClient = client as RedisCommandClient
    return (args) => commandClient.sendCommand(args)
  }
  throw new TypeError('redisLimiterStore: `client` must have `call(command, ...args)` (ioredis) or `sendCommand(args)` (node-redis)')
}

/** `redis` (node-redis), an optional peer, loaded only when the store makes its own client. */
async function loadNodeRedis(): Promise<typeof import('redis')> {
  try {
    return await import('redis')
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Error(
        'redisLimiterStore: `url` needs the `redis` package (node-redis): `npm i redis`, or pass a client of your own as `client`',
        {
          cause: error,
        },
      )
    }
    throw error
  }
}

/** The node-redis client behind `url`: one failed first connection is an error, later losses are retried. */
async function ownClient(url: string) {
  const { createClient } = await loadNodeRedis()
  let connectedOnce = false
  const options: RedisClientOptions = {
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 5_000,
      // Never connected: give up at once, so start-up fails fast. Connected before: retry, up to every 2 s.
      reconnectStrategy: (retries: number, cause: Error) => (connectedOnce ? Math.min(50 * 2 ** retries, 2_000) : cause),
    },
  }
  const client = createClient(options)
    .on('ready', () => (connectedOnce = true))
    .on('error', () => {
      // Reported by the commands that fail meanwhile; without a listener a lost connection would crash the process.
    })
  return client
}

/**
 * Token buckets and in-flight caps in Redis, so every instance of the service counts one key
 * against one limit. `consume` is one Lua script (EVALSHA, falling back to EVAL when Redis has not
 * seen it, e.g. after a restart or SCRIPT FLUSH): refill, prune expired slots, decide, take a token
 * and a slot, all in one step, with the arithmetic of `consumeToken`. Each admission holds a
 * slot named by a random lease id in a sorted set scored by its expiry, so a dead instance's
 * slots come back after `leaseMs`, and `release(key, lease)` removes exactly its own.
 *
 * `redis` (node-redis) is an optional peer dependency, loaded only for `url`: install it
 * (`npm i redis`) to use `url`. A client of your own (node-redis or ioredis) needs no more.
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

  const url = options.url
  const send: Send | null = options.client ? sender(options.client) : null
  let owned: Awaited<ReturnType<typeof ownClient>> | null = null
  let connecting: Promise<Send> | null = null
  let closed = false
  const refuseClosed = () => {
    if (closed) throw new Error('redisLimiterStore: the store is closed')
  }
  /** The way to send commands, once there is one: the host's client as is, or ours connected. */
  const connect = (): Promise<Send> =>
    send
      ? Promise.resolve(send)
      : (connecting ??= (async (): Promise<Send> => {
          refuseClosed()
          owned ??= await ownClient(url!)
          refuseClosed()
          if (!owned.isOpen) {
            try {
              await owned.connect()
            } catch (error) {
              throw new Error(`Redis at ${redactUrl(url!)} does not answer: ${error instanceof Error ? error.message : String(error)}`, {
                cause: error,
              })
            }
          }
          const client = owned
          return (args) => (closed ? Promise.reject(new Error('redisLimiterStore: the store is closed')) : client.sendCommand(args))
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
    const send = await connect()
    const tail = [String(scriptKeys.length), ...scriptKeys, ...args]
    try {
      return await send(['EVALSHA', CONSUME_SHA, ...tail])
    } catch (error) {
      if (!isNoScript(error)) throw error
      // EVAL runs the script and leaves it cached, so the next EVALSHA finds it.
      return send(['EVAL', CONSUME, ...tail])
    }
  }

  return {
    async consume(key: string, rule: RateLimitRule, now: number): Promise<LimitDecision> {
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
      const send = await connect()
      const [, leases] = keys(key)
      // Without a lease (a caller of the older contract) the slot to expire first is freed.
      await send(lease === undefined ? ['ZPOPMIN', leases] : ['ZREM', leases, lease])
    },
    async ready() {
      const send = await connect()
      await send(['PING'])
    },
    async close() {
      closed = true
      // A connection on its way is let arrive, then closed with the rest.
      await connecting?.catch(() => undefined)
      const client = owned
      if (client?.isOpen) await client.close()
    },
  }
}
