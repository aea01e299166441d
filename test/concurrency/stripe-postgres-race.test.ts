// Two service instances, each with its own pool, on one PostgreSQL schema, receive the same signed
// Stripe events at the same moment (SPEC wave 3, "Payment provider integrations (Stripe)"): one
// lead, one commission, one refund, and each event recorded once.
import type pg from 'pg'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore } from '../../src/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

const WORKSPACE = '55555555-5555-4555-8555-555555555555'
const KEY = 'race-key'
const SECRET = 'whsec_race_5d2c8a1f'
const ROUNDS = 5

describe.skipIf(!postgresUrl)(needs('Stripe events racing on PostgreSQL', POSTGRES_VAR), () => {
  const schema = uniqueName('striperace')
  const pools: pg.Pool[] = []

  beforeAll(async () => {
    pools.push(await testPool(), await testPool())
    await postgresStorage({ pool: pools[0]!, schema }).ready()
  }, 30_000)

  afterAll(async () => {
    if (pools[0]) await dropSchema(pools[0], schema)
    await Promise.all(pools.map((pool) => pool.end()))
  })

  it('the same event sent four times at once to two instances has one effect and one log entry', async () => {
    const [one, two] = pools.map((pool) =>
      createAffiliateService({
        storage: postgresStorage({ pool, schema }),
        keyStore: memoryKeyStore([{ key: KEY, userId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', workspaceIds: [WORKSPACE] }]),
        rateLimit: false,
      }),
    )
    const { api } = one!
    const campaign = await api.campaigns.create({ campaignName: 'Race', workspaceId: WORKSPACE, commissionType: 'percentage', amount: 30, url: 'https://shop.example.com/' })
    const affiliate = await api.affiliates.create({ email: 'racer@example.com', campaignId: campaign.id })
    await api.links.create({ affiliateId: affiliate.id, referralCode: 'RACE-2026' })
    const integration = await api.integrations.create({ workspaceId: WORKSPACE, provider: 'stripe', signingSecret: SECRET })
    const sendAll = async (event: Record<string, unknown>) => {
      const payload = JSON.stringify({ object: 'event', livemode: true, ...event })
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET })
      const answers = await Promise.all(
        [one, two, one, two].map((service) =>
          service!.fetch(new Request(`http://race.local${integration.endpointPath}`, { method: 'POST', headers: { 'stripe-signature': header }, body: payload })),
        ),
      )
      return answers.map((answer) => answer.status)
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const customer = { id: `cus_${round}`, object: 'customer', email: `buyer${round}@example.com`, metadata: { referral: 'RACE-2026' } }
      expect(await sendAll({ id: `evt_c${round}`, type: 'customer.created', data: { object: customer } })).toEqual([200, 200, 200, 200])
      const invoice = { id: `in_${round}`, object: 'invoice', customer: `cus_${round}`, currency: 'usd', total: 1000, amount_paid: 1000, total_excluding_tax: 1000, charge: `ch_${round}` }
      expect(await sendAll({ id: `evt_i${round}`, type: 'invoice.paid', data: { object: invoice } })).toEqual([200, 200, 200, 200])
      const charge = { id: `ch_${round}`, object: 'charge', invoice: `in_${round}`, amount_refunded: 500 }
      expect(await sendAll({ id: `evt_r${round}`, type: 'charge.refunded', data: { object: charge } })).toEqual([200, 200, 200, 200])
    }
    expect((await api.customers.list({ workspaceId: WORKSPACE, limit: 100 })).pagination.total).toBe(ROUNDS)
    const commissions = (await api.commissions.list({ workspaceId: WORKSPACE, limit: 100 })).items
    expect(commissions).toHaveLength(ROUNDS)
    // 30% of 10.00, half of it refunded once.
    for (const commission of commissions) expect(commission.amount).toBe('1.50')
    const log = await api.integrations.events({ integrationId: integration.integrationId, limit: 100 })
    expect(log.pagination.total).toBe(3 * ROUNDS)
    expect(log.items.every((e) => e.status === 'processed')).toBe(true)
  }, 120_000)
})
