import { afterEach, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { AffiliateError, createAffiliateClient } from '../../src/client/index.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, type RateLimitOptions } from '../../src/index.js'
import { KEY_A, UNKNOWN_ID, USER_A, WS_A } from '../support/helpers.js'

// The typed HTTP client against a real server on 127.0.0.1.

const running: RunningServer[] = []
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
})

async function start(rateLimit: false | RateLimitOptions = false) {
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    rateLimit,
  })
  const server = await serve(service, { port: 0 })
  running.push(server)
  return { service, url: server.url }
}

async function rejection(promise: Promise<unknown>): Promise<AffiliateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AffiliateError)
  return error as AffiliateError
}

describe('createAffiliateClient', () => {
  it('calls every namespace with the same names, arguments and answers as service.api', async () => {
    const { service, url } = await start()
    const client = createAffiliateClient({ baseUrl: url, apiKey: KEY_A })

    const campaign = await client.campaigns.create({
      campaignName: 'Spring',
      workspaceId: WS_A,
      commissionType: 'percentage',
      amount: 20,
      url: 'https://shop.example.com/',
    })
    expect(await client.campaigns.get(campaign.id)).toEqual(await service.api.campaigns.get(campaign.id))
    const renamed = await client.campaigns.update(campaign.id, { campaignName: 'Summer' })
    expect(renamed.campaignName).toBe('Summer')
    expect((await client.campaigns.list({ page: 1, limit: 10, orderValue: 'ASC' })).items.map((c) => c.id)).toEqual([campaign.id])

    const affiliate = await client.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    expect(await client.affiliates.get(affiliate.id)).toEqual(await service.api.affiliates.get(affiliate.id))
    expect((await client.affiliates.update(affiliate.id, { firstName: 'Ann' })).firstName).toBe('Ann')
    expect((await client.affiliates.list({ campaignId: campaign.id })).pagination.total).toBe(1)

    const link = await client.links.create({ affiliateId: affiliate.id })
    expect(await client.links.track({ referralCode: link.referralCode, event: 'click' })).toMatchObject({ totalClicks: 1 })
    expect((await client.links.list({ affiliateId: affiliate.id })).items.map((l) => l.id)).toEqual([link.id])

    const commission = await client.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      amount: 12.5,
      referredUser: 'buyer@example.com',
    })
    expect(await client.commissions.get(commission.commissionId)).toEqual(await service.api.commissions.get(commission.commissionId))
    expect((await client.commissions.update(commission.commissionId, { remarks: 'checked' })).remarks).toBe('checked')
    expect((await client.commissions.list({ status: 'pending' })).items).toHaveLength(1)

    const referred = await client.referredUsers.create({ referredTo: 'friend@example.com', affiliateId: affiliate.id })
    expect((await client.referredUsers.get('friend@example.com')).commissionId).toBe(referred.commissionId)
    expect((await client.referredUsers.update(referred.commissionId, { name: 'Friend' })).name).toBe('Friend')
    expect((await client.referredUsers.list()).pagination.total).toBeGreaterThanOrEqual(1)

    expect(await client.referredUsers.delete(referred.commissionId)).toEqual({ id: referred.commissionId })
    expect(await client.commissions.delete(commission.commissionId)).toEqual({ id: commission.commissionId })
    expect(await client.links.delete(link.id)).toEqual({ id: link.id })
    expect(await client.affiliates.delete(affiliate.id)).toEqual({ id: affiliate.id })
    expect(await client.campaigns.delete(campaign.id)).toEqual({ id: campaign.id })
  })

  it('throws AffiliateError with the status, message and field errors the server answered', async () => {
    const { url } = await start()
    const client = createAffiliateClient({ baseUrl: url, apiKey: KEY_A })
    const missing = await rejection(client.campaigns.get(UNKNOWN_ID))
    expect([missing.status, missing.message]).toEqual([404, 'Campaign not found'])
    const invalid = await rejection(
      client.campaigns.create({ campaignName: '', workspaceId: WS_A, commissionType: 'percentage', amount: 20, url: 'nope' }),
    )
    expect(invalid.status).toBe(400)
    expect(invalid.errors?.map((e) => e.path).sort()).toEqual(['campaignName', 'url'])
    const wrongKey = await rejection(createAffiliateClient({ baseUrl: url, apiKey: 'wrong' }).campaigns.list())
    expect(wrongKey.status).toBe(401)
  })

  it('waits out a 429 for its Retry-After, then succeeds', async () => {
    const { url } = await start({ capacity: 1, refillPerSecond: 1 })
    const seen: number[] = []
    const client = createAffiliateClient({
      baseUrl: url,
      apiKey: KEY_A,
      fetch: async (request) => {
        const response = await fetch(request)
        seen.push(response.status)
        return response
      },
    })
    await client.campaigns.list()
    const started = Date.now()
    await client.campaigns.list()
    expect(seen).toEqual([200, 429, 200])
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    // With no retries left the 429 is the caller's, with its Retry-After.
    const impatient = createAffiliateClient({ baseUrl: url, apiKey: KEY_A, maxRetries: 0 })
    const limited = await rejection(impatient.campaigns.list())
    expect(limited.status).toBe(429)
    expect(limited.headers?.['retry-after']).toMatch(/^\d+$/)
  })

  it('retries a POST whose connection dropped after the server ran it, and the server runs it once', async () => {
    const { service, url } = await start()
    const keys: (string | null)[] = []
    let drop = true
    const client = createAffiliateClient({
      baseUrl: url,
      apiKey: KEY_A,
      fetch: async (request) => {
        keys.push(request.headers.get('idempotency-key'))
        const response = await fetch(request)
        if (drop) {
          // The server answered, but the answer never reached us.
          drop = false
          await response.body?.cancel()
          throw new TypeError('fetch failed: socket hang up')
        }
        return response
      },
    })
    const campaign = await client.campaigns.create({
      campaignName: 'Once',
      workspaceId: WS_A,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://shop.example.com/',
    })
    expect(keys).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    const all = await service.api.campaigns.list()
    expect(all.items.map((c) => c.id)).toEqual([campaign.id])
  })

  it('does not resend a DELETE after a network error, and gives up on POST after maxRetries', async () => {
    const { url } = await start()
    let calls = 0
    const failing = async () => {
      calls++
      throw new TypeError('fetch failed')
    }
    const client = createAffiliateClient({ baseUrl: url, apiKey: KEY_A, fetch: failing, maxRetries: 2 })
    await expect(client.campaigns.delete(UNKNOWN_ID)).rejects.toThrow('fetch failed')
    expect(calls).toBe(1)
    calls = 0
    await expect(
      client.campaigns.create({ campaignName: 'X', workspaceId: WS_A, commissionType: 'fixed', amount: 1, url: 'https://a.example/' }),
    ).rejects.toThrow('fetch failed')
    expect(calls).toBe(3)
  })

  it('checks its options', () => {
    expect(() => createAffiliateClient({ baseUrl: 'localhost:3000', apiKey: KEY_A })).toThrow('baseUrl must be an http(s) URL')
    expect(() => createAffiliateClient({ baseUrl: 'http://localhost', apiKey: '' })).toThrow('apiKey must be a non-empty string')
    expect(() => createAffiliateClient({ baseUrl: 'http://localhost', apiKey: 'k', maxRetries: -1 })).toThrow('maxRetries must be')
  })
})
