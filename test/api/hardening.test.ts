import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage, type AffiliateServiceOptions } from '../../src/index.js'
import { campaignInput, fieldError, expectValidation, KEY_A, setup, USER_A, WS_A } from '../support/helpers.js'

// Issue 13: what an outside tester found, each as it was reproduced.

const BASE = 'http://test.local/api/v1'
const json = { 'content-type': 'application/json', 'x-auth-service': KEY_A }

describe('unknown query parameters', () => {
  it('are refused on POST routes too, in the same answer as the body errors', async () => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns?dryRun=1', { body: campaignInput() }), [
      fieldError('dryRun', 'dryRun is not a known field', 'query'),
    ])
    expectValidation(await call('POST', '/campaigns?x=1', { body: campaignInput({ url: 'nope' }) }), [
      fieldError('x', 'x is not a known field', 'query'),
      fieldError('url', 'url must be an http or https URL'),
    ])
    expect((await call('GET', '/campaigns/list')).body.data.items).toEqual([])
  })
})

describe('validation errors', () => {
  it('list at most the first 50 fields, however many are wrong', async () => {
    const { call } = setup()
    const body: Record<string, unknown> = {}
    for (let i = 0; i < 9000; i++) body[`k${i}`] = 0
    const response = await call('POST', '/campaigns', { body })
    expect(response.status).toBe(400)
    expect(response.body.errors).toHaveLength(50)
    expect(response.text.length).toBeLessThan(10_000)
  })
})

describe('Idempotency-Key', () => {
  it('treats the same JSON with its keys in another order as the same request', async () => {
    const { call } = setup()
    const headers = { 'idempotency-key': 'order-1' }
    const input = campaignInput()
    const reordered = Object.fromEntries(Object.entries(input).reverse())
    const first = await call('POST', '/campaigns', { body: input, headers })
    const retry = await call('POST', '/campaigns', { body: JSON.stringify(reordered), headers })
    expect(first.status).toBe(201)
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.body).toEqual(first.body)
    expect((await call('GET', '/campaigns/list')).body.data.pagination.total).toBe(1)
  })
})

describe('a client that goes away, or never sends its body', () => {
  it('is routine: not an unexpected error, and its slot is free again', async () => {
    const { service, errors } = setup({ rateLimit: { capacity: 100, refillPerSecond: 100, maxInFlight: 1 } })
    const controller = new AbortController()
    // The client goes away when the service asks for more than the start of the body.
    let pulls = 0
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        if (pulls++ === 0) return stream.enqueue(new TextEncoder().encode('{"campaignName":'))
        controller.abort()
        stream.error(new DOMException('The client went away', 'AbortError'))
      },
    })
    const init = { method: 'POST', headers: json, body, duplex: 'half', signal: controller.signal } as RequestInit
    const response = await service.fetch(new Request(`${BASE}/campaigns`, init))
    expect(response.status).toBe(400)
    expect(errors).toEqual([])
    const next = await service.fetch(new Request(`${BASE}/campaigns/list`, { headers: json }))
    expect(next.status).toBe(200)
  })

  it('answers 408 when the body has not come within bodyTimeoutMs, and frees the slot', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      rateLimit: { capacity: 100, refillPerSecond: 100, maxInFlight: 1 },
      bodyTimeoutMs: 50,
      onError: (error) => {
        throw error
      },
    })
    const body = new ReadableStream<Uint8Array>({ start: (stream) => stream.enqueue(new TextEncoder().encode('{')) })
    const init = { method: 'POST', headers: json, body, duplex: 'half' } as RequestInit
    const response = await service.fetch(new Request(`${BASE}/campaigns`, init))
    expect(response.status).toBe(408)
    // The rest of the body is unread: the answer tells the server and the client to end the connection.
    expect(response.headers.get('connection')).toBe('close')
    expect(await response.json()).toEqual({ status: 408, code: 'body_timeout', message: 'Request body timeout' })
    expect((await service.fetch(new Request(`${BASE}/campaigns/list`, { headers: json }))).status).toBe(200)
  })
})

describe('options are checked when the service is built', () => {
  const keyStore = memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }])
  const build = (options: Partial<AffiliateServiceOptions>) => () => createAffiliateService(options as AffiliateServiceOptions)

  it('names a missing or mistaken storage or keyStore', () => {
    expect(build({ storage: memoryStorage() })).toThrow(new TypeError('keyStore is required: a KeyStore such as memoryKeyStore([...])'))
    expect(build({ keyStore })).toThrow(new TypeError('storage is required: a Storage such as memoryStorage()'))
    expect(build({ storage: memoryStorage as never, keyStore })).toThrow(/storage must be a storage, not its factory/)
    expect(build({ storage: memoryStorage(), keyStore: memoryKeyStore as never })).toThrow(/keyStore must be a key store, not its factory/)
  })

  it('names a limit that is not a whole number of at least 1', () => {
    const storage = memoryStorage()
    expect(build({ storage, keyStore, maxBodyBytes: 0 })).toThrow(new TypeError('maxBodyBytes must be a whole number of at least 1'))
    expect(build({ storage, keyStore, bodyTimeoutMs: -1 })).toThrow(new TypeError('bodyTimeoutMs must be a whole number of at least 1'))
    expect(build({ storage, keyStore, idempotency: { ttlMs: 0 } })).toThrow(/idempotency.ttlMs/)
    expect(build({ storage, keyStore, failedKeyLimit: { capacity: 0 } })).toThrow(/failedKeyLimit.capacity/)
    expect(build({ storage, keyStore, basePath: 'api' })).toThrow(/basePath must be a path starting with "\/"/)
  })

  it('memoryKeyStore names an unset key or a workspace id that is not a UUID', () => {
    expect(() =>
      memoryKeyStore([{ key: process.env.AFFILIATE_TEST_UNSET_VARIABLE as string, userId: USER_A, workspaceIds: [WS_A] }]),
    ).toThrow(/entry 0: key must be a non-empty string/)
    expect(() => memoryKeyStore([{ key: 'k', userId: USER_A, workspaceIds: ['workspace-1'] }])).toThrow(
      new TypeError('memoryKeyStore: entry 0: workspaceIds holds "workspace-1", which is not a UUID'),
    )
  })
})

describe('wrong API keys', () => {
  const service = () =>
    createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      clock: { now: () => 1_000_000 },
      rateLimit: false,
    })
  const guess = (s: ReturnType<typeof service>, key: string, clientAddress: string) =>
    s.fetch(new Request(`${BASE}/campaigns/list`, { headers: { 'x-auth-service': key } }), { clientAddress })

  it('are throttled per client address: 10 guesses, then 429 with Retry-After; another address is not slowed', async () => {
    const s = service()
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) statuses.push((await guess(s, `guess-${i}`, '203.0.113.7')).status)
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429])
    const refused = await guess(s, KEY_A, '203.0.113.7')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await guess(s, 'guess-x', '198.51.100.2')).status).toBe(401)
    expect((await guess(s, KEY_A, '198.51.100.2')).status).toBe(200)
  })

  it('a right key spends nothing', async () => {
    const s = service()
    for (let i = 0; i < 30; i++) expect((await guess(s, KEY_A, '203.0.113.9')).status).toBe(200)
  })
})

describe('basePath', () => {
  it('answers only under it, so a host can route a prefix to fetch unchanged', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      basePath: '/affiliates/api/v1/',
    })
    expect(service.basePath).toBe('/affiliates/api/v1')
    expect((await service.fetch(new Request('http://host.local/affiliates/api/v1/health'))).status).toBe(200)
    const outside = await service.fetch(new Request('http://host.local/api/v1/health'))
    expect(outside.status).toBe(404)
    expect(await outside.json()).toEqual({ status: 404, code: 'endpoint_not_found', message: 'Endpoint not found' })
    const keyed = await service.fetch(
      new Request('http://host.local/affiliates/api/v1/campaigns/list', { headers: { 'x-auth-service': KEY_A } }),
    )
    expect(keyed.status).toBe(200)
  })
})
