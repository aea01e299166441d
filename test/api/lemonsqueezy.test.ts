import { describe, expect, it } from 'vitest'
import { apiCampaignInput, setup, WS_A } from '../support/helpers.js'
import { lemonSqueezyEvent, lemonSqueezyInvoice, lemonSqueezyOrder, lemonSqueezySignature, post } from '../support/provider-events.js'

// Lemon Squeezy at POST /api/v1/integrations/<integrationId>/events (SPEC wave 4, "Payment
// providers beyond Stripe: one contract"), with webhooks made of Lemon Squeezy's documented
// objects (test/fixtures/lemonsqueezy) and signed as Lemon Squeezy signs them.

const SECRET = 'lsq-signing-secret-5d2c8a1f'
const RECEIVED = { status: 200, text: '{"received":true}' }
const INVALID = 'Invalid signature: the event is not signed by this integration'

async function connected(options: { livemode?: boolean } = {}) {
  const t = setup()
  const campaign = await t.api.campaigns.create(apiCampaignInput({ currency: 'USD', payoutTerm: 0 }))
  const ann = await t.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  await t.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-2026' })
  const integration = await t.api.integrations.create({
    workspaceId: WS_A,
    provider: 'lemonsqueezy',
    signingSecret: SECRET,
    livemode: options.livemode ?? true,
  })
  const send = (event: unknown, secret = SECRET) => {
    const body = JSON.stringify(event)
    return post(t.service.fetch, integration.endpointPath, body, {
      'x-signature': lemonSqueezySignature(body, secret),
      'x-event-name': (event as { meta: { event_name: string } }).meta.event_name,
    })
  }
  const log = async () => (await t.api.integrations.events({ integrationId: integration.integrationId, limit: 100 })).items
  const commissions = async () => (await t.api.commissions.list({ limit: 100 })).items
  /** When the service's clock says it is, as Lemon Squeezy writes times. */
  const at = (plusMs = 0) => new Date(t.clock.now() + plusMs).toISOString()
  return { ...t, ann, integration, send, log, commissions, at }
}

describe('Lemon Squeezy events', () => {
  it('an order_created whose custom data names a referral code is a sale; a redelivery changes nothing', async () => {
    const t = await connected()
    const order = lemonSqueezyOrder({ id: '101', customerId: 7, subtotal: 999, tax: 200, email: 'jo@example.com' })
    const event = lemonSqueezyEvent('order_created', order, { referral: 'ANN-2026', externalId: 'user-7' })
    expect(await t.send(event)).toEqual(RECEIVED)
    const [commission, ...more] = await t.commissions()
    expect(more).toEqual([])
    // 20% of 9.99, tax left out.
    expect(commission).toMatchObject({
      affiliateId: t.ann.id,
      amount: '2.00',
      saleAmount: '9.99',
      currency: 'USD',
      invoiceId: 'lsq_order_101',
    })
    const [customer] = (await t.api.customers.list({ workspaceId: WS_A, limit: 10 })).items
    expect(customer).toMatchObject({ externalId: 'user-7', email: 'jo@example.com' })
    expect(await t.send(event)).toEqual(RECEIVED)
    expect(await t.commissions()).toEqual([commission])
    expect((await t.log()).map((e) => [e.eventId, e.status])).toEqual([['order_created:101:2021-08-17T09:45:53.000000Z', 'processed']])
  })

  it("a recurring sale: the subscription's first payment is its order's sale, each renewal a sale of its own", async () => {
    const t = await connected()
    const custom = { referral: 'ANN-2026' }
    expect(
      await t.send(lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '201', customerId: 9, subtotal: 1000 }), custom)),
    ).toEqual(RECEIVED)
    const initial = lemonSqueezyInvoice({ id: '301', subscriptionId: 55, customerId: 9, billingReason: 'initial', subtotal: 1000 })
    expect(await t.send(lemonSqueezyEvent('subscription_payment_success', initial, custom))).toEqual(RECEIVED)
    // The renewal: known by Lemon Squeezy's customer id (custom data or not).
    const renewal = lemonSqueezyInvoice({
      id: '302',
      subscriptionId: 55,
      customerId: 9,
      subtotal: 1000,
      updatedAt: '2021-09-17T09:45:53.000000Z',
    })
    expect(await t.send(lemonSqueezyEvent('subscription_payment_success', renewal))).toEqual(RECEIVED)
    const byInvoice = Object.fromEntries((await t.commissions()).map((c) => [c.invoiceId, c]))
    expect(Object.keys(byInvoice).sort()).toEqual(['lsq_invoice_302', 'lsq_order_201'])
    expect(byInvoice.lsq_invoice_302).toMatchObject({ amount: '2.00', stripeSubscriptionId: '55', affiliateId: t.ann.id })
    expect((await t.log()).map((e) => [e.type, e.status, e.reason]).sort()).toEqual([
      ['order_created', 'processed', null],
      ['subscription_payment_success', 'ignored', 'initial_payment'],
      ['subscription_payment_success', 'processed', null],
    ])
  })

  it('refunds count by the amount refunded so far: partial, then full, in any order, and before their sale', async () => {
    const t = await connected()
    const custom = { referral: 'ANN-2026' }
    expect(await t.send(lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '401', subtotal: 10000, tax: 2000 }), custom))).toEqual(
      RECEIVED,
    )
    // A quarter of what was charged (tax included) is a quarter of the sale.
    const partial = lemonSqueezyOrder({ id: '401', subtotal: 10000, tax: 2000, refunded: 3000, updatedAt: '2021-08-18T00:00:00.000000Z' })
    const full = lemonSqueezyOrder({ id: '401', subtotal: 10000, tax: 2000, refunded: 12000, updatedAt: '2021-08-19T00:00:00.000000Z' })
    expect(await t.send(lemonSqueezyEvent('order_refunded', full, custom))).toEqual(RECEIVED)
    expect(await t.send(lemonSqueezyEvent('order_refunded', partial, custom))).toEqual(RECEIVED)
    expect((await t.commissions())[0]).toMatchObject({ amount: '0.00' })
    expect(
      (await t.log())
        .filter((e) => e.type === 'order_refunded')
        .map((e) => [e.status, e.reason])
        .sort(),
    ).toEqual([
      ['ignored', 'nothing_refunded'],
      ['processed', null],
    ])
    // A refund that comes before its order: kept, and taken when the order comes.
    const early = lemonSqueezyOrder({ id: '402', subtotal: 10000, refunded: 5000, updatedAt: '2021-08-20T00:00:00.000000Z' })
    expect(await t.send(lemonSqueezyEvent('order_refunded', early, custom))).toEqual(RECEIVED)
    expect((await t.log()).find((e) => e.eventId.startsWith('order_refunded:402'))).toMatchObject({ status: 'waiting' })
    expect(await t.send(lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '402', subtotal: 10000 }), custom))).toEqual(RECEIVED)
    const made = (await t.commissions()).find((c) => c.invoiceId === 'lsq_order_402')
    expect(made).toMatchObject({ amount: '10.00', saleAmount: '100.00' })
    expect((await t.log()).find((e) => e.eventId.startsWith('order_refunded:402'))).toMatchObject({
      status: 'processed',
      commissionId: made!.commissionId,
    })
    // A renewal's refund.
    expect(
      await t.send(
        lemonSqueezyEvent('subscription_payment_success', lemonSqueezyInvoice({ id: '501', subscriptionId: 66, subtotal: 4000 }), custom),
      ),
    ).toEqual(RECEIVED)
    const refunded = lemonSqueezyInvoice({
      id: '501',
      subscriptionId: 66,
      subtotal: 4000,
      refunded: 4000,
      updatedAt: '2021-08-21T00:00:00.000000Z',
    })
    expect(await t.send(lemonSqueezyEvent('subscription_payment_refunded', refunded, custom))).toEqual(RECEIVED)
    expect((await t.commissions()).find((c) => c.invoiceId === 'lsq_invoice_501')).toMatchObject({ amount: '0.00' })
  })

  const orders = <T>(items: T[]): T[][] =>
    items.length <= 1
      ? [items]
      : items.flatMap((item, i) => orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]))

  it.each(orders(['created', 'partial', 'full'] as const).map((order) => [order.join(' → ')]))(
    'an order, a partial and a full refund in the order %s end the same',
    async (order) => {
      const t = await connected()
      const custom = { referral: 'ANN-2026' }
      const events = {
        created: lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '450', subtotal: 10000 }), custom),
        partial: lemonSqueezyEvent(
          'order_refunded',
          lemonSqueezyOrder({ id: '450', subtotal: 10000, refunded: 2500, updatedAt: '2021-08-18T00:00:00.000000Z' }),
          custom,
        ),
        full: lemonSqueezyEvent(
          'order_refunded',
          lemonSqueezyOrder({ id: '450', subtotal: 10000, refunded: 10000, updatedAt: '2021-08-19T00:00:00.000000Z' }),
          custom,
        ),
      }
      for (const name of order.split(' → ') as (keyof typeof events)[]) expect(await t.send(events[name]), name).toEqual(RECEIVED)
      expect(await t.commissions()).toMatchObject([{ invoiceId: 'lsq_order_450', amount: '0.00', saleAmount: '100.00' }])
      expect((await t.log()).every((e) => e.status !== 'waiting')).toBe(true)
    },
  )

  it('attribution by the click the custom data names', async () => {
    const t = await connected()
    const response = await t.service.fetch(
      new Request('http://test.local/api/v1/r/ANN-2026', {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' },
      }),
    )
    await t.service.flush()
    const clickId = new URL(response.headers.get('location')!).searchParams.get('clickId')!
    const order = lemonSqueezyOrder({ id: '601', subtotal: 5000 })
    order.attributes.created_at = t.at(60_000)
    expect(await t.send(lemonSqueezyEvent('order_created', order, { clickId }))).toEqual(RECEIVED)
    expect(await t.commissions()).toMatchObject([{ affiliateId: t.ann.id, amount: '10.00' }])
  })

  it('attribution by discount code: the code the customer used, in the custom data (an order names no code)', async () => {
    const t = await connected()
    const code = await t.api.promoCodes.create({ affiliateId: t.ann.id, code: 'ANN10' })
    const order = lemonSqueezyOrder({ id: '651', customerId: 12, subtotal: 5000 })
    order.attributes.discount_total = 500
    expect(await t.send(lemonSqueezyEvent('order_created', order, { promoCode: 'ann10', externalId: 'user-12' }))).toEqual(RECEIVED)
    expect(await t.commissions()).toMatchObject([{ affiliateId: t.ann.id, amount: '10.00', invoiceId: 'lsq_order_651' }])
    expect(await t.api.promoCodes.get(code.promoCodeId)).toMatchObject({ uses: 1 })
    const [customer] = (await t.api.customers.list({ workspaceId: WS_A, limit: 10 })).items
    expect(customer).toMatchObject({ externalId: 'user-12', affiliateId: t.ann.id })
  })

  it('test-mode webhooks are ignored by a live integration, and live ones by a test one', async () => {
    const live = await connected()
    expect(
      await live.send(lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '701', subtotal: 1000 }), { referral: 'ANN-2026' }, true)),
    ).toEqual(RECEIVED)
    expect((await live.log())[0]).toMatchObject({ status: 'ignored', reason: 'livemode_mismatch' })
    const test = await connected({ livemode: false })
    expect(
      await test.send(
        lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '701', subtotal: 1000 }), { referral: 'ANN-2026' }, false),
      ),
    ).toEqual(RECEIVED)
    expect((await test.log())[0]).toMatchObject({ status: 'ignored', reason: 'livemode_mismatch' })
    expect(
      await test.send(lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '702', subtotal: 1000 }), { referral: 'ANN-2026' }, true)),
    ).toEqual(RECEIVED)
    expect(await test.commissions()).toHaveLength(1)
  })

  it('every bad signature is answered the same 400, and changes nothing', async () => {
    const t = await connected()
    const event = lemonSqueezyEvent('order_created', lemonSqueezyOrder({ id: '801', subtotal: 1000 }), { referral: 'ANN-2026' })
    const body = JSON.stringify(event)
    const good = lemonSqueezySignature(body, SECRET)
    const cases: Record<string, { body?: string; headers: Record<string, string>; path?: string }> = {
      'no header': { headers: {} },
      'an empty header': { headers: { 'x-signature': '' } },
      'not hex': { headers: { 'x-signature': 'z'.repeat(64) } },
      'cut short': { headers: { 'x-signature': good.slice(0, 63) } },
      'another secret': { headers: { 'x-signature': lemonSqueezySignature(body, 'someone-else') } },
      'a tampered body': { body: body.replace('"subtotal":1000', '"subtotal":9000'), headers: { 'x-signature': good } },
      'base64 instead of hex': { headers: { 'x-signature': Buffer.from(good, 'hex').toString('base64') } },
      'an unknown integration': {
        headers: { 'x-signature': good },
        path: '/api/v1/integrations/99999999-9999-4999-8999-999999999999/events',
      },
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
    // Upper-case hex is the same signature.
    expect(await post(t.service.fetch, t.integration.endpointPath, body, { 'x-signature': good.toUpperCase() })).toEqual(RECEIVED)
  })

  it('events it does not read, and signed events of the wrong shape, are 200 ignored with a reason', async () => {
    const t = await connected()
    expect(
      await t.send(
        lemonSqueezyEvent('license_key_created', {
          type: 'license-keys',
          id: '1',
          attributes: { updated_at: '2021-08-17T09:45:53.000000Z' },
        }),
      ),
    ).toEqual(RECEIVED)
    const wrongType = lemonSqueezyEvent('order_created', { ...lemonSqueezyInvoice({ id: '901', subscriptionId: 1, subtotal: 100 }) })
    expect(await t.send(wrongType)).toEqual(RECEIVED)
    const pending = lemonSqueezyOrder({ id: '902', subtotal: 100, status: 'pending' })
    expect(await t.send(lemonSqueezyEvent('order_created', pending, { referral: 'ANN-2026' }))).toEqual(RECEIVED)
    const broken = lemonSqueezyOrder({ id: '903', subtotal: 100 })
    broken.attributes.total = '1.00'
    expect(await t.send(lemonSqueezyEvent('order_created', broken))).toEqual(RECEIVED)
    expect((await t.log()).map((e) => [e.type, e.status, e.reason]).sort()).toEqual([
      ['license_key_created', 'ignored', 'unhandled_type'],
      ['order_created', 'ignored', 'malformed'],
      ['order_created', 'ignored', 'malformed'],
      ['order_created', 'ignored', 'not_paid'],
    ])
    expect(await t.commissions()).toEqual([])
  })
})
