import { describe, expect, it } from 'vitest'
import { snapshot, storageKinds } from '../support/fixtures.js'
import { apiCampaignInput, centsOf, expectValidation, fieldError, KEY_B, setup, UNKNOWN_ID, WS_A, WS_B } from '../support/helpers.js'
import type { CampaignCreateInput, Storage } from '../../src/index.js'

// POST /conversions/lead|sale|refund (SPEC wave 3, "Customers and conversions"): the service turns
// a host's signups and sales into commissions by the campaign's reward rules.

const DAY = 86_400_000

async function program(options: { campaign?: Partial<CampaignCreateInput>; storage?: Storage } = {}) {
  const t = setup(options.storage ? { storage: options.storage } : {})
  const { api } = t
  const campaign = await api.campaigns.create(apiCampaignInput({ payoutTerm: 0, ...options.campaign }))
  const affiliate = await api.affiliates.create({
    email: 'ann@example.com',
    campaignId: campaign.id,
    payoutMethod: 'PAYPAL',
    payoutEmail: 'ann.pay@example.com',
  })
  const link = await api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  const lead = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/lead', {
      body: { workspaceId: WS_A, externalId: 'user-1', email: 'Buyer@Example.com', referralCode: 'ANN-2026', ...body },
    })
  const sale = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/sale', {
      body: { workspaceId: WS_A, externalId: 'user-1', amount: '100.00', currency: 'USD', invoiceId: 'in_1', ...body },
    })
  const refund = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: 'in_1', ...body } })
  /** Opens the link through the public redirect and answers the clickId it hands the landing page. */
  const click = async (code = 'ANN-2026') => {
    const response = await t.service.fetch(
      new Request(`http://test.local/api/v1/r/${code}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' },
      }),
    )
    expect(response.status).toBe(302)
    // The redirect answers before its click is written: store it, so snapshots taken next hold it.
    await t.service.flush()
    return new URL(response.headers.get('location')!).searchParams.get('clickId')!
  }
  const totals = async () => {
    const a = await api.affiliates.get(affiliate.id)
    const [l] = (await api.links.list({ affiliateId: affiliate.id })).items
    return { affiliate: [a.totalSignups, a.totalEarnings], link: [l!.totalSignups, l!.totalEarnings] }
  }
  return { ...t, campaign, affiliate, link, lead, sale, refund, click, totals }
}

describe('POST /conversions/lead', () => {
  it('makes the customer bound to the link, counts one signup, and a known externalId answers it unchanged (200)', async () => {
    const p = await program()
    const made = await p.lead()
    expect(made.status).toBe(201)
    expect(made.body.data).toMatchObject({
      workspaceId: WS_A,
      campaignId: p.campaign.id,
      affiliateId: p.affiliate.id,
      linkId: p.link.id,
      clickId: null,
      externalId: 'user-1',
      email: 'Buyer@Example.com',
      name: null,
      firstSaleAt: null,
      salesCount: 0,
    })
    expect(await p.totals()).toEqual({ affiliate: [1, 0], link: [1, 0] })
    // The first attribution wins: another affiliate named later changes nothing.
    const other = await p.api.affiliates.create({ email: 'bob@example.com', campaignId: p.campaign.id })
    const before = await snapshot(p.storage)
    const again = await p.lead({ referralCode: undefined, affiliateId: other.id })
    expect(again.status).toBe(200)
    expect(again.body.data).toEqual(made.body.data)
    expect(await snapshot(p.storage)).toBe(before)
    const events = await p.api.events.list({ type: 'customer.created' })
    expect(events.items.map((e) => (e.data as { customerId: string }).customerId)).toEqual([made.body.data.customerId])
  })

  it('takes exactly one of clickId, referralCode and affiliateId (400 naming the field), and writes nothing then', async () => {
    const p = await program()
    const before = await snapshot(p.storage)
    expectValidation(await p.lead({ referralCode: undefined }), [
      fieldError('clickId', 'clickId is required (or referralCode or promoCode or affiliateId)'),
    ])
    expectValidation(await p.lead({ affiliateId: p.affiliate.id }), [
      fieldError(
        'affiliateId',
        'affiliateId cannot be given with referralCode: give one of clickId, referralCode, promoCode or affiliateId',
      ),
    ])
    expect(await snapshot(p.storage)).toBe(before)
  })

  it('counts an e-mail once over customers and referred users', async () => {
    const p = await program()
    await p.api.referredUsers.create({ referredTo: 'buyer@example.com', affiliateId: p.affiliate.id })
    expect((await p.totals()).affiliate[0]).toBe(1)
    await p.lead()
    await p.lead({ externalId: 'user-2', email: 'second@example.com' })
    expect(await p.totals()).toEqual({ affiliate: [2, 0], link: [2, 0] })
  })

  it("refuses another workspace's affiliate as not found and a workspace not the caller's with 403", async () => {
    const p = await program()
    expect((await p.lead({ referralCode: undefined, affiliateId: UNKNOWN_ID })).status).toBe(404)
    expect(
      (
        await p.call('POST', '/conversions/lead', {
          key: KEY_B,
          body: { workspaceId: WS_A, externalId: 'x', email: 'x@example.com', affiliateId: p.affiliate.id },
        })
      ).status,
    ).toBe(403)
    expect(
      (
        await p.call('POST', '/conversions/lead', {
          key: KEY_B,
          body: { workspaceId: WS_B, externalId: 'x', email: 'x@example.com', affiliateId: p.affiliate.id },
        })
      ).status,
    ).toBe(404)
  })
})

describe('POST /conversions/sale', () => {
  it("makes the commission by the campaign's rule, with the sale's fields, and counts its earnings once", async () => {
    const p = await program()
    await p.lead()
    const response = await p.sale({
      amount: '49.99',
      invoiceId: 'in_1',
      chargeId: 'ch_1',
      subscriptionId: 'sub_1',
      paidAt: '2026-01-01T10:00:00+02:00',
    })
    expect(response.status).toBe(201)
    const { customer, commission, skipped } = response.body.data
    expect(skipped).toBeNull()
    // 20% of 49.99 is 9.998: rounded to the cent.
    expect(commission).toMatchObject({
      amount: '10.00',
      adminEarnedAmount: '39.99',
      status: 'pending',
      commissionDate: '2026-01-01T08:00:00.000Z',
      referredUser: 'Buyer@Example.com',
      referralCode: 'ANN-2026',
      kind: 'sale',
    })
    expect(customer).toMatchObject({ salesCount: 1, firstSaleAt: '2026-01-01T08:00:00.000Z' })
    // The commission carries its sale, as a commission and as a referred user (SPEC wave 4).
    const sale = {
      saleAmount: '49.99',
      currency: 'USD',
      customerId: customer.customerId,
      invoiceId: 'in_1',
      chargeId: 'ch_1',
      stripeSubscriptionId: 'sub_1',
      paymentIntentId: null,
    }
    expect(commission).toMatchObject(sale)
    expect(await p.api.commissions.get(commission.commissionId)).toMatchObject(sale)
    const referred = await p.api.referredUsers.get('buyer@example.com')
    expect(referred).toMatchObject({ commissionId: commission.commissionId, ...sale })
    expect(await p.totals()).toEqual({ affiliate: [1, 10], link: [1, 10] })
    const created = await p.api.events.list({ type: 'commission.created' })
    expect(created.items.map((e) => (e.data as { commissionId: string }).commissionId)).toEqual([commission.commissionId])
  })

  it.each([
    ['percentage', 12.5, '0.04', '0.01'], // 0.005: half away from zero
    ['percentage', 12.5, '0.12', '0.02'], // 0.015
    ['percentage', 33.33, '10.00', '3.33'], // 3.333
    ['fixed', 25, '10.00', '10.00'], // at most the sale
    ['fixed', 5, '10.00', '5.00'],
  ] as const)('%s %s of a %s sale earns %s', async (commissionType, amount, sale, expected) => {
    const p = await program({ campaign: { commissionType, amount } })
    await p.lead()
    const { commission } = (await p.sale({ amount: sale })).body.data
    expect(commission.amount).toBe(expected)
    expect(centsOf(commission.adminEarnedAmount)).toBe(centsOf(sale) - centsOf(expected))
  })

  it('a repeated invoiceId answers the first answer again with 200 and changes nothing, skipped or not', async () => {
    const p = await program()
    await p.lead()
    const first = await p.sale()
    const before = await snapshot(p.storage)
    const again = await p.sale({ amount: '5.00' })
    expect(again.status).toBe(200)
    expect(again.body.data).toEqual(first.body.data)
    expect(await snapshot(p.storage)).toBe(before)
    const skipped = await p.sale({ invoiceId: 'in_2', externalId: 'nobody' })
    expect(skipped.body.data).toEqual({ customer: null, commission: null, skipped: 'not_attributed' })
    const afterSkip = await snapshot(p.storage)
    expect((await p.sale({ invoiceId: 'in_2' })).body.data).toEqual(skipped.body.data)
    expect(await snapshot(p.storage)).toBe(afterSkip)
    // Even where it would now be refused: its click has since left the attribution window.
    const clickId = await p.click()
    p.clock.advance(31 * DAY)
    const late = await snapshot(p.storage)
    expect(await p.sale({ invoiceId: 'in_2', externalId: 'someone-new', email: 'new@example.com', clickId })).toMatchObject({
      status: 200,
      body: { data: skipped.body.data },
    })
    expect(await p.sale({ invoiceId: 'in_3', externalId: 'someone-new', email: 'new@example.com', clickId })).toMatchObject({ status: 422 })
    expect(await snapshot(p.storage)).toBe(late)
  })

  it('makes its customer from a click (then externalId or email is required), attributed to its link', async () => {
    const p = await program()
    const clickId = await p.click()
    const response = await p.sale({ externalId: undefined, email: 'New@Example.com', clickId })
    expect(response.status).toBe(201)
    expect(response.body.data.customer).toMatchObject({
      clickId,
      linkId: p.link.id,
      affiliateId: p.affiliate.id,
      externalId: 'new@example.com',
      email: 'New@Example.com',
      salesCount: 1,
    })
    expect(response.body.data.commission).toMatchObject({ amount: '20.00', referralCode: 'ANN-2026' })
    expect(await p.totals()).toEqual({ affiliate: [1, 20], link: [1, 20] })
    // The next sale finds the customer by the same key, without the click.
    expect((await p.sale({ externalId: undefined, email: 'new@example.com', invoiceId: 'in_2' })).status).toBe(201)
    expectValidation(await p.sale({ externalId: undefined, invoiceId: 'in_3', clickId }), [
      fieldError('externalId', 'externalId is required (or email)'),
    ])
  })

  it('refuses a click older than the attribution window with 422 and writes nothing', async () => {
    const p = await program({ campaign: { attributionWindowDays: 7 } })
    const clickId = await p.click()
    p.clock.advance(7 * DAY + 1)
    const before = await snapshot(p.storage)
    expect(await p.sale({ clickId })).toMatchObject({
      status: 422,
      body: { status: 422, message: 'Click is outside the attribution window' },
    })
    expect(await p.lead({ referralCode: undefined, clickId })).toMatchObject({
      status: 422,
      body: { message: 'Click is outside the attribution window' },
    })
    expect(await snapshot(p.storage)).toBe(before)
  })

  describe('skip reasons: 200, no commission, nothing counted', () => {
    const skips: [string, (p: Awaited<ReturnType<typeof program>>) => Promise<Record<string, unknown>>, Partial<CampaignCreateInput>?][] = [
      ['not_attributed', async () => ({ externalId: 'stranger' })],
      ['currency_mismatch', async () => ({ currency: 'EUR' })],
      ['currency_mismatch', async () => ({ currency: 'JPY', amount: 1000 })],
      ['affiliate_banned', async (p) => (await p.api.affiliates.update(p.affiliate.id, { isBanned: true }), {})],
      ['affiliate_inactive', async (p) => (await p.api.affiliates.update(p.affiliate.id, { isActive: false }), {})],
      ['outside_recurring_window', async (p) => (await p.sale({ invoiceId: 'in_0' }), {}), { recurringMonths: 0 }],
      ['max_commissions_reached', async (p) => (await p.sale({ invoiceId: 'in_0' }), {}), { maxCommissionsPerCustomer: 1 }],
      ['zero_amount', async () => ({ amount: '0.01' })], // 20% of 0.01 rounds to 0.00
      ['zero_amount', async () => ({}), { amount: 0 }],
    ]
    it.each(skips)('%s', async (reason, arrange, campaign) => {
      const p = await program({ campaign: campaign ?? {} })
      await p.lead()
      const body = await arrange(p)
      const totals = await p.totals()
      const commissions = (await p.api.commissions.list()).pagination.total
      const response = await p.sale(body)
      expect(response.status).toBe(200)
      expect(response.body.data).toMatchObject({ commission: null, skipped: reason })
      expect(response.body.data.customer === null).toBe(reason === 'not_attributed')
      expect(await p.totals()).toEqual(totals)
      expect((await p.api.commissions.list()).pagination.total).toBe(commissions)
    })
  })

  it('recurring window: N calendar months (UTC) from the first paid sale; the first second after it is skipped', async () => {
    const p = await program({ campaign: { recurringMonths: 1 } })
    await p.lead()
    const at = (invoiceId: string, paidAt: string) => p.sale({ invoiceId, paidAt }).then((r) => r.body.data.skipped)
    expect(await at('in_1', '2026-01-31T10:00:00.000Z')).toBeNull()
    // January 31 + 1 month is the last day of February.
    expect(await at('in_2', '2026-02-28T09:59:59.000Z')).toBeNull()
    expect(await at('in_3', '2026-02-28T10:00:00.000Z')).toBe('outside_recurring_window')
    expect(await at('in_4', '2026-02-28T10:00:01.000Z')).toBe('outside_recurring_window')
    expect((await p.api.customers.list()).items[0]).toMatchObject({ firstSaleAt: '2026-01-31T10:00:00.000Z', salesCount: 4 })
  })

  it('refuses bad input with 400 naming each field, and writes nothing', async () => {
    const p = await program()
    await p.lead()
    const before = await snapshot(p.storage)
    const bad = (body: Record<string, unknown>) => p.call('POST', '/conversions/sale', { body })
    const base = { workspaceId: WS_A, externalId: 'user-1', currency: 'USD', invoiceId: 'in_1' }
    const amountError = fieldError('amount', 'amount must be a number above zero with at most two decimals')
    expectValidation(await bad({ ...base, amount: -5 }), [amountError])
    expectValidation(await bad({ ...base, amount: '12.345' }), [amountError])
    expectValidation(await bad({ ...base, amount: 12.345 }), [amountError])
    expectValidation(await bad({ ...base, amount: 'Infinity' }), [amountError])
    expectValidation(await bad({ ...base, amount: 0 }), [fieldError('amount', 'amount must be more than zero')])
    const { invoiceId: _, ...noInvoice } = base
    expectValidation(await bad({ ...noInvoice, amount: 10 }), [fieldError('invoiceId', 'invoiceId is required')])
    expectValidation(await bad({ ...base, amount: 10, coupon: 'X' }), [fieldError('coupon', 'coupon is not a known field')])
    expectValidation(await bad({ ...base, amount: 10, currency: 'usd' }), [
      fieldError('currency', 'currency must be an ISO 4217 currency code of three capital letters'),
    ])
    // The typed API refuses what JSON cannot carry, too.
    for (const amount of [Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      await expect(p.api.conversions.sale({ ...base, amount })).rejects.toMatchObject({ status: 400, errors: [{ path: 'amount' }] })
    }
    expect(await snapshot(p.storage)).toBe(before)
  })
})

describe('POST /conversions/refund', () => {
  it('takes back the commission in proportion, the last refund what is left, so cents never drift', async () => {
    const p = await program()
    await p.lead()
    await p.sale({ amount: '100.00' })
    const parts = []
    for (const [amount, refundId] of [
      ['33.33', 're_1'],
      ['33.33', 're_2'],
      [undefined, 're_3'],
    ] as const) {
      const response = await p.refund({ amount, refundId })
      expect(response.status).toBe(200)
      expect(response.body.data.clawback).toBeNull()
      parts.push(response.body.data.commission.amount)
    }
    // 20.00 x 33.33% = 6.666 -> 6.67 taken; then 13.332 -> 13.33 in all (6.66); the rest 6.67.
    expect(parts).toEqual(['13.33', '6.67', '0.00'])
    const commission = (await p.api.commissions.list()).items[0]!
    expect(commission).toMatchObject({ amount: '0.00', status: 'refunded' })
    expect(await p.totals()).toEqual({ affiliate: [1, 0], link: [1, 0] })
    expect((await p.refund({ refundId: 're_4' })).status).toBe(422)
  })

  it('a repeated refundId answers the first answer and changes nothing', async () => {
    const p = await program()
    await p.lead()
    await p.sale()
    const first = await p.refund({ amount: '10.00', refundId: 're_1' })
    const before = await snapshot(p.storage)
    const again = await p.refund({ amount: '50.00', refundId: 're_1' })
    expect(again).toMatchObject({ status: 200, body: { data: first.body.data } })
    expect(await snapshot(p.storage)).toBe(before)
  })

  it('a refundId already used for another sale is 422 duplicate, and changes nothing', async () => {
    const p = await program()
    await p.lead()
    await p.sale()
    await p.sale({ invoiceId: 'in_2' })
    expect((await p.refund({ amount: '10.00', refundId: 're_1' })).status).toBe(200)
    const before = await snapshot(p.storage)
    const reused = await p.refund({ invoiceId: 'in_2', amount: '10.00', refundId: 're_1' })
    expect(reused.body).toEqual({ status: 422, code: 'duplicate', message: 'This refundId was already used for another sale' })
    // An unknown sale too: the refundId is another sale's.
    expect((await p.refund({ invoiceId: 'in_nowhere', refundId: 're_1' })).body.code).toBe('duplicate')
    expect(await snapshot(p.storage)).toBe(before)
    // The same refundId of the same sale is still its first answer.
    expect((await p.refund({ amount: '10.00', refundId: 're_1' })).status).toBe(200)
  })

  it('a paid commission gets a clawback through the refund path; refunds never take back more than was paid', async () => {
    const p = await program()
    await p.lead()
    await p.sale({ amount: '100.00', chargeId: 'ch_1' })
    const [payout] = (await p.api.payouts.run({ workspaceId: WS_A })).payouts
    await p.api.payouts.update(payout!.payoutId, { status: 'processing' })
    await p.api.payouts.update(payout!.payoutId, { status: 'paid' })
    const response = await p.refund({ invoiceId: undefined, chargeId: 'ch_1', amount: '25.00' })
    expect(response.body.data.commission).toMatchObject({ amount: '20.00', refundedAmount: '5.00', status: 'paid' })
    expect(response.body.data.clawback).toMatchObject({
      kind: 'clawback',
      amount: '-5.00',
      reversesCommissionId: response.body.data.commission.commissionId,
    })
    const rest = await p.refund()
    expect(rest.body.data.commission).toMatchObject({ refundedAmount: '20.00', status: 'refunded' })
    expect(rest.body.data.clawback).toMatchObject({ amount: '-15.00' })
    expect(await p.refund({ amount: '0.01' })).toMatchObject({ status: 422 })
    const balance = await p.api.affiliates.balance(p.affiliate.id)
    expect(balance).toMatchObject({ due: '-20.00', paidOut: '20.00' })
  })

  it('answers 404 for a sale without a commission or an unknown invoice, and 422 for more than is left', async () => {
    const p = await program()
    await p.lead()
    await p.sale({ invoiceId: 'in_skip', currency: 'EUR' })
    expect(await p.refund({ invoiceId: 'in_skip' })).toMatchObject({ status: 404 })
    expect(await p.refund({ invoiceId: 'in_none' })).toMatchObject({ status: 404 })
    await p.sale()
    const before = await snapshot(p.storage)
    expect(await p.refund({ amount: '100.01' })).toMatchObject({ status: 422 })
    expect(await snapshot(p.storage)).toBe(before)
    expectValidation(await p.refund({ invoiceId: undefined }), [fieldError('invoiceId', 'invoiceId is required (or chargeId)')])
  })
})

describe.each(storageKinds)('conversions on %s', (_name, makeStorage) => {
  it('a lead, sales and refunds end with the same records and counters', async () => {
    const p = await program({ storage: await makeStorage(), campaign: { maxCommissionsPerCustomer: 2 } })
    await p.lead()
    expect((await p.sale({ invoiceId: 'in_1' })).status).toBe(201)
    expect((await p.sale({ invoiceId: 'in_2', amount: '10.00' })).status).toBe(201)
    expect((await p.sale({ invoiceId: 'in_3' })).body.data.skipped).toBe('max_commissions_reached')
    expect((await p.refund({ invoiceId: 'in_2', amount: '5.00', refundId: 'r' })).body.data.commission.amount).toBe('1.00')
    expect(await p.totals()).toEqual({ affiliate: [1, 21], link: [1, 21] })
    expect((await p.api.customers.list()).items[0]).toMatchObject({ salesCount: 3 })
  })
})

describe('a sale paid before its customer was attributed earns nothing (before_attribution), on every path', () => {
  it('lead then sale: a sale paid before the lead is skipped and not counted in the history; one paid after earns', async () => {
    const p = await program({ campaign: { recurringMonths: 0 } })
    p.clock.advance(DAY)
    const lead = await p.lead()
    expect(lead.body.data.attributedAt).toBe(new Date(p.clock.now()).toISOString())
    const early = await p.sale({ paidAt: new Date(p.clock.now() - 1).toISOString() })
    expect(early.status).toBe(200)
    expect(early.body.data).toMatchObject({
      commission: null,
      skipped: 'before_attribution',
      customer: { salesCount: 0, firstSaleAt: null },
    })
    expect(await p.totals()).toEqual({ affiliate: [1, 0], link: [1, 0] })
    // Only the first sale earns (recurringMonths 0): the one before the attribution was not the referred customer's first.
    const first = await p.sale({ invoiceId: 'in_2', paidAt: new Date(p.clock.now()).toISOString() })
    expect(first.body.data).toMatchObject({ skipped: null, commission: { amount: '20.00' }, customer: { salesCount: 1 } })
  })

  it('a sale naming a click it was paid before makes the customer (attributed at the click) and is skipped, not refused', async () => {
    const p = await program()
    const clickId = await p.click()
    const response = await p.sale({
      externalId: 'user-9',
      email: 'nine@example.com',
      clickId,
      paidAt: new Date(p.clock.now() - 1).toISOString(),
    })
    expect(response.status).toBe(200)
    expect(response.body.data).toMatchObject({
      commission: null,
      skipped: 'before_attribution',
      customer: { clickId, attributedAt: new Date(p.clock.now()).toISOString() },
    })
    expect((await p.sale({ externalId: 'user-9', invoiceId: 'in_2' })).body.data.commission).toMatchObject({ amount: '20.00' })
  })

  it('a lead through a click is attributed at the click; a sale naming a code is attributed at its own time', async () => {
    const p = await program()
    const clickId = await p.click()
    p.clock.advance(DAY)
    expect((await p.lead({ referralCode: undefined, clickId })).body.data.attributedAt).toBe(new Date(p.clock.now() - DAY).toISOString())
    const paidAt = new Date(p.clock.now() - 3 * DAY).toISOString()
    const coded = await p.sale({ externalId: 'user-2', email: 'two@example.com', referralCode: 'ANN-2026', paidAt })
    expect(coded.body.data).toMatchObject({ skipped: null, customer: { attributedAt: paidAt } })
  })
})

describe('campaign reward fields', () => {
  it('recurringMonths is an integer 0..120 or null, maxCommissionsPerCustomer an integer >= 1 or null (400 naming the field otherwise)', async () => {
    const t = setup()
    const base = { campaignName: 'C', workspaceId: WS_A, commissionType: 'percentage', amount: 10, url: 'https://shop.example.com/' }
    const post = (fields: Record<string, unknown>) => t.call('POST', '/campaigns', { body: { ...base, ...fields } })
    for (const recurringMonths of [-1, 121, 1.5, '3']) {
      expectValidation(await post({ recurringMonths }), [fieldError('recurringMonths', 'recurringMonths must be an integer from 0 to 120')])
    }
    for (const maxCommissionsPerCustomer of [0, -2, 2.5]) {
      expectValidation(await post({ maxCommissionsPerCustomer }), [
        fieldError('maxCommissionsPerCustomer', 'maxCommissionsPerCustomer must be an integer of 1 or more'),
      ])
    }
    const made = (await post({ recurringMonths: 120, maxCommissionsPerCustomer: 1_000_000 })).body.data
    expect(made).toMatchObject({ recurringMonths: 120, maxCommissionsPerCustomer: 1_000_000 })
    const cleared = await t.call('PUT', `/campaigns?campaignId=${made.id}`, {
      body: { recurringMonths: null, maxCommissionsPerCustomer: null },
    })
    expect(cleared.body.data).toMatchObject({ recurringMonths: null, maxCommissionsPerCustomer: null })
  })
})
