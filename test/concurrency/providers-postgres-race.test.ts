// Two service instances, each with its own pool, on one PostgreSQL schema, receive the same signed
// Paddle Billing and Lemon Squeezy events at the same moment (SPEC wave 4, "Payment providers
// beyond Stripe: one contract"): one customer, one commission, one refund, and each event recorded
// once, as for Stripe (stripe-postgres-race.test.ts): the event log, transaction and redelivery
// rules are the same code for every provider.
import type { AffiliateService } from '../../src/index.js'
import { expect, it } from 'vitest'
import {
  lemonSqueezyEvent,
  lemonSqueezyOrder,
  lemonSqueezySignature,
  paddleRefund,
  paddleSignature,
  paddleTransaction,
} from '../support/provider-events.js'
import { racingOnPostgres } from '../support/race-suite.js'

const SECRET = 'race-secret-5d2c8a1f'
const ROUNDS = 5

racingOnPostgres('Paddle and Lemon Squeezy events racing on PostgreSQL', 'providersrace', (start) => {
  async function connected(provider: 'paddle' | 'lemonsqueezy') {
    const race = await start()
    const { api, workspaceId, affiliate } = race
    const { referralCode } = await api.links.create({
      affiliateId: affiliate.id,
      referralCode: `RACE-${provider.slice(0, 3).toUpperCase()}-${workspaceId.slice(0, 8)}`,
    })
    const integration = await api.integrations.create({ workspaceId, provider, signingSecret: SECRET })
    const headersOf = (body: string): Record<string, string> =>
      provider === 'paddle'
        ? { 'paddle-signature': paddleSignature(body, Math.floor(Date.now() / 1000), SECRET) }
        : { 'x-signature': lemonSqueezySignature(body, SECRET) }
    /** Each of `events` to the instances in `order` at once (the events repeated round the order); answers the statuses. */
    const sendAll = async (events: unknown[], order: AffiliateService[] = [race.one, race.two, race.one, race.two]) => {
      const bodies = events.map((event) => JSON.stringify(event))
      const answers = await Promise.all(
        order.map((service, i) => {
          const body = bodies[i % bodies.length]!
          return service.fetch(
            new Request(`http://race.local${integration.endpointPath}`, { method: 'POST', headers: headersOf(body), body }),
          )
        }),
      )
      return answers.map((answer) => answer.status)
    }
    const log = async () => (await api.integrations.events({ integrationId: integration.integrationId, limit: 100 })).items
    const commissions = async () => (await api.commissions.list({ workspaceId, limit: 100 })).items
    return { ...race, referralCode, sendAll, log, commissions }
  }

  it('Paddle: the same transaction and refund sent four times at once to two instances have one effect and one log entry each', async () => {
    const { api, workspaceId, referralCode, sendAll, log, commissions } = await connected('paddle')
    for (let round = 1; round <= ROUNDS; round++) {
      const sale = paddleTransaction(`evt_txn_${round}`, {
        id: `txn_${round}`,
        customerId: `ctm_${round}`,
        amountMinor: 1000,
        customData: { referral: referralCode, externalId: `user-${round}` },
        billedAt: new Date().toISOString(),
      })
      expect(await sendAll([sale])).toEqual([200, 200, 200, 200])
      const refund = paddleRefund(`evt_adj_${round}`, { id: `adj_${round}`, transactionId: `txn_${round}`, amountMinor: 500 })
      expect(await sendAll([refund])).toEqual([200, 200, 200, 200])
    }
    expect((await api.customers.list({ workspaceId, limit: 100 })).pagination.total).toBe(ROUNDS)
    const made = await commissions()
    expect(made).toHaveLength(ROUNDS)
    // 30% of 10.00, half of it refunded once.
    for (const commission of made) expect(commission.amount).toBe('1.50')
    const events = await log()
    expect(events).toHaveLength(2 * ROUNDS)
    expect(events.every((e) => e.status === 'processed')).toBe(true)
  }, 120_000)

  it('Paddle: one transaction in two events at once on two instances makes one commission; two adjustments at once refund both', async () => {
    const { one, two, referralCode, sendAll, log, commissions } = await connected('paddle')
    for (let round = 1; round <= ROUNDS; round++) {
      const copies = ['a', 'b'].map((copy) =>
        paddleTransaction(`evt_${copy}${round}`, {
          id: `txn_twice_${round}`,
          customerId: 'ctm_twice',
          amountMinor: 2000,
          customData: { referral: referralCode, externalId: 'user-twice' },
          billedAt: new Date().toISOString(),
        }),
      )
      expect(await sendAll(copies, [one, two, two, one]), `round ${round}`).toEqual([200, 200, 200, 200])
      const recorded = (await log()).filter((e) => e.eventId === `evt_a${round}` || e.eventId === `evt_b${round}`)
      expect(recorded.map((e) => e.status).sort(), JSON.stringify(recorded)).toEqual(['ignored', 'processed'])
      const refunds = ['x', 'y'].map((part) =>
        paddleRefund(`evt_${part}${round}`, { id: `adj_${part}${round}`, transactionId: `txn_twice_${round}`, amountMinor: 500 }),
      )
      expect(await sendAll(refunds, [one, two, two, one])).toEqual([200, 200, 200, 200])
    }
    const made = await commissions()
    expect(made).toHaveLength(ROUNDS)
    // 30% of 20.00 is 6.00; two quarters refunded: 3.00 left.
    for (const commission of made) expect(commission.amount).toBe('3.00')
  }, 120_000)

  it('Lemon Squeezy: the same order and refund sent four times at once to two instances have one effect and one log entry each', async () => {
    const { api, workspaceId, referralCode, sendAll, log, commissions } = await connected('lemonsqueezy')
    const custom = { referral: referralCode }
    for (let round = 1; round <= ROUNDS; round++) {
      const order = lemonSqueezyOrder({ id: String(round), customerId: round, subtotal: 1000, email: `buyer${round}@example.com` })
      order.attributes.created_at = new Date().toISOString()
      expect(await sendAll([lemonSqueezyEvent('order_created', order, custom)])).toEqual([200, 200, 200, 200])
      const refunded = lemonSqueezyOrder({
        id: String(round),
        customerId: round,
        subtotal: 1000,
        refunded: 500,
        updatedAt: new Date().toISOString(),
      })
      // The refund and a redelivery of the order, at once.
      expect(
        await sendAll([lemonSqueezyEvent('order_refunded', refunded, custom), lemonSqueezyEvent('order_created', order, custom)]),
      ).toEqual([200, 200, 200, 200])
    }
    expect((await api.customers.list({ workspaceId, limit: 100 })).pagination.total).toBe(ROUNDS)
    const made = await commissions()
    expect(made).toHaveLength(ROUNDS)
    for (const commission of made) expect(commission.amount).toBe('1.50')
    const events = await log()
    expect(events).toHaveLength(2 * ROUNDS)
    expect(events.every((e) => e.status === 'processed')).toBe(true)
  }, 120_000)
})
