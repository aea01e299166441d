import { afterEach, describe, expect, it, vi } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage, type Storage } from '../../src/index.js'
import { campaignInput, WS_A } from '../support/helpers.js'

const SECRET = 'sk_test_a-very-secret-key-value-1234567890'

/** A storage whose every transaction fails with a message that names internals. */
const brokenStorage: Storage = {
  transaction: async () => {
    const error = new Error('connect ECONNREFUSED 10.0.0.5:5432 (password=hunter2)')
    error.stack = `${error.message}\n    at Pool.connect (/srv/app/node_modules/pg/lib/pool.js:45:11)`
    throw error
  },
}

afterEach(() => vi.restoreAllMocks())

describe('keys and errors', () => {
  it('a key is never echoed in an answer, whatever the route and outcome', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: SECRET, userId: WS_A, workspaceIds: [WS_A] }]),
      rateLimit: { capacity: 3, refillPerSecond: 0.001 },
      onError: () => undefined,
    })
    const requests = [
      new Request('http://x/api/v1/campaigns/list', { headers: { 'x-auth-service': SECRET } }),
      new Request('http://x/api/v1/campaigns', {
        method: 'POST',
        headers: { 'x-auth-service': SECRET, 'content-type': 'application/json' },
        body: JSON.stringify(campaignInput({ workspaceId: WS_A })),
      }),
      new Request('http://x/api/v1/campaigns', {
        method: 'POST',
        headers: { 'x-auth-service': SECRET, 'content-type': 'application/json' },
        body: '{"x":',
      }),
      new Request('http://x/api/v1/campaigns/list', { headers: { 'x-auth-service': SECRET } }),
      new Request('http://x/api/v1/campaigns/list', { headers: { 'x-auth-service': `${SECRET}x` } }),
      new Request(`http://x/api/v1/campaigns?campaignId=${SECRET}`, { headers: { 'x-auth-service': SECRET } }),
    ]
    const statuses: number[] = []
    for (const request of requests) {
      const response = await service.fetch(request)
      statuses.push(response.status)
      const text = await response.text()
      expect(text).not.toContain(SECRET)
      response.headers.forEach((value) => {
        expect(value).not.toContain(SECRET)
      })
    }
    // The run went through a success, a 400, a 429 and a 401, so each kind of answer was looked at.
    expect(statuses).toEqual(expect.arrayContaining([200, 201, 400, 429, 401]))
  })

  it('an unexpected error is answered without its message or stack, and the default log carries no key', async () => {
    const logged: unknown[][] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(args))
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args))
    vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void logged.push(args))
    const service = createAffiliateService({
      storage: brokenStorage,
      keyStore: memoryKeyStore([{ key: SECRET, userId: WS_A, workspaceIds: [WS_A] }]),
      rateLimit: false,
    })
    const response = await service.fetch(new Request('http://x/api/v1/campaigns/list', { headers: { 'x-auth-service': SECRET } }))
    expect(response.status).toBe(500)
    expect(await response.text()).toBe('{"status":500,"code":"internal_error","message":"Internal server error"}')
    // The default onError logged the error for the operator...
    expect(logged.length).toBeGreaterThan(0)
    const text = logged.map((args) => args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : String(a))).join(' ')).join('\n')
    expect(text).toContain('ECONNREFUSED')
    // ...and nothing about the request that carried the key.
    expect(text).not.toContain(SECRET)
  })

  it('the memory key store keeps no plaintext key', async () => {
    const store = memoryKeyStore([{ key: SECRET, userId: WS_A, workspaceIds: [WS_A] }])
    const principal = await store.resolve(SECRET)
    expect(principal).not.toBeNull()
    expect(JSON.stringify(principal)).not.toContain(SECRET)
    expect(principal!.keyId).toMatch(/^[0-9a-f]{12}$/)
    expect(await store.resolve(SECRET.slice(0, -1))).toBeNull()
    expect(await store.resolve('')).toBeNull()
  })

  it('onError receives the request, whose key header is for the embedding app to keep out of its logs', async () => {
    const seen: Request[] = []
    const direct = createAffiliateService({
      storage: brokenStorage,
      keyStore: memoryKeyStore([{ key: SECRET, userId: WS_A, workspaceIds: [WS_A] }]),
      rateLimit: false,
      onError: (_error, context) => {
        expect(context.source).toBe('request')
        if (context.source === 'request') seen.push(context.request)
      },
    })
    await direct.fetch(new Request('http://x/api/v1/campaigns/list', { headers: { 'x-auth-service': SECRET } }))
    expect(seen).toHaveLength(1)
    expect(new URL(seen[0]!.url).pathname).toBe('/api/v1/campaigns/list')
  })
})
