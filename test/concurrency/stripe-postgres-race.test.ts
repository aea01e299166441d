// Two service instances, each with its own pool, on one PostgreSQL schema, receive the same signed
// Stripe events at the same moment (SPEC wave 3, "Payment provider integrations (Stripe)"; wave 4,
// "Stripe as it sends events today"): one lead, one commission, one refund, and each event recorded
// once. Each event is recorded in the transaction of its effects, so the loser of a race rolls back
// whole and, tried again, finds the winner's record or sale. Then the fuzzer of
// test/property/stripe-events.property.test.ts with its events spread over both instances.
import fc from 'fast-check'
import Stripe from 'stripe'
import { expect, it } from 'vitest'
import { racingOnPostgres } from '../support/race-suite.js'
import { eventCount, plans, programs, runProgram } from '../support/stripe-fuzz.js'

const SECRET = 'whsec_race_5d2c8a1f'
const ROUNDS = 5

racingOnPostgres('Stripe events racing on PostgreSQL', 'striperace', (start) => {
  /** The two instances, an integration, and a sender of signed events: each to the instances in `order` at once. */
  async function connected() {
    const race = await start()
    const { one, two, api, workspaceId, affiliate } = race
    // Referral codes are unique across workspaces: one of this test's own.
    const { referralCode } = await api.links.create({ affiliateId: affiliate.id, referralCode: `RACE-${workspaceId.slice(0, 8)}` })
    const integration = await api.integrations.create({ workspaceId, provider: 'stripe', signingSecret: SECRET })
    const sendAll = async (events: Record<string, unknown>[], order = [one, two, one, two]) => {
      const signed = events.map((event) => {
        const payload = JSON.stringify({ object: 'event', livemode: true, ...event })
        return { payload, header: Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) }
      })
      const answers = await Promise.all(
        order.map((service, i) => {
          const { payload, header } = signed[i % signed.length]!
          return service.fetch(
            new Request(`http://race.local${integration.endpointPath}`, {
              method: 'POST',
              headers: { 'stripe-signature': header },
              body: payload,
            }),
          )
        }),
      )
      return answers.map((answer) => answer.status)
    }
    const log = async () => (await api.integrations.events({ integrationId: integration.integrationId, limit: 100 })).items
    return { ...race, referralCode, integration, sendAll, log }
  }

  it('the same event sent four times at once to two instances has one effect and one log entry', async () => {
    const { api, workspaceId, referralCode, sendAll, log } = await connected()
    for (let round = 1; round <= ROUNDS; round++) {
      const customer = { id: `cus_${round}`, object: 'customer', email: `buyer${round}@example.com`, metadata: { referral: referralCode } }
      expect(await sendAll([{ id: `evt_c${round}`, type: 'customer.created', data: { object: customer } }])).toEqual([200, 200, 200, 200])
      const invoice = {
        id: `in_${round}`,
        object: 'invoice',
        customer: `cus_${round}`,
        currency: 'usd',
        total: 1000,
        amount_paid: 1000,
        total_excluding_tax: 1000,
        charge: `ch_${round}`,
      }
      expect(await sendAll([{ id: `evt_i${round}`, type: 'invoice.paid', data: { object: invoice } }])).toEqual([200, 200, 200, 200])
      const charge = { id: `ch_${round}`, object: 'charge', invoice: `in_${round}`, amount: 1000, amount_refunded: 500 }
      expect(await sendAll([{ id: `evt_r${round}`, type: 'charge.refunded', data: { object: charge } }])).toEqual([200, 200, 200, 200])
    }
    expect((await api.customers.list({ workspaceId, limit: 100 })).pagination.total).toBe(ROUNDS)
    const commissions = (await api.commissions.list({ workspaceId, limit: 100 })).items
    expect(commissions).toHaveLength(ROUNDS)
    // 30% of 10.00, half of it refunded once.
    for (const commission of commissions) expect(commission.amount).toBe('1.50')
    const events = await log()
    expect(events).toHaveLength(3 * ROUNDS)
    expect(events.every((e) => e.status === 'processed')).toBe(true)
  }, 120_000)

  it('one invoice in two events sent at once to two instances makes one commission, and both events are recorded', async () => {
    const { one, two, api, workspaceId, referralCode, sendAll, log } = await connected()
    const customer = { id: 'cus_twice', object: 'customer', email: 'twice@example.com', metadata: { referral: referralCode } }
    expect(await sendAll([{ id: 'evt_c_twice', type: 'customer.created', data: { object: customer } }])).toEqual([200, 200, 200, 200])
    for (let round = 1; round <= ROUNDS; round++) {
      const invoice = {
        id: `in_twice_${round}`,
        object: 'invoice',
        customer: 'cus_twice',
        currency: 'usd',
        total: 2000,
        amount_paid: 2000,
        total_excluding_tax: 2000,
      }
      const events = ['a', 'b'].map((copy) => ({ id: `evt_${copy}${round}`, type: 'invoice.paid', data: { object: invoice } }))
      // evt_a to one, evt_b to two, then each again to the other.
      expect(await sendAll(events, [one, two, two, one]), `round ${round}`).toEqual([200, 200, 200, 200])
      const made = (await api.commissions.list({ workspaceId, limit: 100 })).items.filter((c) => c.amount === '6.00')
      expect(made, `round ${round}`).toHaveLength(round)
      const recorded = (await log()).filter((e) => e.eventId.endsWith(String(round)) && e.type === 'invoice.paid')
      expect(recorded.map((e) => e.eventId).sort()).toEqual([`evt_a${round}`, `evt_b${round}`])
      // One made the commission; the other is recorded ignored, pointing at it.
      const processed = recorded.filter((e) => e.status === 'processed')
      expect(processed, JSON.stringify(recorded)).toHaveLength(1)
      expect(recorded.find((e) => e.status !== 'processed')).toMatchObject({
        status: 'ignored',
        reason: 'duplicate_invoice',
        commissionId: processed[0]!.commissionId,
      })
    }
    const [stored] = (await api.customers.list({ workspaceId, limit: 100 })).items
    expect(stored).toMatchObject({ salesCount: ROUNDS })
  }, 120_000)

  it("random event programs delivered to both instances at once: the oracle's commissions, nothing applied twice, no 500", async () => {
    const { one, two, api, workspaceId, campaign, affiliate } = await start()
    const codes = [`A-${workspaceId.slice(0, 8)}`, `B-${workspaceId.slice(0, 8)}`]
    const second = await api.affiliates.create({ email: 'second@example.com', campaignId: campaign.id })
    const affiliates = [affiliate, second].map((a, i) => ({ id: a.id, code: codes[i]! }))
    for (const a of affiliates) await api.links.create({ affiliateId: a.id, referralCode: a.code })
    const integration = await api.integrations.create({ workspaceId, provider: 'stripe', signingSecret: SECRET, livemode: false })
    const world = {
      api,
      workspaceId,
      percent: 30,
      affiliates,
      endpointPath: integration.endpointPath,
      secret: SECRET,
      targets: [one.fetch, two.fetch],
      now: () => Math.floor(Date.now() / 1000),
      injected: () => 0,
    }
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        programs.chain((program) => plans(eventCount(program), 2).map((plan) => ({ program, plan }))),
        ({ program, plan }) => runProgram(world, program, plan, `pg${++run}`),
      ),
      { numRuns: 8 },
    )
  }, 300_000)
})
