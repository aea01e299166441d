import { describe, expect, it } from 'vitest'
import {
  createAffiliateService,
  memoryKeyStore,
  memoryLimiterStore,
  memoryStorage,
  type LimiterStore,
  type Storage,
} from '../../src/index.js'
import { campaignInput, KEY_A, KEY_B, manualClock, setup, USER_A, WS_A } from '../support/helpers.js'

const URL_BASE = 'http://test.local/api/v1'
const RATE_LIMITED = { status: 429, code: 'rate_limited', message: 'Rate limit exceeded. Please retry later.' }

/** A request with key A unless told otherwise. */
const request = (path: string, init: RequestInit & { key?: string } = {}) =>
  new Request(`${URL_BASE}${path}`, { ...init, headers: { 'x-auth-service': init.key ?? KEY_A, ...init.headers } })

/** A promise with its resolve in hand. */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * Memory storage whose transactions wait at a gate the test opens by hand, and which can announce
 * when a given number of transactions have reached the gate.
 */
function gatedStorage() {
  const inner = memoryStorage()
  const gate = deferred()
  let arrived = 0
  const waiters: { count: number; resolve: () => void }[] = []
  const storage: Storage = {
    async transaction(work, options) {
      arrived++
      for (const w of waiters) if (arrived >= w.count) w.resolve()
      await gate.promise
      return inner.transaction(work, options)
    },
  }
  return {
    storage,
    open: gate.resolve,
    arrived: () => arrived,
    /** Resolves once `count` transactions are waiting at the gate. */
    reached(count: number): Promise<void> {
      if (arrived >= count) return Promise.resolve()
      const w = deferred()
      waiters.push({ count, resolve: w.resolve })
      return w.promise
    },
  }
}

const rateHeaders = (headers: Headers) => ({
  limit: headers.get('ratelimit-limit'),
  remaining: headers.get('ratelimit-remaining'),
  reset: headers.get('ratelimit-reset'),
})

describe('rate limits over HTTP', () => {
  it('is on by default with 5 tokens: the sixth request at one instant is 429 with the exact body and Retry-After', async () => {
    const clock = manualClock()
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      clock,
    })
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      const response = await service.fetch(request('/campaigns/list'))
      await response.text()
      statuses.push(response.status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200])
    const refused = await service.fetch(request('/campaigns/list'))
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await refused.text()).toBe(JSON.stringify(RATE_LIMITED))
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(rateHeaders(refused.headers)).toEqual({ limit: '5', remaining: '0', reset: '1' })
  })

  it('refills one request per 200 ms of the injected clock', async () => {
    const { call, clock } = setup({ rateLimit: {} })
    for (let i = 0; i < 5; i++) expect((await call('GET', '/campaigns/list')).status).toBe(200)
    expect((await call('GET', '/campaigns/list')).status).toBe(429)
    clock.advance(199)
    expect((await call('GET', '/campaigns/list')).status).toBe(429)
    clock.advance(1)
    expect((await call('GET', '/campaigns/list')).status).toBe(200)
    expect((await call('GET', '/campaigns/list')).status).toBe(429)
    clock.advance(10_000)
    const burst = []
    for (let i = 0; i < 6; i++) burst.push((await call('GET', '/campaigns/list')).status)
    expect(burst).toEqual([200, 200, 200, 200, 200, 429])
  })

  it('counts RateLimit-Remaining down and answers RateLimit-Reset as seconds until full', async () => {
    const { call, clock } = setup({ rateLimit: { capacity: 3, refillPerSecond: 1 } })
    const seen = []
    for (let i = 0; i < 4; i++) seen.push(rateHeaders((await call('GET', '/campaigns/list')).headers))
    expect(seen).toEqual([
      { limit: '3', remaining: '2', reset: '1' },
      { limit: '3', remaining: '1', reset: '2' },
      { limit: '3', remaining: '0', reset: '3' },
      { limit: '3', remaining: '0', reset: '3' },
    ])
    clock.advance(1_500)
    const after = await call('GET', '/campaigns/list')
    expect(after.status).toBe(200)
    // 1.5 tokens came back, one was taken: 0.5 left, 2.5 seconds to full.
    expect(rateHeaders(after.headers)).toEqual({ limit: '3', remaining: '0', reset: '3' })
  })

  it('answers Retry-After for the refill: 2 seconds at one token per 2 seconds, and waiting that long is enough', async () => {
    const { call, clock } = setup({ rateLimit: { capacity: 1, refillPerSecond: 0.5 } })
    expect((await call('GET', '/campaigns/list')).status).toBe(200)
    clock.advance(300)
    const refused = await call('GET', '/campaigns/list')
    expect(refused.status).toBe(429)
    // 1.7 s to the next token, rounded up.
    expect(refused.headers.get('retry-after')).toBe('2')
    clock.advance(1_699)
    expect((await call('GET', '/campaigns/list')).status).toBe(429)
    clock.advance(1)
    expect((await call('GET', '/campaigns/list')).status).toBe(200)
  })

  it('puts the headers on every keyed answer, errors included, and on neither 401 nor health', async () => {
    const { call } = setup({ rateLimit: { capacity: 100 } })
    const ok = await call('POST', '/campaigns', { body: campaignInput() })
    expect(ok.status).toBe(201)
    const invalid = await call('POST', '/campaigns', { body: { campaignName: 1 } })
    expect(invalid.status).toBe(400)
    const missingQuery = await call('GET', '/campaigns')
    expect(missingQuery.status).toBe(400)
    const notFound = await call('GET', '/campaigns?campaignId=99999999-9999-4999-8999-999999999999')
    expect(notFound.status).toBe(404)
    const badJson = await call('POST', '/campaigns', { body: '{' })
    expect(badJson.status).toBe(400)
    const forbidden = await call('POST', '/campaigns', { body: campaignInput({ workspaceId: '33333333-3333-4333-8333-333333333333' }) })
    expect(forbidden.status).toBe(403)
    const remaining = [ok, invalid, missingQuery, notFound, badJson, forbidden].map((r) => rateHeaders(r.headers))
    expect(remaining.map((h) => h.remaining)).toEqual(['99', '98', '97', '96', '95', '94'])
    for (const h of remaining) expect(h.limit).toBe('100')

    const unauthorized = await call('GET', '/campaigns/list', { key: 'not-a-key' })
    expect(unauthorized.status).toBe(401)
    expect(rateHeaders(unauthorized.headers)).toEqual({ limit: null, remaining: null, reset: null })
    const health = await call('GET', '/health', { key: null })
    expect(health.status).toBe(200)
    expect(rateHeaders(health.headers)).toEqual({ limit: null, remaining: null, reset: null })
  })

  it('never limits health, and a 401 spends nobody’s tokens', async () => {
    const { call } = setup({ rateLimit: { capacity: 1 } })
    for (let i = 0; i < 20; i++) expect((await call('GET', '/health', { key: null })).status).toBe(200)
    for (let i = 0; i < 20; i++) expect((await call('GET', '/campaigns/list', { key: 'wrong' })).status).toBe(401)
    expect((await call('GET', '/campaigns/list')).status).toBe(200)
  })

  it('counts per key: key B is not slowed by key A', async () => {
    const { call } = setup({ rateLimit: {} })
    for (let i = 0; i < 6; i++) await call('GET', '/campaigns/list')
    expect((await call('GET', '/campaigns/list')).status).toBe(429)
    const b = await call('GET', '/campaigns/list', { key: KEY_B })
    expect(b.status).toBe(200)
    expect(b.headers.get('ratelimit-remaining')).toBe('4')
  })

  it('a refused request spends nothing: hammering while empty does not push back the next token', async () => {
    const { call, clock } = setup({ rateLimit: {} })
    for (let i = 0; i < 5; i++) await call('GET', '/campaigns/list')
    for (let i = 0; i < 10; i++) {
      expect((await call('GET', '/campaigns/list')).status).toBe(429)
      clock.advance(19)
    }
    expect((await call('GET', '/campaigns/list')).status).toBe(429)
    // 200 ms after the burst the token is there, however many 429s came between.
    clock.advance(10)
    expect((await call('GET', '/campaigns/list')).status).toBe(200)
  })

  it('rateLimit: false turns limiting off: no 429 and no RateLimit headers', async () => {
    const { call } = setup({ rateLimit: false })
    for (let i = 0; i < 50; i++) {
      const response = await call('GET', '/campaigns/list')
      expect(response.status).toBe(200)
      expect(rateHeaders(response.headers)).toEqual({ limit: null, remaining: null, reset: null })
    }
  })

  it('refuses bad options when the service is built', () => {
    const build = (rateLimit: object) => () => createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), rateLimit })
    expect(build({ capacity: 0 })).toThrow(new TypeError('rateLimit.capacity must be a whole number of at least 1'))
    expect(build({ capacity: 2.5 })).toThrow(TypeError)
    expect(build({ refillPerSecond: 0 })).toThrow(new TypeError('rateLimit.refillPerSecond must be a finite number above 0'))
    expect(build({ refillPerSecond: Infinity })).toThrow(TypeError)
    expect(build({ maxInFlight: 0 })).toThrow(new TypeError('rateLimit.maxInFlight must be a whole number of at least 1, or false'))
    expect(build({ maxInFlight: false })).not.toThrow()
  })
})

describe('in-flight cap over HTTP', () => {
  it('admits exactly 5 of 10 concurrent slow requests; the other 5 get 429 with Retry-After 1', async () => {
    const gated = gatedStorage()
    const { service } = setup({ storage: gated.storage, rateLimit: { capacity: 100, refillPerSecond: 100 } })
    const answered: Response[] = []
    const fiveAnswered = deferred()
    const pending = Array.from({ length: 10 }, () =>
      service.fetch(request('/campaigns/list')).then((response) => {
        if (answered.push(response) === 5) fiveAnswered.resolve()
        return response
      }),
    )
    // While five requests wait inside the storage, the other five are answered.
    await Promise.all([gated.reached(5), fiveAnswered.promise])
    expect(gated.arrived()).toBe(5)
    expect(answered.map((r) => r.status)).toEqual([429, 429, 429, 429, 429])
    for (const r of answered) {
      expect(r.headers.get('retry-after')).toBe('1')
      // The cap refused them, not the bucket: 95 tokens are left and they took none.
      expect(r.headers.get('ratelimit-remaining')).toBe('95')
      expect(await r.json()).toEqual(RATE_LIMITED)
    }
    gated.open()
    const responses = await Promise.all(pending)
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429])
    expect(gated.arrived()).toBe(5)
  })

  it('with the default limits, 10 concurrent slow requests admit exactly 5', async () => {
    const gated = gatedStorage()
    const { service } = setup({ storage: gated.storage, rateLimit: {} })
    const pending = Array.from({ length: 10 }, () => service.fetch(request('/campaigns/list')))
    await gated.reached(5)
    gated.open()
    const responses = await Promise.all(pending)
    expect(responses.filter((r) => r.status === 200)).toHaveLength(5)
    expect(responses.filter((r) => r.status === 429)).toHaveLength(5)
    expect(gated.arrived()).toBe(5)
  })

  it('the cap is per key', async () => {
    const gated = gatedStorage()
    const { service } = setup({ storage: gated.storage, rateLimit: { capacity: 100, maxInFlight: 1 } })
    const a = service.fetch(request('/campaigns/list'))
    const b = service.fetch(request('/campaigns/list', { key: KEY_B }))
    await gated.reached(2)
    expect((await service.fetch(request('/campaigns/list'))).status).toBe(429)
    gated.open()
    expect([(await a).status, (await b).status]).toEqual([200, 200])
  })
})

describe('the in-flight slot is released on every path', () => {
  /** One slot, plenty of tokens: a probe is 429 exactly while the slot is held. */
  const oneSlot = { capacity: 1000, refillPerSecond: 1000, maxInFlight: 1 }

  /** True when the key's one slot is free. An admitted probe reads its body, so it gives the slot back. */
  async function slotFree(service: { fetch(r: Request): Promise<Response> }): Promise<boolean> {
    const probe = await service.fetch(request('/campaigns/list'))
    await probe.text()
    return probe.status !== 429
  }

  it('on success, as soon as the answer is complete: a caller that never reads the body holds nothing', async () => {
    const { service } = setup({ rateLimit: oneSlot })
    const response = await service.fetch(request('/campaigns/list'))
    expect(response.status).toBe(200)
    expect(await slotFree(service)).toBe(true)
    expect(await response.json()).toMatchObject({ status: 200 })
  })

  it('lets an in-process caller that checks only the status make more than five calls in a row', async () => {
    const { service } = setup({ rateLimit: { capacity: 1000, refillPerSecond: 1000 } })
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) statuses.push((await service.fetch(request('/campaigns/list'))).status)
    expect(statuses).toEqual(Array(20).fill(200))
  })

  it('on a validation failure, a bad body and an unsupported content type', async () => {
    const { service } = setup({ rateLimit: oneSlot })
    const attempts = [
      request('/campaigns', { method: 'POST', body: JSON.stringify({}), headers: { 'content-type': 'application/json' } }),
      request('/campaigns'),
      request('/campaigns', { method: 'POST', body: '{"a":', headers: { 'content-type': 'application/json' } }),
      request('/campaigns', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } }),
    ]
    for (const attempt of attempts) {
      const response = await service.fetch(attempt)
      expect([400, 415]).toContain(response.status)
      expect(response.headers.get('ratelimit-limit')).toBe('1000')
      await response.text()
      expect(await slotFree(service)).toBe(true)
    }
  })

  it('on a thrown error (the storage fails: 500)', async () => {
    const failing: Storage = { transaction: async () => Promise.reject(new Error('disk on fire')) }
    const { service, errors } = setup({ storage: failing, rateLimit: oneSlot })
    const response = await service.fetch(request('/campaigns/list'))
    expect(response.status).toBe(500)
    expect(response.headers.get('ratelimit-limit')).toBe('1000')
    await response.text()
    expect(errors).toHaveLength(1)
    // The probes hit the same failing storage: a 500 (not a 429) shows the slot was free.
    const probe = await service.fetch(request('/campaigns/list'))
    expect(probe.status).toBe(500)
  })

  it('when the client aborts: held while the work still runs, released when it ends, body unread', async () => {
    const gated = gatedStorage()
    const { service } = setup({ storage: gated.storage, rateLimit: oneSlot })
    const controller = new AbortController()
    const pending = service.fetch(request('/campaigns/list', { signal: controller.signal }))
    await gated.reached(1)
    controller.abort()
    // The work is still running, so the cap still counts it. (Were the probe admitted, its own
    // transaction would reach the gate: that is the other way this race can end.)
    const during = await Promise.race([
      service.fetch(request('/campaigns/list')).then((r) => r.status),
      gated.reached(2).then(() => 'admitted'),
    ])
    expect(during).toBe(429)
    gated.open()
    const response = await pending
    expect(response.status).toBe(200)
    // Nobody reads the body of an aborted request: the slot is free without it.
    expect(await slotFree(service)).toBe(true)
  })

  it('releases exactly once per admission, whether the answer is read, left unread or aborted', async () => {
    const inner = memoryLimiterStore()
    const calls = { consume: 0, release: 0 }
    // An aborted answer's slot is given back when its body is cancelled, after fetch resolved: the
    // sixth release is the signal that all are in.
    let sixth!: () => void
    const released = new Promise<void>((resolve) => (sixth = resolve))
    const store: LimiterStore = {
      consume: (key, rule, now) => (calls.consume++, inner.consume(key, rule, now)),
      release: (key, lease) => (++calls.release === 6 && sixth(), inner.release(key, lease)),
    }
    const { service } = setup({ rateLimit: { capacity: 1000, refillPerSecond: 1000, maxInFlight: 2, store } })
    for (let i = 0; i < 6; i++) {
      const controller = new AbortController()
      const response = await service.fetch(request(i % 3 ? '/campaigns/list' : '/campaigns', { signal: controller.signal }))
      if (i % 2) controller.abort()
      else await response.text()
    }
    await released
    expect(calls).toEqual({ consume: 6, release: 6 })
  })
})
