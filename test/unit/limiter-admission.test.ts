import { describe, expect, it } from 'vitest'
import { AffiliateError, memoryLimiterStore, type LimiterStore, type RateLimitRule } from '../../src/index.js'
import { createLimiter } from '../../src/limiter/limiter.js'
import { manualClock } from '../support/helpers.js'

/** A memory store that records every call it gets. */
function countingStore() {
  const inner = memoryLimiterStore()
  const calls: string[] = []
  const seen: { rule: RateLimitRule; now: number }[] = []
  const store: LimiterStore = {
    consume(key, rule, now) {
      calls.push(`consume ${key}`)
      seen.push({ rule, now })
      return inner.consume(key, rule, now)
    },
    release(key) {
      calls.push(`release ${key}`)
      return inner.release(key)
    },
  }
  return { store, calls, seen }
}

const noReport = () => {}

describe('limiter admission', () => {
  it('makes one store call per request on the way in, with the injected time and the rule, and one release after', async () => {
    const clock = manualClock(5_000)
    const { store, calls, seen } = countingStore()
    const limiter = createLimiter({ store, capacity: 7, refillPerSecond: 2, maxInFlight: 3 }, clock)
    const admission = await limiter.admit('key-1', noReport)
    expect(calls).toEqual(['consume key-1'])
    expect(seen).toEqual([{ rule: { capacity: 7, refillPerSecond: 2, maxInFlight: 3 }, now: 5_000 }])
    expect(admission.headers).toEqual({ 'RateLimit-Limit': '7', 'RateLimit-Remaining': '6', 'RateLimit-Reset': '1' })
    admission.release()
    expect(calls).toEqual(['consume key-1', 'release key-1'])
  })

  it('hands the lease of each admission back to release, so an expiring store frees exactly that slot', async () => {
    const inner = memoryLimiterStore()
    const released: [string, string | undefined][] = []
    let issued = 0
    const store: LimiterStore = {
      async consume(key, rule, now) {
        const decision = await inner.consume(key, rule, now)
        return decision.allowed ? { ...decision, lease: `lease-${++issued}` } : decision
      },
      async release(key, lease) {
        released.push([key, lease])
        return inner.release(key)
      },
    }
    const limiter = createLimiter({ store }, manualClock())
    const first = await limiter.admit('k', noReport)
    const second = await limiter.admit('k', noReport)
    second.release()
    first.release()
    expect(released).toEqual([
      ['k', 'lease-2'],
      ['k', 'lease-1'],
    ])
  })

  it('maxInFlight: false leaves only the bucket', async () => {
    const { store, seen } = countingStore()
    const limiter = createLimiter({ store, capacity: 20, maxInFlight: false }, manualClock())
    for (let i = 0; i < 20; i++) await limiter.admit('k', noReport)
    expect(seen[0]!.rule.maxInFlight).toBe(Infinity)
    await expect(limiter.admit('k', noReport)).rejects.toMatchObject({ status: 429 })
  })

  it('throws the one error class on a refusal, with Retry-After and the RateLimit headers', async () => {
    const limiter = createLimiter({ capacity: 1 }, manualClock())
    await limiter.admit('k', noReport)
    const error = await limiter.admit('k', noReport).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(AffiliateError)
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limited',
      message: 'Rate limit exceeded. Please retry later.',
      headers: { 'Retry-After': '1', 'RateLimit-Limit': '1', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1' },
    })
  })

  it('releases once however often release is called', async () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({ store }, manualClock())
    const admission = await limiter.admit('k', noReport)
    admission.release()
    admission.release()
    expect(calls).toEqual(['consume k', 'release k'])
  })

  it('hands a failing release to onError instead of losing it or throwing at the client', async () => {
    let report!: (error: unknown) => void
    const reported = new Promise<unknown>((resolve) => (report = resolve))
    const store: LimiterStore = {
      consume: memoryLimiterStore().consume,
      release: async () => Promise.reject(new Error('store down')),
    }
    const limiter = createLimiter({ store }, manualClock())
    expect(() => limiter.admit('k', report).then((admission) => admission.release())).not.toThrow()
    expect(String(await reported)).toContain('store down')
  })

  it('rateLimit: false admits everything and touches nothing', async () => {
    const limiter = createLimiter(false, manualClock())
    for (let i = 0; i < 100; i++) await limiter.admit('k', noReport)
    expect((await limiter.admit('k', noReport)).headers).toEqual({})
  })
})
