import { describe, expect, it } from 'vitest'
import { apiCampaignInput, setup, WS_A } from '../support/helpers.js'
import { paddleEvent, paddleRefund, paddleSignature, paddleTransaction, post } from '../support/provider-events.js'

// Paddle Billing at POST /api/v1/integrations/<integrationId>/events (SPEC wave 4, "Payment
// providers beyond Stripe: one contract"), with notifications made of the Paddle SDK's own mocks
// (test/fixtures/paddle) and signed as Paddle signs them.

const SECRET = 'pdl_ntfset_01h8e1jxjnw9ra6zarhnz1a7y1_secret'
const NEXT_SECRET = 'pdl_ntfset_01h8e1jxjnw9ra6zarhnz1a7y1_rotated'
const RECEIVED = { status: 200, text: '{"received":true}' }
const INVALID = 'Invalid signature: the event is not signed by this integration'

async function connected() {
  const t = setup()
  const campaign = await t.api.campaigns.create(apiCampaignInput({ currency: 'USD', payoutTerm: 0 }))
  const ann = await t.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  await t.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-2026' })
  const integration = await t.api.integrations.create({ workspaceId: WS_A, provider: 'paddle', signingSecret: SECRET })
  // The service's clock, not the machine's: 2026-01-01 in these tests.
  const now = () => Math.floor(t.clock.now() / 1000)
  const send = (event: unknown, sign: { secrets?: string[]; ts?: number; path?: string } = {}) => {
    const body = JSON.stringify(event)
    return post(t.service.fetch, sign.path ?? integration.endpointPath, body, {
      'paddle-signature': paddleSignature(body, sign.ts ?? now(), ...(sign.secrets ?? [SECRET])),
    })
  }
  const log = async () => (await t.api.integrations.events({ integrationId: integration.integrationId, limit: 100 })).items
  const entry = async (eventId: string) => (await log()).find((e) => e.eventId === eventId)
  const commissions = async () => (await t.api.commissions.list({ limit: 100 })).items
  return { ...t, campaign, ann, integration, now, send, log, entry, commissions }
}

describe('Paddle Billing events', () => {
  it('a completed transaction with custom data naming a referral code is a sale: tax left out, minor units as Paddle writes them', async () => {
    const t = await connected()
    const event = paddleTransaction('evt_sale_1', {
      id: 'txn_1',
      amountMinor: 59900,
      taxMinor: 5315,
      customData: { referral: 'ANN-2026', externalId: 'user-1' },
    })
    expect(await t.send(event)).toEqual(RECEIVED)
    const [commission, ...more] = await t.commissions()
    expect(more).toEqual([])
    // 20% of 599.00 (what was paid without tax).
    expect(commission).toMatchObject({ affiliateId: t.ann.id, amount: '119.80', saleAmount: '599.00', currency: 'USD', invoiceId: 'txn_1' })
    const [customer] = (await t.api.customers.list({ workspaceId: WS_A, limit: 10 })).items
    expect(customer).toMatchObject({ externalId: 'user-1', affiliateId: t.ann.id })
    expect(await t.entry('evt_sale_1')).toMatchObject({
      type: 'transaction.completed',
      status: 'processed',
      commissionId: commission!.commissionId,
    })
  })

  it('a redelivery answers 200 and changes nothing', async () => {
    const t = await connected()
    const event = paddleTransaction('evt_again', { id: 'txn_again', amountMinor: 10000, customData: { referral: 'ANN-2026' } })
    expect(await t.send(event)).toEqual(RECEIVED)
    const before = await t.commissions()
    expect(await t.send(event)).toEqual(RECEIVED)
    // Paddle's redelivery carries a new signature time: still the same event.
    t.clock.advance(60_000)
    expect(await t.send(event)).toEqual(RECEIVED)
    expect(await t.commissions()).toEqual(before)
    expect(await t.log()).toHaveLength(1)
  })

  it('the click a custom data names attributes the sale', async () => {
    const t = await connected()
    const response = await t.service.fetch(
      new Request('http://test.local/api/v1/r/ANN-2026', {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' },
      }),
    )
    await t.service.flush()
    const clickId = new URL(response.headers.get('location')!).searchParams.get('clickId')!
    expect(
      await t.send(
        paddleTransaction('evt_click', {
          id: 'txn_click',
          amountMinor: 5000,
          customData: { clickId },
          billedAt: new Date(t.clock.now()).toISOString(),
        }),
      ),
    ).toEqual(RECEIVED)
    const [commission] = await t.commissions()
    expect(commission).toMatchObject({ affiliateId: t.ann.id, amount: '10.00' })
  })

  it("a recurring sale: the renewal transaction carries the subscription's custom data, or only the Paddle customer", async () => {
    const t = await connected()
    const first = paddleTransaction('evt_first', {
      id: 'txn_first',
      customerId: 'ctm_sub',
      amountMinor: 3000,
      subscriptionId: 'sub_1',
      customData: { referral: 'ANN-2026', externalId: 'user-9' },
    })
    expect(await t.send(first)).toEqual(RECEIVED)
    t.clock.advance(30 * 86_400_000)
    // Paddle copies the subscription's custom data to its renewals.
    const renewal = paddleTransaction('evt_renewal', {
      id: 'txn_renewal',
      customerId: 'ctm_sub',
      amountMinor: 3000,
      subscriptionId: 'sub_1',
      customData: { externalId: 'user-9' },
      billedAt: new Date(t.clock.now()).toISOString(),
    })
    expect(await t.send(renewal)).toEqual(RECEIVED)
    // A customer made without the host's id is known by its Paddle customer id.
    const other = paddleTransaction('evt_other', {
      id: 'txn_other',
      customerId: 'ctm_other',
      amountMinor: 2000,
      subscriptionId: 'sub_2',
      customData: { referral: 'ANN-2026' },
    })
    expect(await t.send(other)).toEqual(RECEIVED)
    t.clock.advance(30 * 86_400_000)
    const otherRenewal = paddleTransaction('evt_other_renewal', {
      id: 'txn_other_renewal',
      customerId: 'ctm_other',
      amountMinor: 2000,
      subscriptionId: 'sub_2',
      billedAt: new Date(t.clock.now()).toISOString(),
    })
    expect(await t.send(otherRenewal)).toEqual(RECEIVED)
    const byInvoice = Object.fromEntries((await t.commissions()).map((c) => [c.invoiceId, c]))
    expect(Object.keys(byInvoice).sort()).toEqual(['txn_first', 'txn_other', 'txn_other_renewal', 'txn_renewal'])
    expect(byInvoice.txn_renewal).toMatchObject({ amount: '6.00', stripeSubscriptionId: 'sub_1', affiliateId: t.ann.id })
    expect(byInvoice.txn_other_renewal).toMatchObject({ amount: '4.00', stripeSubscriptionId: 'sub_2' })
    const customers = (await t.api.customers.list({ workspaceId: WS_A, limit: 10 })).items
    expect(customers.map((c) => [c.externalId, c.salesCount]).sort()).toEqual([
      ['ctm_other', 2],
      ['user-9', 2],
    ])
  })

  it('a customer.created with custom data makes the lead; its transactions without custom data are attributed by the Paddle customer', async () => {
    const t = await connected()
    const customer = paddleEvent('customer-created', 'evt_customer', (data) => {
      data.id = 'ctm_lead'
      data.custom_data = { referral: 'ANN-2026' }
      data.created_at = new Date(t.clock.now() - 60_000).toISOString()
    })
    expect(await t.send(customer)).toEqual(RECEIVED)
    expect(await t.entry('evt_customer')).toMatchObject({ status: 'processed' })
    expect(
      await t.send(
        paddleTransaction('evt_lead_sale', {
          id: 'txn_lead',
          customerId: 'ctm_lead',
          amountMinor: 1000,
          billedAt: new Date(t.clock.now()).toISOString(),
        }),
      ),
    ).toEqual(RECEIVED)
    const [commission] = await t.commissions()
    expect(commission).toMatchObject({ affiliateId: t.ann.id, amount: '2.00' })
    // The same customer again (an update naming another code): the first attribution wins.
    const updated = paddleEvent('customer-updated', 'evt_customer_again', (data) => {
      data.id = 'ctm_lead'
      data.custom_data = { referral: 'ANN-2026' }
    })
    expect(await t.send(updated)).toEqual(RECEIVED)
    expect(await t.entry('evt_customer_again')).toMatchObject({ status: 'ignored', reason: 'already_attributed' })
    // A customer without custom data is nobody's.
    expect(await t.send(paddleEvent('customer-created', 'evt_plain', (data) => void (data.custom_data = null)))).toEqual(RECEIVED)
    expect(await t.entry('evt_plain')).toMatchObject({ status: 'ignored', reason: 'not_attributed' })
  })

  it('a refund: an adjustment waiting for approval changes nothing; approved, it takes its share back, once', async () => {
    const t = await connected()
    expect(
      await t.send(
        paddleTransaction('evt_paid', { id: 'txn_refund', amountMinor: 10000, taxMinor: 2000, customData: { referral: 'ANN-2026' } }),
      ),
    ).toEqual(RECEIVED)
    const pending = paddleRefund('evt_adj_pending', {
      id: 'adj_1',
      transactionId: 'txn_refund',
      amountMinor: 2500,
      taxMinor: 500,
      status: 'pending_approval',
      type: 'adjustment-created',
    })
    expect(await t.send(pending)).toEqual(RECEIVED)
    expect(await t.entry('evt_adj_pending')).toMatchObject({ status: 'ignored', reason: 'not_approved' })
    expect((await t.commissions())[0]).toMatchObject({ amount: '20.00' })
    const approved = paddleRefund('evt_adj_approved', { id: 'adj_1', transactionId: 'txn_refund', amountMinor: 2500, taxMinor: 500 })
    expect(await t.send(approved)).toEqual(RECEIVED)
    // A quarter of the sale refunded: a quarter of 20.00.
    const [commission] = await t.commissions()
    expect(commission).toMatchObject({ amount: '15.00' })
    expect(await t.entry('evt_adj_approved')).toMatchObject({ status: 'processed', commissionId: commission!.commissionId })
    // The same adjustment in another event (an update after approval): counted once.
    expect(
      await t.send(paddleRefund('evt_adj_again', { id: 'adj_1', transactionId: 'txn_refund', amountMinor: 2500, taxMinor: 500 })),
    ).toEqual(RECEIVED)
    expect(await t.entry('evt_adj_again')).toMatchObject({ status: 'ignored', reason: 'already_refunded' })
    // A credit is an adjustment too, and no refund.
    expect(
      await t.send(paddleRefund('evt_credit', { id: 'adj_2', transactionId: 'txn_refund', amountMinor: 100, action: 'credit' })),
    ).toEqual(RECEIVED)
    expect(await t.entry('evt_credit')).toMatchObject({ status: 'ignored', reason: 'not_a_refund' })
    // The rest refunded in a second adjustment: all of it back.
    expect(
      await t.send(paddleRefund('evt_adj_rest', { id: 'adj_3', transactionId: 'txn_refund', amountMinor: 7500, taxMinor: 1500 })),
    ).toEqual(RECEIVED)
    expect((await t.commissions())[0]).toMatchObject({ amount: '0.00' })
    // A refund of a transaction that made no commission.
    expect(await t.send(paddleRefund('evt_adj_unknown', { id: 'adj_4', transactionId: 'txn_nobody', amountMinor: 100 }))).toEqual(RECEIVED)
    expect(await t.entry('evt_adj_unknown')).toMatchObject({ status: 'ignored', reason: 'no_commission' })
  })

  it("attribution by discount code: the code the customer used, in the custom data (Paddle's transaction names its discount by id only)", async () => {
    const t = await connected()
    const code = await t.api.promoCodes.create({ affiliateId: t.ann.id, code: 'ANN10' })
    const event = paddleTransaction('evt_promo', {
      id: 'txn_promo',
      customerId: 'ctm_promo',
      amountMinor: 4000,
      customData: { promoCode: 'ann10' },
    })
    event.data.discount_id = 'dsc_01gv5kpg05xp104ek2fmgjwttf'
    expect(await t.send(event)).toEqual(RECEIVED)
    expect(await t.commissions()).toMatchObject([{ affiliateId: t.ann.id, amount: '8.00', invoiceId: 'txn_promo' }])
    expect(await t.api.promoCodes.get(code.promoCodeId)).toMatchObject({ uses: 1 })
    // The renewal carries the same custom data: the customer is known, the code not counted again.
    expect(
      await t.send(
        paddleTransaction('evt_promo_renewal', {
          id: 'txn_promo_2',
          customerId: 'ctm_promo',
          amountMinor: 4000,
          subscriptionId: 'sub_promo',
          customData: { promoCode: 'ann10' },
        }),
      ),
    ).toEqual(RECEIVED)
    expect((await t.commissions()).map((c) => c.invoiceId).sort()).toEqual(['txn_promo', 'txn_promo_2'])
    expect(await t.api.promoCodes.get(code.promoCodeId)).toMatchObject({ uses: 1 })
    // A discount no affiliate holds attributes no one and refuses nothing.
    expect(
      await t.send(
        paddleTransaction('evt_promo_other', {
          id: 'txn_promo_other',
          customerId: 'ctm_other',
          amountMinor: 4000,
          customData: { promoCode: 'SUMMER' },
        }),
      ),
    ).toEqual(RECEIVED)
    expect(await t.entry('evt_promo_other')).toMatchObject({ status: 'ignored', reason: 'not_attributed' })
    // A customer.created naming the code makes the lead.
    const customer = paddleEvent('customer-created', 'evt_promo_customer', (data) => {
      data.id = 'ctm_promo_lead'
      data.custom_data = { promoCode: 'ANN10' }
    })
    expect(await t.send(customer)).toEqual(RECEIVED)
    expect(await t.entry('evt_promo_customer')).toMatchObject({ status: 'processed' })
    expect(await t.api.promoCodes.get(code.promoCodeId)).toMatchObject({ uses: 2 })
  })

  it('a secret rotation: while Paddle signs with both secrets, either one stored verifies', async () => {
    const t = await connected()
    const event = paddleTransaction('evt_rotation', { id: 'txn_rotation', amountMinor: 1000, customData: { referral: 'ANN-2026' } })
    // Paddle signs with both the old and the new secret (the one that matches not last, where the SDK's
    // `unmarshal` would look): the integration still holds the old one.
    expect(await t.send(event, { secrets: [SECRET, NEXT_SECRET] })).toEqual(RECEIVED)
    await t.api.integrations.update(t.integration.integrationId, { signingSecret: NEXT_SECRET })
    const next = paddleTransaction('evt_rotation_2', { id: 'txn_rotation_2', amountMinor: 1000, customData: { referral: 'ANN-2026' } })
    expect(await t.send(next, { secrets: [NEXT_SECRET, SECRET] })).toEqual(RECEIVED)
    // The rotation over, the old secret alone no longer verifies.
    const stale = paddleTransaction('evt_rotation_3', { id: 'txn_rotation_3', amountMinor: 1000 })
    expect((await t.send(stale, { secrets: [SECRET] })).status).toBe(400)
    expect((await t.commissions()).map((c) => c.invoiceId).sort()).toEqual(['txn_rotation', 'txn_rotation_2'])
  })

  it('every bad signature is answered the same 400, and changes nothing', async () => {
    const t = await connected()
    const event = paddleTransaction('evt_bad', { id: 'txn_bad', amountMinor: 1000, customData: { referral: 'ANN-2026' } })
    const body = JSON.stringify(event)
    const good = paddleSignature(body, t.now(), SECRET)
    const [, h1] = good.split(';h1=')
    const cases: Record<string, { body?: string; headers: Record<string, string>; path?: string }> = {
      'no header': { headers: {} },
      'an empty header': { headers: { 'paddle-signature': '' } },
      'no h1': { headers: { 'paddle-signature': `ts=${t.now()}` } },
      'no ts': { headers: { 'paddle-signature': `h1=${h1}` } },
      'a ts that is no number': { headers: { 'paddle-signature': `ts=soon;h1=${h1}` } },
      'h1 not hex': { headers: { 'paddle-signature': `ts=${t.now()};h1=${'z'.repeat(64)}` } },
      'h1 cut short': { headers: { 'paddle-signature': `ts=${t.now()};h1=${h1!.slice(0, 40)}` } },
      'another secret': { headers: { 'paddle-signature': paddleSignature(body, t.now(), 'pdl_ntfset_someone_else') } },
      'a tampered body': { body: body.replace('"59900"', '"99999"').replace('txn_bad', 'txn_bae'), headers: { 'paddle-signature': good } },
      'the signature of another time': { headers: { 'paddle-signature': good.replace(`ts=${t.now()}`, `ts=${t.now() + 1}`) } },
      'stale: 301 s before the service clock': { headers: { 'paddle-signature': paddleSignature(body, t.now() - 301, SECRET) } },
      'ahead: 301 s after the service clock': { headers: { 'paddle-signature': paddleSignature(body, t.now() + 301, SECRET) } },
      "the machine's clock instead of the service's": {
        headers: { 'paddle-signature': paddleSignature(body, Math.floor(Date.now() / 1000), SECRET) },
      },
      'Stripe’s header': { headers: { 'stripe-signature': good } },
      'an unknown integration': {
        headers: { 'paddle-signature': good },
        path: '/api/v1/integrations/99999999-9999-4999-8999-999999999999/events',
      },
      'an integration id that is no id': { headers: { 'paddle-signature': good }, path: '/api/v1/integrations/not-an-id/events' },
    }
    const answers = new Set<string>()
    for (const [name, c] of Object.entries(cases)) {
      const answer = await post(t.service.fetch, c.path ?? t.integration.endpointPath, c.body ?? body, c.headers)
      expect(answer.status, name).toBe(400)
      expect(JSON.parse(answer.text), name).toMatchObject({ code: 'invalid_signature', message: INVALID })
      answers.add(answer.text)
    }
    expect(answers.size).toBe(1)
    expect(await t.log()).toEqual([])
    expect(await t.commissions()).toEqual([])
    // At the tolerance's edge, by the service clock, it verifies.
    expect(
      await post(t.service.fetch, t.integration.endpointPath, body, { 'paddle-signature': paddleSignature(body, t.now() - 300, SECRET) }),
    ).toEqual(RECEIVED)
  })

  it('events it does not read, and signed events of the wrong shape, are 200 ignored with a reason', async () => {
    const t = await connected()
    const subscription = paddleEvent('transaction-completed', 'evt_other_type', () => {})
    subscription.event_type = 'subscription.created'
    expect(await t.send(subscription)).toEqual(RECEIVED)
    expect(await t.entry('evt_other_type')).toMatchObject({ status: 'ignored', reason: 'unhandled_type' })
    const broken = paddleTransaction('evt_broken', { id: 'txn_broken', amountMinor: 1000 })
    broken.data.details.totals.total = 12.5
    expect(await t.send(broken)).toEqual(RECEIVED)
    expect(await t.entry('evt_broken')).toMatchObject({ status: 'ignored', reason: 'malformed' })
    expect(await t.send(paddleTransaction('evt_free', { id: 'txn_free', amountMinor: 0 }))).toEqual(RECEIVED)
    expect(await t.entry('evt_free')).toMatchObject({ status: 'ignored', reason: 'zero_amount' })
    expect(await t.send(paddleTransaction('evt_nobody', { id: 'txn_nobody', amountMinor: 1000 }))).toEqual(RECEIVED)
    expect(await t.entry('evt_nobody')).toMatchObject({ status: 'ignored', reason: 'not_attributed' })
    // An unknown code in the custom data: the refusal's code, and nothing made.
    expect(
      await t.send(
        paddleTransaction('evt_unknown_code', { id: 'txn_unknown_code', amountMinor: 1000, customData: { referral: 'NOBODY-1' } }),
      ),
    ).toEqual(RECEIVED)
    expect(await t.entry('evt_unknown_code')).toMatchObject({ status: 'ignored', reason: 'not_found' })
    expect(await t.commissions()).toEqual([])
  })
})
