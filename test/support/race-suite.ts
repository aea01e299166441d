import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore, type AffiliateService, type Storage } from '../../src/index.js'
import { populate } from './fixtures.js'
import { KEY_A, setup, WS_A } from './helpers.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from './services.js'

// Concurrent requests through service.fetch, all started before any is awaited.

export const raceSuite = (name: string, makeStorage: () => Promise<Storage> | Storage) =>
  describe(`races on ${name}`, () => {
    it('50 parallel commission creates for one affiliate keep every counter exact', async () => {
      const { call } = setup({ storage: await makeStorage() })
      const { campaign, affiliate, link } = await populate(call, KEY_A, WS_A, 'r')
      const before = (await call('GET', `/affiliates?affiliateId=${affiliate.id}`)).body.data
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call('POST', '/commissions', {
            body: {
              campaignId: campaign.id,
              affiliateId: affiliate.id,
              referredUser: `buyer-${i % 7}@example.com`,
              amount: `${i}.${String(i % 100).padStart(2, '0')}`,
              referralCode: link.referralCode,
            },
          }),
        ),
      )
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201))
      const addedCents = Array.from({ length: 50 }, (_, i) => i * 100 + (i % 100)).reduce((a, b) => a + b, 0)
      const after = (await call('GET', `/affiliates?affiliateId=${affiliate.id}`)).body.data
      expect(Math.round(after.totalEarnings * 100)).toBe(Math.round(before.totalEarnings * 100) + addedCents)
      // populate() made two other referred e-mails; the seven buyers are new.
      expect(after.totalSignups).toBe(before.totalSignups + 7)
      const [linkAfter] = (await call('GET', `/links?affiliateId=${affiliate.id}`)).body.data.items
      expect(Math.round(linkAfter.totalEarnings * 100)).toBe(addedCents)
      expect(linkAfter.totalSignups).toBe(7)
    })

    it('20 parallel link creates with the same supplied code make exactly one link', async () => {
      const { call } = setup({ storage: await makeStorage() })
      const { affiliate } = await populate(call, KEY_A, WS_A, 'r')
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => call('POST', '/links', { body: { affiliateId: affiliate.id, referralCode: 'SAME-CODE' } })),
      )
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1)
      expect(responses.filter((r) => r.status === 422)).toHaveLength(19)
      const links = (await call('GET', `/links?affiliateId=${affiliate.id}`)).body.data.items
      expect(links.filter((l: { referralCode: string }) => l.referralCode === 'SAME-CODE')).toHaveLength(1)
    })

    it('parallel status changes cannot together make an illegal transition', async () => {
      const { call } = setup({ storage: await makeStorage() })
      const { campaign, affiliate } = await populate(call, KEY_A, WS_A, 'r')
      for (let round = 0; round < 10; round++) {
        const created = await call('POST', '/commissions', {
          body: { campaignId: campaign.id, affiliateId: affiliate.id, referredUser: `r${round}@example.com`, amount: 5, status: 'paid' },
        })
        const id = created.body.data.commissionId
        // From paid only refunded is legal: pending and processing must fail whatever the order.
        const moves = ['refunded', 'pending', 'processing', 'refunded', 'pending']
        const responses = await Promise.all(moves.map((status) => call('PUT', `/commissions?commissionId=${id}`, { body: { status } })))
        const final = (await call('GET', `/commissions?commissionId=${id}`)).body.data.status
        expect(final).toBe('refunded')
        responses.forEach((response, i) => {
          if (moves[i] === 'refunded') expect(response.status).toBe(200)
          else expect(response.status).toBe(422)
        })
      }
      const after = (await call('GET', `/affiliates?affiliateId=${affiliate.id}`)).body.data
      // Every one of the ten was refunded; only populate()'s 10.00 and 0.00 remain earned.
      expect(after.totalEarnings).toBe(10)
    })
  })

/** The key the instances of `racingOnPostgres` know, seeing only their workspace. */
export const RACE_KEY = 'race-key'

/**
 * A suite of races between two service instances, each with its own pool, on one PostgreSQL schema
 * of its own (dropped after it); skipped, saying so, without PostgreSQL. `start()`, called in a
 * test, makes the two instances on a fresh workspace, with a campaign (30% of each sale) and its
 * affiliate made through the first.
 */
export const racingOnPostgres = (what: string, tag: string, tests: (start: () => ReturnType<typeof startRace>) => void) =>
  describe.skipIf(!postgresUrl)(needs(what, POSTGRES_VAR), () => {
    const schema = uniqueName(tag)
    const pools: pg.Pool[] = []
    beforeAll(async () => {
      pools.push(await testPool(), await testPool())
      await postgresStorage({ pool: pools[0]!, schema }).ready()
    }, 30_000)
    afterAll(async () => {
      if (pools[0]) await dropSchema(pools[0], schema)
      await Promise.all(pools.map((pool) => pool.end()))
    })
    tests(() => startRace(pools, schema))
  })

async function startRace(pools: pg.Pool[], schema: string) {
  const workspaceId = crypto.randomUUID()
  const [one, two] = pools.map(
    (pool): AffiliateService =>
      createAffiliateService({
        storage: postgresStorage({ pool, schema }),
        keyStore: memoryKeyStore([{ key: RACE_KEY, userId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', workspaceIds: [workspaceId] }]),
        rateLimit: false,
      }),
  ) as [AffiliateService, AffiliateService]
  const { api } = one
  const campaign = await api.campaigns.create({
    campaignName: 'Race',
    workspaceId,
    commissionType: 'percentage',
    amount: 30,
    url: 'https://shop.example.com/',
  })
  const affiliate = await api.affiliates.create({ email: 'racer@example.com', campaignId: campaign.id })
  return { one, two, api, workspaceId, campaign, affiliate }
}
