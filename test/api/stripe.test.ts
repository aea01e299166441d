import Stripe from 'stripe'
import { describe, expect, it } from 'vitest'
import { memoryStorage, type CampaignCreateInput, type Storage } from '../../src/index.js'
import type { StorageTransaction } from '../../src/storage/types.js'
import { snapshot } from '../support/fixtures.js'
import { apiCampaignInput, setup, WS_A } from '../support/helpers.js'

// POST /api/v1/integrations/<integrationId>/events (SPEC wave 3, "Payment provider integrations
// (Stripe)"): events signed with the SDK's own generateTestHeaderString.

const SECRET = 'whsec_test_5d2c8a1f0b9e'
const DAY = 86_400_000

async function connected(options: { livemode?: boolean; storage?: Storage; campaign?: Partial<CampaignCreateInput> } = {}) {
  const { storage, campaign: campaignOptions, ...integrationOptions } = options
  const t = setup(storage ? { storage } : {})
  const campaign = await t.api.campaigns.create(apiCampaignInput({ currency: 'USD', payoutTerm: 0, ...campaignOptions }))
  const ann = await t.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id, payoutMethod: 'PAYPAL', payoutEmail: 'ann.pay@example.com' })
  await t.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-2026' })
  const integration = await t.api.integrations.create({ workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET, ...integrationOptions })
  let n = 0
  /** Posts `event` signed with `secret` at the clock's time (or `timestamp`); answers the status and the body sent. */
  const send = async (event: Record<string, unknown>, sign: { secret?: string; timestamp?: number; tamper?: boolean; path?: string } = {}) => {
    const payload = JSON.stringify({ object: 'event', livemode: true, api_version: '2025-03-31.basil', ...event })
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: sign.secret ?? SECRET, timestamp: sign.timestamp ?? Math.floor(t.clock.now() / 1000) })
    const body = sign.tamper ? payload.replace('"livemode":true', '"livemode":true ') : payload
    const response = await t.service.fetch(
      new Request(`http://test.local${sign.path ?? integration.endpointPath}`, { method: 'POST', headers: { 'stripe-signature': header, 'content-type': 'application/json' }, body }),
    )
    return { status: response.status, text: await response.text() }
  }
  const event = (type: string, object: Record<string, unknown>, id = `evt_${++n}`) => ({ id, type, data: { object } })
  const log = async () => (await t.api.integrations.events({ integrationId: integration.integrationId })).items
  /** Opens Ann's link through the public redirect and answers the clickId, once written. */
  const click = async () => {
    const response = await t.service.fetch(new Request('http://test.local/api/v1/r/ANN-2026', { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' } }))
    expect(response.status).toBe(302)
    await t.service.flush()
    return new URL(response.headers.get('location')!).searchParams.get('clickId')!
  }
  return { ...t, campaign, ann, integration, send, event, log, click }
}

/** A memory storage whose transactions' calls go through `spy` first: it may throw, or answer in their place (anything but undefined). */
function intercepted(spy: (call: { name: string; model: string; args: unknown[] }) => unknown): Storage {
  const storage = memoryStorage()
  const wrap = (tx: StorageTransaction): StorageTransaction =>
    new Proxy(tx, {
      get(target, name) {
        const value = Reflect.get(target, name, target)
        if (typeof value !== 'function') return value
        return (model: string, ...args: unknown[]) => spy({ name: String(name), model, args }) ?? value.call(target, model, ...args)
      },
    })
  return { transaction: (work, options) => storage.transaction((tx) => work(wrap(tx)), options) }
}

/** Once armed, the next write of an event's outcome (a `providerEvents` record or patch saying `processed`) throws: the event log failing after the effects. */
function failingEventLog() {
  let armed = false
  const storage = intercepted(({ name, model, args }) => {
    if (!armed || model !== 'providerEvents' || (name !== 'insert' && name !== 'update') || (args.at(-1) as { status?: string }).status !== 'processed') return undefined
    armed = false
    throw new Error('the event log is unavailable')
  })
  return { storage, arm: () => void (armed = true) }
}

/** Every record but the event log's: what an event's effects changed. */
const withoutLog = async (storage: Storage) => {
  const { providerEvents: _, ...rest } = JSON.parse(await snapshot(storage)) as Record<string, unknown>
  return JSON.stringify(rest)
}

const customerObject = { id: 'cus_1', object: 'customer', email: 'buyer@example.com', metadata: { referral: 'ANN-2026' } }
/** An invoice in the 2025+ shape (subscription under parent, charge under payments) or the older one. */
const invoice = (shape: 'new' | 'old', overrides: Record<string, unknown> = {}) => ({
  id: 'in_1',
  object: 'invoice',
  customer: 'cus_1',
  currency: 'usd',
  total: 5000,
  amount_paid: 5000,
  total_excluding_tax: 4500,
  status_transitions: { paid_at: 1_767_225_600 },
  ...(shape === 'new'
    ? { parent: { subscription_details: { subscription: 'sub_1' } }, payments: { data: [{ payment: { charge: 'ch_1' } }] } }
    : { subscription: 'sub_1', charge: 'ch_1' }),
  ...overrides,
})

describe('stripe events', () => {
  it.each(['new', 'old'] as const)('customer.created makes the lead; invoice.paid (%s shape) one commission; a redelivery and the same invoice in a new event change nothing', async (shape) => {
    const t = await connected()
    expect((await t.send(t.event('customer.created', customerObject))).status).toBe(200)
    const [customer] = (await t.api.customers.list({})).items
    expect(customer).toMatchObject({ externalId: 'cus_1', stripeCustomerId: 'cus_1', affiliateId: t.ann.id })
    const paid = t.event('invoice.paid', invoice(shape))
    expect((await t.send(paid)).status).toBe(200)
    expect((await t.send(paid)).status).toBe(200)
    const again = t.event('invoice.paid', invoice(shape))
    expect((await t.send(again)).status).toBe(200)
    const commissions = (await t.api.commissions.list({})).items
    expect(commissions).toHaveLength(1)
    // The amount rule: amount_paid equals total, so total_excluding_tax (45.00) at 20%.
    const stored = await t.storage.transaction((tx) => tx.get('commissions', commissions[0]!.commissionId))
    expect(stored).toMatchObject({ invoiceId: 'in_1', chargeId: 'ch_1', stripeSubscriptionId: 'sub_1' })
    expect(commissions[0]!.amount).toBe('9.00')
    const log = await t.log()
    expect(log.filter((e) => e.eventId === paid.id)).toHaveLength(1)
    expect(log.find((e) => e.eventId === paid.id)).toMatchObject({ status: 'processed', commissionId: commissions[0]!.commissionId })
    // The same invoice in another event: recorded, pointing at the commission the first made.
    expect(log.find((e) => e.eventId === again.id)).toMatchObject({ status: 'ignored', reason: 'duplicate_invoice', commissionId: commissions[0]!.commissionId })
  })

  it.each(['new', 'old'] as const)('charge.refunded (%s shape) refunds by the growth of amount_refunded; before its invoice.paid it is recorded failed and answered 500', async (shape) => {
    const t = await connected()
    await t.send(t.event('customer.created', customerObject))
    const early = t.event('charge.refunded', { id: 'ch_1', object: 'charge', amount: 5000, amount_refunded: 1000, ...(shape === 'old' ? { invoice: 'in_1' } : {}) })
    expect((await t.send(early)).status).toBe(500)
    expect((await t.log()).find((e) => e.eventId === early.id)).toMatchObject({ status: 'failed' })
    await t.send(t.event('invoice.paid', invoice(shape, { total_excluding_tax: 5000 })))
    expect((await t.send(early)).status).toBe(200)
    const [commission] = (await t.api.commissions.list({})).items
    expect((await t.send(t.event('charge.refunded', { id: 'ch_1', object: 'charge', amount: 5000, amount_refunded: 5000 }))).status).toBe(200)
    const after = await t.api.commissions.get(commission!.commissionId)
    expect(after.status).toBe('refunded')
  })

  it('a wrong secret, a stale timestamp, a tampered body and an unknown integration: one identical 400, nothing recorded', async () => {
    const t = await connected()
    const answers = [
      await t.send(t.event('customer.created', customerObject), { secret: 'whsec_wrong' }),
      await t.send(t.event('customer.created', customerObject), { timestamp: Math.floor(t.clock.now() / 1000) - 301 }),
      await t.send(t.event('customer.created', customerObject), { tamper: true }),
      await t.send(t.event('customer.created', customerObject), { path: '/api/v1/integrations/00000000-0000-4000-8000-00000000dead/events' }),
    ]
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400])
    expect(new Set(answers.map((a) => a.text)).size).toBe(1)
    expect(JSON.parse(answers[0]!.text).message).toMatch(/signature/i)
    expect(await t.log()).toEqual([])
    expect((await t.api.customers.list({})).items).toEqual([])
  })

  it('a livemode mismatch and an unhandled type answer 200 and are recorded ignored', async () => {
    const t = await connected({ livemode: false })
    expect((await t.send(t.event('customer.created', customerObject))).status).toBe(200)
    expect((await t.send({ ...t.event('payment_intent.created', {}), livemode: false })).status).toBe(200)
    expect((await t.log()).map((e) => [e.status, e.reason]).sort()).toEqual([['ignored', 'livemode_mismatch'], ['ignored', 'unhandled_type']])
    expect((await t.api.customers.list({})).items).toEqual([])
  })

  it('an invoice of a customer not attributed is recorded ignored with not_attributed; a zero invoice is ignored', async () => {
    const t = await connected()
    await t.send(t.event('invoice.paid', invoice('new')))
    await t.send(t.event('invoice.paid', invoice('new', { id: 'in_2', total: 0, amount_paid: 0, total_excluding_tax: 0 })))
    expect((await t.log()).map((e) => e.reason).sort()).toEqual(['not_attributed', 'zero_amount'])
    expect((await t.api.commissions.list({})).items).toEqual([])
  })

  it('checkout.session.completed attributes the session\'s customer by client_reference_id; customer.updated by metadata.referral', async () => {
    const t = await connected()
    const session = { id: 'cs_1', object: 'checkout.session', customer: 'cus_9', client_reference_id: 'ANN-2026', customer_details: { email: 'checkout@example.com' }, metadata: { externalId: 'user-9' } }
    expect((await t.send(t.event('checkout.session.completed', session))).status).toBe(200)
    expect((await t.send(t.event('customer.updated', { ...customerObject, id: 'cus_8', email: 'updated@example.com' }))).status).toBe(200)
    const customers = (await t.api.customers.list({})).items.map((c) => [c.externalId, c.stripeCustomerId, c.email, c.affiliateId]).sort()
    expect(customers).toEqual([['cus_8', 'cus_8', 'updated@example.com', t.ann.id], ['user-9', 'cus_9', 'checkout@example.com', t.ann.id]])
  })

  it('charge.refunded found by the charge stored from the invoice claws back a paid commission; another currency is ignored', async () => {
    const t = await connected()
    await t.send(t.event('customer.created', customerObject))
    await t.send(t.event('invoice.paid', invoice('new', { total_excluding_tax: 10000, total: 10000, amount_paid: 10000, status_transitions: {} })))
    const [payout] = (await t.api.payouts.run({ workspaceId: WS_A })).payouts
    await t.api.payouts.update(payout!.payoutId, { status: 'processing' })
    await t.api.payouts.update(payout!.payoutId, { status: 'paid' })
    expect((await t.send(t.event('charge.refunded', { id: 'ch_1', object: 'charge', amount: 10000, amount_refunded: 2500 }))).status).toBe(200)
    const clawbacks = (await t.api.commissions.list({})).items.filter((c) => c.kind === 'clawback')
    expect(clawbacks).toHaveLength(1)
    expect(clawbacks[0]).toMatchObject({ amount: '-5.00' })
    await t.send(t.event('invoice.paid', invoice('old', { id: 'in_eur', currency: 'eur', charge: 'ch_eur' })))
    expect((await t.log()).find((e) => e.type === 'invoice.paid' && e.reason !== null)).toMatchObject({ status: 'ignored', reason: 'currency_mismatch' })
  })

  it('a body over the body limit is refused (413) before it is verified, and nothing is recorded', async () => {
    const t = await connected()
    const big = t.event('customer.created', { ...customerObject, description: 'x'.repeat(101 * 1024) })
    expect((await t.send(big)).status).toBe(413)
    expect(await t.log()).toEqual([])
  })

  it('an event is recorded in the transaction of its effects: when its record fails, nothing it made stays, and its redelivery makes it once', async () => {
    const log = failingEventLog()
    const t = await connected({ storage: log.storage })
    const created = t.event('customer.created', customerObject)
    log.arm()
    expect((await t.send(created)).status).toBe(500)
    expect((await t.api.customers.list({})).items).toEqual([])
    expect((await t.api.affiliates.get(t.ann.id)).totalSignups).toBe(0)
    expect(await t.log()).toEqual([])
    expect((await t.send(created)).status).toBe(200)
    expect((await t.api.customers.list({})).items).toHaveLength(1)

    const paid = t.event('invoice.paid', invoice('new'))
    log.arm()
    expect((await t.send(paid)).status).toBe(500)
    expect((await t.api.commissions.list({})).items).toEqual([])
    expect((await t.api.customers.list({})).items[0]).toMatchObject({ salesCount: 0, firstSaleAt: null })
    expect((await t.api.events.list({})).items.filter((e) => e.type === 'commission.created')).toEqual([])
    expect((await t.log()).map((e) => e.eventId)).toEqual([created.id])
    expect((await t.send(paid)).status).toBe(200)
    expect((await t.send(paid)).status).toBe(200)
    const commissions = (await t.api.commissions.list({})).items
    expect(commissions).toHaveLength(1)
    expect((await t.api.customers.list({})).items[0]).toMatchObject({ salesCount: 1 })
    expect((await t.api.affiliates.get(t.ann.id)).totalEarnings).toBe(9)
    expect((await t.api.events.list({})).items.filter((e) => e.type === 'commission.created')).toHaveLength(1)
    expect((await t.log()).find((e) => e.eventId === paid.id)).toMatchObject({ status: 'processed', commissionId: commissions[0]!.commissionId })
  })

  it('a refusal of ours (an unknown referral code, a click outside its window) answers 200, is recorded ignored with its code, and leaves nothing of its work', async () => {
    const t = await connected({ campaign: { attributionWindowDays: 7 } })
    const clickId = await t.click()
    t.clock.advance(7 * DAY + 1)
    const before = await withoutLog(t.storage)
    const unknown = t.event('customer.created', { ...customerObject, metadata: { referral: 'NOBODY-1' } })
    const late = t.event('customer.created', { ...customerObject, id: 'cus_2', metadata: { referral: clickId } })
    for (const event of [unknown, late, unknown]) expect((await t.send(event)).status).toBe(200)
    expect(await withoutLog(t.storage)).toBe(before)
    const reasons = (await t.log()).filter((e) => e.status === 'ignored').map((e) => [e.eventId, e.reason])
    expect(reasons.sort()).toEqual([[late.id, 'attribution_window'], [unknown.id, 'not_found']].sort())
  })

  it('a taxed invoice: the sale is the amount without tax, and a refund of the charge (tax included) takes back the same share of it; in full, all of it', async () => {
    const t = await connected()
    await t.send(t.event('customer.created', customerObject))
    // 45.00 plus 5.00 tax, charged 50.00; the campaign pays 20% of 45.00 = 9.00.
    await t.send(t.event('invoice.paid', invoice('new')))
    const [commission] = (await t.api.commissions.list({})).items
    expect(commission).toMatchObject({ amount: '9.00' })
    const half = t.event('charge.refunded', { id: 'ch_1', object: 'charge', amount: 5000, amount_refunded: 2500 })
    expect((await t.send(half)).status).toBe(200)
    // Half the charge is half the sale (22.50), so half the commission goes back.
    expect((await t.api.commissions.get(commission!.commissionId)).amount).toBe('4.50')
    const all = t.event('charge.refunded', { id: 'ch_1', object: 'charge', amount: 5000, amount_refunded: 5000 })
    expect((await t.send(all)).status).toBe(200)
    expect(await t.api.commissions.get(commission!.commissionId)).toMatchObject({ status: 'refunded', amount: '0.00' })
    expect((await t.log()).filter((e) => e.type === 'charge.refunded').map((e) => e.status)).toEqual(['processed', 'processed'])
  })

  it('a refund recorded failed before its sale is processed once by a delivery after the sale', async () => {
    const t = await connected()
    await t.send(t.event('customer.created', customerObject))
    const early = t.event('charge.refunded', { id: 'ch_1', object: 'charge', amount: 5000, invoice: 'in_1', amount_refunded: 1000 })
    expect((await t.send(early)).status).toBe(500)
    expect((await t.send(early)).status).toBe(500)
    expect((await t.log()).filter((e) => e.eventId === early.id)).toMatchObject([{ status: 'failed', commissionId: null }])
    await t.send(t.event('invoice.paid', invoice('old', { total_excluding_tax: 5000 })))
    expect((await t.send(early)).status).toBe(200)
    expect((await t.send(early)).status).toBe(200)
    const [commission] = (await t.api.commissions.list({})).items
    // 20% of 50.00 is 10.00; a fifth of the sale refunded takes 2.00 back, once.
    expect(commission!.amount).toBe('8.00')
    expect((await t.log()).filter((e) => e.eventId === early.id)).toMatchObject([{ status: 'processed', reason: null, commissionId: commission!.commissionId }])
  })

  it('a collision rolls the event back whole and it is tried again: the same invoice made by another event meanwhile is found then', async () => {
    // The next look for a sale misses it, as a transaction on PostgreSQL would that began before the other event's committed.
    let hide = false
    const t = await connected({ storage: intercepted(({ name, model }) => (hide && name === 'find' && model === 'sales' ? ((hide = false), Promise.resolve([])) : undefined)) })
    await t.send(t.event('customer.created', customerObject))
    expect((await t.send(t.event('invoice.paid', invoice('new')))).status).toBe(200)
    const [commission] = (await t.api.commissions.list({})).items
    hide = true
    const again = t.event('invoice.paid', invoice('old'))
    expect((await t.send(again)).status).toBe(200)
    expect(hide).toBe(false)
    expect((await t.api.commissions.list({})).items).toHaveLength(1)
    expect((await t.api.customers.list({})).items[0]).toMatchObject({ salesCount: 1 })
    expect((await t.log()).find((e) => e.eventId === again.id)).toMatchObject({ status: 'ignored', reason: 'duplicate_invoice', commissionId: commission!.commissionId })
  })
})
