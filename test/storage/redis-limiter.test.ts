// The Redis limiter store: the same decisions as the memory store for the same schedule, slots
// that expire with a dead instance, releases that free only their own slot, one bucket shared
// across connections, and the script's EVAL fallback.
import fc from 'fast-check'
import type { RedisClientType } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisLimiterStore, type RedisLimiterStoreOptions } from '../../adapters/redis.js'
import { CONSUME_SHA } from '../../adapters/redis/scripts.js'
import { memoryLimiterStore, type LimitDecision, type RateLimitRule } from '../../src/index.js'
import { deleteKeys, needs, REDIS_VAR, redisUrl, testRedis, uniqueName } from '../support/services.js'

const T0 = 1_767_225_600_000

const withoutLease = ({ lease: _lease, ...decision }: LimitDecision) => decision

describe.skipIf(!redisUrl)(needs('Redis limiter store', REDIS_VAR), () => {
  const prefix = `${uniqueName('limit')}:`
  const clients: RedisClientType[] = []
  let client: RedisClientType
  let keys = 0
  const freshKey = () => `key-${++keys}`
  const store = (options: Omit<RedisLimiterStoreOptions, 'client' | 'url'> = {}) => redisLimiterStore({ client, prefix, ...options })

  beforeAll(async () => {
    client = await testRedis()
    clients.push(client)
  })
  afterAll(async () => {
    await deleteKeys(client, prefix)
    await Promise.all(clients.map((each) => each.close()))
  })

  it('decides exactly as the memory store for the same random schedule of consumes and releases', async () => {
    const redis = store({ leaseMs: 10 ** 9 })
    const rule = fc.record({
      capacity: fc.integer({ min: 1, max: 8 }),
      refillPerSecond: fc.oneof(fc.constantFrom(5, 0.5, 1000 / 3, 2.5), fc.double({ min: 0.01, max: 50, noNaN: true })),
      maxInFlight: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(Infinity)),
    })
    const step = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('consume' as const), ms: fc.integer({ min: 0, max: 450 }) }) },
      // Now and then the clock steps back: nothing is refilled and the later mark is kept.
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('consume' as const), ms: fc.integer({ min: -300, max: -1 }) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
    )
    await fc.assert(
      fc.asyncProperty(rule, fc.array(step, { minLength: 1, maxLength: 60 }), async (rule: RateLimitRule, steps) => {
        const key = freshKey()
        const memory = memoryLimiterStore()
        const held: string[] = []
        let now = T0
        for (const action of steps) {
          if (action.kind === 'release') {
            if (held.length === 0) continue
            const [lease] = held.splice(action.pick % held.length, 1)
            await memory.release(key)
            await redis.release(key, lease)
            continue
          }
          now += action.ms
          const expected = await memory.consume(key, rule, now)
          const decided = await redis.consume(key, rule, now)
          expect(withoutLease(decided)).toEqual(expected)
          if (decided.allowed) {
            expect(decided.lease).toEqual(expect.any(String))
            held.push(decided.lease!)
          } else expect(decided.lease).toBeUndefined()
        }
      }),
      { numRuns: 60 },
    )
  })

  it('a slot its instance never gave back comes back after leaseMs, and a late release then frees nothing else', async () => {
    const limiter = store({ leaseMs: 1_000 })
    const key = freshKey()
    const rule: RateLimitRule = { capacity: 10, refillPerSecond: 10, maxInFlight: 1 }
    const first = await limiter.consume(key, rule, T0)
    expect(first.allowed).toBe(true)
    expect((await limiter.consume(key, rule, T0 + 999)).allowed).toBe(false)
    const second = await limiter.consume(key, rule, T0 + 1_000)
    expect(second.allowed).toBe(true)
    // The first request finishes after all: its slot is gone, and the second keeps the only one.
    await limiter.release(key, first.lease)
    expect((await limiter.consume(key, rule, T0 + 1_001)).allowed).toBe(false)
    await limiter.release(key, second.lease)
    expect((await limiter.consume(key, rule, T0 + 1_002)).allowed).toBe(true)
  })

  it('release without a lease frees the slot that expires first, and never goes below zero', async () => {
    const limiter = store()
    const key = freshKey()
    const rule: RateLimitRule = { capacity: 10, refillPerSecond: 10, maxInFlight: 3 }
    const leases = []
    for (let i = 0; i < 3; i++) leases.push((await limiter.consume(key, rule, T0 + i)).lease)
    await limiter.release(key)
    expect(await client.zRange(`${prefix}{${key}}:leases`, 0, -1)).toEqual([leases[1], leases[2]])
    for (let i = 0; i < 5; i++) await limiter.release(key)
    const admitted = []
    for (let i = 0; i < 4; i++) admitted.push((await limiter.consume(key, rule, T0 + 10)).allowed)
    expect(admitted).toEqual([true, true, true, false])
  })

  it('two stores on two connections share one bucket: 60 consumes at once admit exactly the capacity', async () => {
    const other = await testRedis()
    clients.push(other)
    const stores = [store(), redisLimiterStore({ client: other, prefix })]
    const key = freshKey()
    const rule: RateLimitRule = { capacity: 10, refillPerSecond: 0.001, maxInFlight: Infinity }
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 2]!.consume(key, rule, T0 + i)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
    expect(new Set(decisions.flatMap((d) => (d.lease ? [d.lease] : []))).size).toBe(10)
  })

  it('falls back to EVAL when Redis has forgotten the script, which leaves it loaded again', async () => {
    const limiter = store()
    await client.scriptFlush()
    expect(await client.scriptExists(CONSUME_SHA)).toEqual([0])
    const rule: RateLimitRule = { capacity: 2, refillPerSecond: 1, maxInFlight: 2 }
    expect((await limiter.consume(freshKey(), rule, T0)).allowed).toBe(true)
    expect(await client.scriptExists(CONSUME_SHA)).toEqual([1])
  })

  it('keeps a key in two entries under the prefix, on one hash slot, both expiring', async () => {
    const limiter = store({ leaseMs: 5_000 })
    const key = freshKey()
    await limiter.consume(key, { capacity: 5, refillPerSecond: 5, maxInFlight: 5 }, T0)
    for (const suffix of ['bucket', 'leases']) {
      const ttl = await client.pTTL(`${prefix}{${key}}:${suffix}`)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(65_000)
    }
  })

  it('made from a url, it owns its client: ready() checks Redis, close() closes it', async () => {
    const limiter = redisLimiterStore({ url: redisUrl!, prefix })
    await limiter.ready()
    expect((await limiter.consume(freshKey(), { capacity: 1, refillPerSecond: 1, maxInFlight: 1 }, T0)).allowed).toBe(true)
    await limiter.close()
    await expect(limiter.consume(freshKey(), { capacity: 1, refillPerSecond: 1, maxInFlight: 1 }, T0)).rejects.toThrow()
    expect(() => redisLimiterStore({} as never)).toThrow(/either `client` or `url`/)
  })
})
