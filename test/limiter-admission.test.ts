import { describe, expect, it } from 'vitest'
import { AffiliateError, memoryLimiterStore, type LimiterStore, type RateLimitRule } from '../src/index.js'
import { createLimiter } from '../src/limiter/limiter.js'
import { manualClock } from './helpers.js'

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

const req = (signal?: AbortSignal) => new Request('http://test.local/api/v1/campaigns/list', signal ? { signal } : {})

/** A body of three chunks the test hands over one at a time. */
function chunkedResponse() {
  const encoder = new TextEncoder()
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of ['{"a":', '1', '}']) controller.enqueue(encoder.encode(part))
        controller.close()
      },
    }),
    { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'x-kept': 'yes' } },
  )
}

describe('limiter admission', () => {
  it('makes one store call per request on the way in, with the injected time and the rule, and one release after', async () => {
    const clock = manualClock(5_000)
    const { store, calls, seen } = countingStore()
    const limiter = createLimiter({ store, capacity: 7, refillPerSecond: 2, maxInFlight: 3 }, clock, () => {})
    const admission = await limiter.admit('key-1')
    expect(calls).toEqual(['consume key-1'])
    expect(seen).toEqual([{ rule: { capacity: 7, refillPerSecond: 2, maxInFlight: 3 }, now: 5_000 }])
    const response = await admission.run(req(), async () => new Response('ok'))
    expect(calls).toEqual(['consume key-1'])
    await response.text()
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
    const limiter = createLimiter({ store }, manualClock(), () => {})
    const first = await limiter.admit('k')
    const second = await limiter.admit('k')
    await (await second.run(req(), async () => new Response('b'))).text()
    await (await first.run(req(), async () => new Response('a'))).text()
    expect(released).toEqual([
      ['k', 'lease-2'],
      ['k', 'lease-1'],
    ])
  })

  it('maxInFlight: false leaves only the bucket', async () => {
    const { store, seen } = countingStore()
    const limiter = createLimiter({ store, capacity: 20, maxInFlight: false }, manualClock(), () => {})
    for (let i = 0; i < 20; i++) await limiter.admit('k')
    expect(seen[0]!.rule.maxInFlight).toBe(Infinity)
    await expect(limiter.admit('k')).rejects.toMatchObject({ status: 429 })
  })

  it('throws the one error class on a refusal, with Retry-After and the RateLimit headers', async () => {
    const limiter = createLimiter({ capacity: 1 }, manualClock(), () => {})
    await limiter.admit('k')
    const error = await limiter.admit('k').then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(AffiliateError)
    expect(error).toMatchObject({
      status: 429,
      message: 'Rate limit exceeded. Please retry later.',
      headers: { 'Retry-After': '1', 'RateLimit-Limit': '1', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1' },
    })
  })

  it('releases when the work throws, and passes the error on', async () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({ store }, manualClock(), () => {})
    const admission = await limiter.admit('k')
    await expect(admission.run(req(), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(calls).toEqual(['consume k', 'release k'])
  })

  it('holds the slot through a multi-chunk body until the end is read, keeping status, headers and bytes', async () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({ store }, manualClock(), () => {})
    const response = await (await limiter.admit('k')).run(req(), async () => chunkedResponse())
    expect(response.headers.get('x-kept')).toBe('yes')
    expect(response.headers.get('ratelimit-remaining')).toBe('4')
    const reader = response.body!.getReader()
    const parts: string[] = []
    for (let i = 0; i < 3; i++) {
      const { value } = await reader.read()
      parts.push(new TextDecoder().decode(value))
      expect(calls).toEqual(['consume k'])
    }
    expect(parts.join('')).toBe('{"a":1}')
    expect((await reader.read()).done).toBe(true)
    expect(calls).toEqual(['consume k', 'release k'])
  })

  it('releases when a body fails mid-stream', async () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({ store }, manualClock(), () => {})
    const broken = new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.error(new Error('source failed'))
        },
      }),
    )
    const response = await (await limiter.admit('k')).run(req(), async () => broken)
    await expect(response.text()).rejects.toThrow()
    expect(calls).toEqual(['consume k', 'release k'])
  })

  it('releases at once for a response without a body', async () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({ store }, manualClock(), () => {})
    const response = await (await limiter.admit('k')).run(req(), async () => new Response(null, { status: 204 }))
    expect(response.status).toBe(204)
    expect(response.headers.get('ratelimit-limit')).toBe('5')
    expect(calls).toEqual(['consume k', 'release k'])
  })

  it('releases once however many ways the request ends', async () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({ store }, manualClock(), () => {})
    const controller = new AbortController()
    const response = await (await limiter.admit('k')).run(req(controller.signal), async () => chunkedResponse())
    await response.text()
    controller.abort()
    expect(calls).toEqual(['consume k', 'release k'])
  })

  it('hands a failing release to onError instead of losing it or throwing at the client', async () => {
    let report!: (error: unknown) => void
    const reported = new Promise<unknown>((resolve) => (report = resolve))
    const store: LimiterStore = {
      consume: memoryLimiterStore().consume,
      release: async () => Promise.reject(new Error('store down')),
    }
    const limiter = createLimiter({ store }, manualClock(), (error) => report(error))
    const response = await (await limiter.admit('k')).run(req(), async () => new Response('ok'))
    expect(await response.text()).toBe('ok')
    expect(String(await reported)).toContain('store down')
  })

  it('rateLimit: false admits everything and touches nothing', async () => {
    const limiter = createLimiter(false, manualClock(), () => {})
    const original = new Response('x')
    for (let i = 0; i < 100; i++) await limiter.admit('k')
    expect(await (await limiter.admit('k')).run(req(), async () => original)).toBe(original)
  })
})
