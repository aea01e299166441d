import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node.js'
import { postgresStorage } from '../../adapters/postgres.js'
import { memoryStorage, sqlJsStorage, type CampaignCreateInput, type Storage } from '../../src/index.js'
import { snapshot } from '../support/fixtures.js'
import { apiCampaignInput, setup, UNKNOWN_ID, WS_A } from '../support/helpers.js'
import { dropSchema, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { checkoutSessionObject, deliver, invoiceObject, payment, stripeEvent } from '../support/stripe-events.js'
import { trackingSetup } from '../support/tracking-support.js'

// Fraud rules and the hold status (SPEC wave 4): each rule through leads and sales of the API and of
// Stripe, `off` / `flag` / `block`, and a held commission's review (release, void) on every storage,
// with payout runs and balances leaving it out until it is released.

const DAY = 86_400_000
const UA = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0'

type Modes = CampaignCreateInput['fraudRules']

async function program(options: { fraudRules?: Modes; storage?: Storage; campaign?: Partial<CampaignCreateInput> } = {}) {
  const t = setup(options.storage ? { storage: options.storage } : {})
  const { api } = t
  const campaign = await api.campaigns.create(
    apiCampaignInput({
      commissionType: 'fixed',
      amount: 10,
      payoutTerm: 0,
      ...(options.fraudRules ? { fraudRules: options.fraudRules } : {}),
      ...options.campaign,
    }),
  )
  const affiliate = await api.affiliates.create({
    email: 'ann.smith@gmail.com',
    campaignId: campaign.id,
    payoutMethod: 'PAYPAL',
    payoutEmail: 'ann.pay@example.com',
  })
  await api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  let invoices = 0
  const sale = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/sale', {
      body: {
        workspaceId: WS_A,
        externalId: 'user-1',
        email: 'buyer@example.com',
        referralCode: 'ANN-2026',
        amount: '100.00',
        currency: 'USD',
        invoiceId: `in_${++invoices}`,
        ...body,
      },
    })
  const lead = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/lead', {
      body: { workspaceId: WS_A, externalId: 'lead-1', email: 'buyer@example.com', referralCode: 'ANN-2026', ...body },
    })
  /** Opens the link through the redirect from `address` (as an adapter gives it), with `query` on the link; answers the clickId. */
  const click = async (address = '203.0.113.7', query = '', userAgent = UA) => {
    const response = await t.service.fetch(
      new Request(`http://test.local/api/v1/r/ANN-2026${query}`, { redirect: 'manual', headers: { 'user-agent': userAgent } }),
      {
        clientAddress: address,
      },
    )
    expect(response.status).toBe(302)
    await t.service.flush()
    return new URL(response.headers.get('location')!).searchParams.get('clickId')!
  }
  const earnings = async () => (await api.affiliates.get(affiliate.id)).totalEarnings
  const eventTypes = async () => (await api.events.list({ limit: 100 })).items.map((e) => e.type)
  return { ...t, campaign, affiliate, sale, lead, click, earnings, eventTypes }
}

describe("a campaign's fraudRules", () => {
  it('answers every rule at its default; a change names some rules and the others take their default', async () => {
    const p = await program()
    expect(p.campaign.fraudRules).toEqual({
      self_referral: 'block',
      disposable_email: 'flag',
      paid_ad_click: 'off',
      address_burst: 'flag',
      refund_rate: 'flag',
    })
    const changed = await p.api.campaigns.update(p.campaign.id, { fraudRules: { paid_ad_click: 'block', self_referral: 'flag' } })
    expect(changed.fraudRules).toEqual({
      self_referral: 'flag',
      disposable_email: 'flag',
      paid_ad_click: 'block',
      address_burst: 'flag',
      refund_rate: 'flag',
    })
    expect((await p.api.campaigns.get(p.campaign.id)).fraudRules).toEqual(changed.fraudRules)
  })

  it('refuses an unknown rule or mode (400 naming it) and changes nothing', async () => {
    const p = await program()
    const before = await snapshot(p.storage)
    const unknown = await p.call('PUT', `/campaigns?campaignId=${p.campaign.id}`, { body: { fraudRules: { velocity: 'block' } } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.errors[0]).toMatchObject({ path: 'fraudRules', msg: expect.stringContaining('unknown rule "velocity"') })
    const mode = await p.call('PUT', `/campaigns?campaignId=${p.campaign.id}`, { body: { fraudRules: { self_referral: 'maybe' } } })
    expect(mode.status).toBe(400)
    expect(mode.body.errors[0].msg).toContain('self_referral must be "off", "flag" or "block"')
    expect(await snapshot(p.storage)).toBe(before)
  })
})

describe('self_referral', () => {
  it("block (the default): the affiliate's own mailbox in another spelling earns nothing, skipped fraud_self_referral", async () => {
    const p = await program()
    const answer = await p.sale({ email: 'Ann.Smith+deal@googlemail.com', externalId: undefined })
    expect(answer.status).toBe(200)
    expect(answer.body.data).toMatchObject({ commission: null, skipped: 'fraud_self_referral' })
    expect(await p.earnings()).toBe(0)
    // Someone else is paid as before.
    expect((await p.sale({ email: 'buyer@example.com', externalId: 'user-2' })).body.data.commission).toMatchObject({
      status: 'pending',
      holdReasons: [],
    })
  })

  it('block refuses the lead (422 fraud_self_referral) and writes nothing; off lets it through', async () => {
    const p = await program()
    const before = await snapshot(p.storage)
    const refused = await p.lead({ email: 'annsmith@gmail.com' })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({
      code: 'fraud_self_referral',
      message: expect.stringContaining('fraud rule self_referral blocks this lead'),
    })
    expect(await snapshot(p.storage)).toBe(before)
    await p.api.campaigns.update(p.campaign.id, { fraudRules: { self_referral: 'off' } })
    expect((await p.lead({ email: 'annsmith@gmail.com' })).status).toBe(201)
  })

  it('flag: the commission is made held, with the rule as its reason, and earns nothing until released', async () => {
    const p = await program({ fraudRules: { self_referral: 'flag' } })
    const { commission } = (await p.sale({ email: 'ann.pay+1@example.com' })).body.data
    expect(commission).toMatchObject({ status: 'hold', holdReasons: ['self_referral'], amount: '10.00' })
    expect(await p.earnings()).toBe(0)
    expect(await p.eventTypes()).toEqual(expect.arrayContaining(['commission.created', 'commission.held']))
  })

  it('fires on a click from the device the affiliate uses the portal from (that day), not from another device', async () => {
    const p = await program()
    // What the portal records of the affiliate's own visit: the same hash a click from that device carries.
    const clickId = await p.click('198.51.100.4')
    const click = (await p.storage.transaction((tx) => tx.get('clicks', clickId)))!
    expect(click.device).not.toBe('')
    await p.storage.transaction((tx) => tx.update('affiliates', p.affiliate.id, { portalDevices: ['someone-else', click.device] }))
    const own = await p.sale({ clickId, referralCode: undefined, email: 'friend@example.com' })
    expect(own.body.data).toMatchObject({ commission: null, skipped: 'fraud_self_referral' })
    const other = await p.click('198.51.100.5')
    expect(
      (await p.sale({ clickId: other, referralCode: undefined, email: 'friend2@example.com', externalId: 'user-2' })).body.data.commission
        .status,
    ).toBe('pending')
  })
})

describe('disposable_email', () => {
  it('flag (the default): a disposable domain holds the commission; another domain does not', async () => {
    const p = await program()
    expect((await p.sale({ email: 'x@mailinator.com' })).body.data.commission).toMatchObject({
      status: 'hold',
      holdReasons: ['disposable_email'],
    })
    expect((await p.sale({ email: 'y@example.com', externalId: 'user-2' })).body.data.commission).toMatchObject({
      status: 'pending',
      holdReasons: [],
    })
  })

  it('block refuses the lead and the sale; off pays', async () => {
    const p = await program({ fraudRules: { disposable_email: 'block' } })
    expect((await p.lead({ email: 'x@mailinator.com' })).body.code).toBe('fraud_disposable_email')
    expect((await p.sale({ email: 'x@mailinator.com' })).body.data.skipped).toBe('fraud_disposable_email')
    await p.api.campaigns.update(p.campaign.id, { fraudRules: { disposable_email: 'off' } })
    expect((await p.sale({ email: 'x@mailinator.com' })).body.data.commission.status).toBe('pending')
  })
})

describe('paid_ad_click', () => {
  it('off by default; flag holds a sale whose click landed with gclid (and not one without); block skips it', async () => {
    const p = await program()
    const ad = await p.click('203.0.113.9', '?gclid=Cj0KCQ')
    expect((await p.storage.transaction((tx) => tx.get('clicks', ad)))!.paidAd).toBe(true)
    expect((await p.sale({ clickId: ad, referralCode: undefined })).body.data.commission.status).toBe('pending')
    await p.api.campaigns.update(p.campaign.id, { fraudRules: { paid_ad_click: 'flag' } })
    const ad2 = await p.click('203.0.113.10', '?fbclid=IwAR0')
    expect((await p.sale({ clickId: ad2, referralCode: undefined, externalId: 'user-2' })).body.data.commission).toMatchObject({
      status: 'hold',
      holdReasons: ['paid_ad_click'],
    })
    const organic = await p.click('203.0.113.11', '?utm_source=newsletter')
    expect((await p.sale({ clickId: organic, referralCode: undefined, externalId: 'user-3' })).body.data.commission.status).toBe('pending')
    await p.api.campaigns.update(p.campaign.id, { fraudRules: { paid_ad_click: 'block' } })
    const ad3 = await p.click('203.0.113.12', '?msclkid=abc')
    expect((await p.sale({ clickId: ad3, referralCode: undefined, externalId: 'user-4' })).body.data.skipped).toBe('fraud_paid_ad_click')
  })

  it('the beacon marks a click from its landingUrl (an absolute url or a path with its query)', async () => {
    const t = await trackingSetup()
    try {
      let tab = 0
      // Another browser tab each time, so each is a click of its own (not a repeat within the dedupe window).
      const clickOf = async (landingUrl: string) =>
        (await (await t.beacon({ referralCode: 'ANN-2026', event: 'click', landingUrl }, { 'user-agent': `${UA} Tab/${++tab}` })).json())
          .data.clickId
      const ad = await clickOf('https://shop.example.com/?via=ANN-2026&ttclid=E.C.P')
      const plain = await clickOf('/pricing?via=ANN-2026')
      const broken = await clickOf('http://[::1')
      const clicks = new Map((await t.clicks()).map((c) => [c.id, c]))
      expect([clicks.get(ad)?.paidAd, clicks.get(plain)?.paidAd, clicks.get(broken)?.paidAd]).toEqual([true, false, false])
      // Served over a socket: the adapter gave the address, so the click carries its hashes.
      expect(clicks.get(ad)).toMatchObject({ address: expect.stringMatching(/^[\w-]{16}$/), device: expect.stringMatching(/^[\w-]{16}$/) })
    } finally {
      await t.close()
    }
  })
})

describe('address_burst', () => {
  it("flag (the default): the 4th of an affiliate's customers from one address within 24 h is held, the 3rd is not", async () => {
    const p = await program()
    const statuses: string[] = []
    for (let i = 1; i <= 4; i++) {
      // Another browser each time (so each is a click of its own), one address, a minute apart.
      p.clock.advance(60_000)
      const clickId = await p.click('203.0.113.50', '', `${UA} Tab/${i}`)
      statuses.push(
        (await p.sale({ clickId, referralCode: undefined, externalId: `user-${i}`, email: `b${i}@example.com` })).body.data.commission
          .status,
      )
    }
    expect(statuses).toEqual(['pending', 'pending', 'pending', 'hold'])
    // Another address is no burst.
    const elsewhere = await p.click('203.0.113.51')
    expect(
      (await p.sale({ clickId: elsewhere, referralCode: undefined, externalId: 'user-5', email: 'b5@example.com' })).body.data.commission
        .status,
    ).toBe('pending')
    // A later sale of the first customer: it was one of three when it came, and stays unflagged.
    expect((await p.sale({ externalId: 'user-1', referralCode: undefined })).body.data.commission.status).toBe('pending')
  })

  it('counts only the window: a customer from that address 25 hours later starts a new count', async () => {
    const p = await program({ fraudRules: { address_burst: 'block' } })
    for (let i = 1; i <= 3; i++) {
      p.clock.advance(60_000)
      const clickId = await p.click('203.0.113.60', '', `${UA} Tab/${i}`)
      expect((await p.lead({ clickId, referralCode: undefined, externalId: `lead-${i}`, email: `l${i}@example.com` })).status).toBe(201)
    }
    const fourth = await p.click('203.0.113.60', '', `${UA} Tab/4`)
    expect((await p.lead({ clickId: fourth, referralCode: undefined, externalId: 'lead-4', email: 'l4@example.com' })).body.code).toBe(
      'fraud_address_burst',
    )
    p.clock.advance(25 * 3_600_000)
    const later = await p.click('203.0.113.60', '', `${UA} Tab/5`)
    expect((await p.lead({ clickId: later, referralCode: undefined, externalId: 'lead-5', email: 'l5@example.com' })).status).toBe(201)
  })
})

describe('refund_rate', () => {
  /** `count` sales of one customer, and a full refund of `refunded` of them. */
  async function history(p: Awaited<ReturnType<typeof program>>, count: number, refunded: number) {
    for (let i = 1; i <= count; i++) await p.sale({ invoiceId: `hist_${i}` })
    for (let i = 1; i <= refunded; i++) {
      const answer = await p.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: `hist_${i}` } })
      expect(answer.status).toBe(200)
    }
  }

  it('flag: 29 of 100 sales refunded is no flag, 31 of 100 is', async () => {
    const p = await program()
    await history(p, 100, 29)
    expect((await p.sale()).body.data.commission.status).toBe('pending')
    for (const invoiceId of ['hist_30', 'hist_31']) await p.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId } })
    // 31 of the 101 sales now: above 30 %.
    expect((await p.sale()).body.data.commission).toMatchObject({ status: 'hold', holdReasons: ['refund_rate'] })
  })

  it('needs 10 sales: 9 sales of which 4 refunded say too little, a 10th makes 4 of 10 too many', async () => {
    const p = await program()
    await history(p, 9, 4)
    // Checked against the 9 before it.
    expect((await p.sale({ invoiceId: 'tenth' })).body.data.commission.status).toBe('pending')
    expect((await p.sale({ invoiceId: 'eleventh' })).body.data.commission).toMatchObject({ status: 'hold', holdReasons: ['refund_rate'] })
  })

  it('keeps the earlier days read once a day, and a refund of an older sale (or a sale dated back) is seen by the next sale', async () => {
    const p = await program()
    // Ten sales on day 1, three refunded on day 2: 30 %, no flag.
    for (let i = 1; i <= 10; i++) await p.sale({ invoiceId: `old_${i}` })
    p.clock.advance(DAY)
    for (let i = 1; i <= 3; i++) await p.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: `old_${i}` } })
    p.clock.advance(DAY)
    expect((await p.sale({ invoiceId: 'day3_a' })).body.data.commission.status).toBe('pending')
    const kept = (await p.storage.transaction((tx) => tx.get('affiliates', p.affiliate.id)))!.refundWindow
    expect(kept).toEqual([new Date(p.clock.now()).toISOString().slice(0, 10), '10', '3'])
    // A fourth refund of a day-1 sale: 4 of 11 now; the kept window is emptied and read again.
    await p.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: 'old_4' } })
    expect((await p.storage.transaction((tx) => tx.get('affiliates', p.affiliate.id)))!.refundWindow).toEqual([])
    expect((await p.sale({ invoiceId: 'day3_b' })).body.data.commission).toMatchObject({ status: 'hold', holdReasons: ['refund_rate'] })
    // A sale dated on day 1 (reported late) changes the earlier days too: the window is emptied.
    await p.sale({ invoiceId: 'late', paidAt: new Date(p.clock.now() - 2 * DAY + 60_000).toISOString() })
    expect((await p.storage.transaction((tx) => tx.get('affiliates', p.affiliate.id)))!.refundWindow).toEqual([])
  })

  it('looks back 90 days only', async () => {
    const p = await program()
    await history(p, 10, 4)
    p.clock.advance(91 * DAY)
    expect((await p.sale()).body.data.commission.status).toBe('pending')
  })
})

describe('every rule off, and all of them flagging', () => {
  it('off pays everything; flag on every rule names each rule that fired, in rule order', async () => {
    const off = await program({
      fraudRules: { self_referral: 'off', disposable_email: 'off', paid_ad_click: 'off', address_burst: 'off', refund_rate: 'off' },
    })
    const ad = await off.click('203.0.113.70', '?gclid=1')
    expect((await off.sale({ clickId: ad, referralCode: undefined, email: 'annsmith+x@gmail.com' })).body.data.commission.status).toBe(
      'pending',
    )
    const flag = await program({
      fraudRules: { self_referral: 'flag', disposable_email: 'flag', paid_ad_click: 'flag', address_burst: 'flag', refund_rate: 'flag' },
    })
    const ad2 = await flag.click('203.0.113.71', '?gclid=2')
    expect(
      (await flag.sale({ clickId: ad2, referralCode: undefined, email: 'x@mailinator.com' })).body.data.commission.holdReasons,
    ).toEqual(['disposable_email', 'paid_ad_click'])
  })
})

describe('review: release and void', () => {
  it('a held commission is out of payout runs and of the balance; released, the next run pays it', async () => {
    const p = await program()
    await p.api.affiliates.update(p.affiliate.id, { payoutMethod: 'PAYPAL', payoutEmail: 'ann.pay@example.com' })
    const held = (await p.sale({ email: 'x@mailinator.com' })).body.data.commission
    const paid = (await p.sale({ email: 'y@example.com', externalId: 'user-2' })).body.data.commission
    p.clock.advance(DAY)
    const balance = await p.api.affiliates.balance(p.affiliate.id)
    expect(balance).toMatchObject({ due: '10.00', held: '0.00' })
    const first = await p.api.payouts.run({ workspaceId: WS_A })
    expect(first.payouts).toHaveLength(1)
    expect(first.payouts[0]).toMatchObject({ amount: '10.00', commissionCount: 1 })
    expect((await p.api.commissions.get(paid.commissionId)).payoutId).toBe(first.payouts[0]!.payoutId)
    expect(await p.api.commissions.get(held.commissionId)).toMatchObject({ status: 'hold', payoutId: null })
    // The review queue: the held ones, with their reasons.
    const queue = await p.api.commissions.list({ status: 'hold' })
    expect(queue.items.map((c) => [c.commissionId, c.holdReasons])).toEqual([[held.commissionId, ['disposable_email']]])
    const { items } = await p.api.commissions.release({ commissionIds: [held.commissionId] })
    expect(items).toEqual([expect.objectContaining({ commissionId: held.commissionId, status: 'pending', holdReasons: [] })])
    expect(await p.earnings()).toBe(20)
    expect(await p.api.affiliates.balance(p.affiliate.id)).toMatchObject({ due: '10.00', inPayout: '10.00' })
    const next = await p.api.payouts.run({ workspaceId: WS_A })
    expect(next.payouts[0]).toMatchObject({ amount: '10.00', commissionCount: 1 })
    expect((await p.api.commissions.get(held.commissionId)).payoutId).toBe(next.payouts[0]!.payoutId)
    const released = (await p.api.events.list({ type: 'commission.released' })).items
    expect(released.map((e) => e.data)).toEqual([
      expect.objectContaining({ commissionId: held.commissionId, previousStatus: 'hold', previousHoldReasons: ['disposable_email'] }),
    ])
  })

  it('void: voided earns nothing, cannot be refunded, deleted, re-set or released, and is kept', async () => {
    const p = await program()
    const held = (await p.sale({ email: 'x@mailinator.com' })).body.data.commission
    const { items } = await p.api.commissions.void({ commissionIds: [held.commissionId] })
    expect(items[0]).toMatchObject({ status: 'voided', holdReasons: [] })
    expect(await p.earnings()).toBe(0)
    const before = await snapshot(p.storage)
    const refund = await p.call('POST', '/commissions/refund', { body: { commissionId: held.commissionId } })
    expect([refund.status, refund.body.code]).toEqual([422, 'refund_refused'])
    const del = await p.call('DELETE', `/commissions?commissionId=${held.commissionId}`)
    expect([del.status, del.body.code]).toEqual([422, 'money_history'])
    const put = await p.call('PUT', `/commissions?commissionId=${held.commissionId}`, { body: { status: 'pending' } })
    expect([put.status, put.body.code, put.body.message]).toEqual([
      422,
      'invalid_status_transition',
      'A voided commission is final: its status cannot change',
    ])
    const again = await p.call('POST', '/commissions/release', { body: { commissionIds: [held.commissionId] } })
    expect([again.status, again.body.code, again.body.message]).toEqual([
      422,
      'not_under_review',
      'Only a held commission can be released; this one is voided',
    ])
    // A refund of its sale takes nothing from it.
    const saleRefund = await p.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: held.invoiceId } })
    expect(saleRefund.status).toBe(200)
    expect(saleRefund.body.data.commission).toMatchObject({ status: 'voided', amount: '10.00' })
    expect(JSON.parse(before).commissions).toEqual(JSON.parse(await snapshot(p.storage)).commissions)
    expect(await p.eventTypes()).toContain('commission.voided')
  })

  it('PUT cannot move a held commission, nor set hold; many at once are all or none; unknown is 404', async () => {
    const p = await program()
    const a = (await p.sale({ email: 'x@mailinator.com' })).body.data.commission
    const b = (await p.sale({ email: 'y@mailinator.com', externalId: 'user-2' })).body.data.commission
    const c = (await p.sale({ email: 'z@example.com', externalId: 'user-3' })).body.data.commission
    const put = await p.call('PUT', `/commissions?commissionId=${a.commissionId}`, { body: { status: 'pending' } })
    expect([put.status, put.body.message]).toEqual([422, expect.stringContaining('POST /commissions/release')])
    const set = await p.call('PUT', `/commissions?commissionId=${c.commissionId}`, { body: { status: 'hold' } })
    expect(set.status).toBe(400)
    const before = await snapshot(p.storage)
    const mixed = await p.call('POST', '/commissions/void', { body: { commissionIds: [a.commissionId, c.commissionId] } })
    expect([mixed.status, mixed.body.code]).toEqual([422, 'not_under_review'])
    const unknown = await p.call('POST', '/commissions/release', { body: { commissionIds: [a.commissionId, UNKNOWN_ID] } })
    expect(unknown.status).toBe(404)
    expect(await snapshot(p.storage)).toBe(before)
    const both = await p.call('POST', '/commissions/release', { body: { commissionIds: [a.commissionId, b.commissionId, a.commissionId] } })
    expect(both.status).toBe(200)
    expect(both.body.data.items.map((x: { status: string }) => x.status)).toEqual(['pending', 'pending'])
  })

  it('a held commission refunded in full before review becomes refunded', async () => {
    const p = await program()
    const held = (await p.sale({ email: 'x@mailinator.com' })).body.data.commission
    const answer = await p.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: held.invoiceId } })
    expect(answer.body.data.commission).toMatchObject({ status: 'refunded', amount: '0.00' })
  })

  it('reports count held and voided sales by status', async () => {
    const p = await program()
    const a = (await p.sale({ email: 'x@mailinator.com' })).body.data.commission
    await p.sale({ email: 'y@mailinator.com', externalId: 'user-2' })
    await p.api.commissions.void({ commissionIds: [a.commissionId] })
    const summary = await p.api.reports.summary({
      workspaceId: WS_A,
      from: new Date(p.clock.now() - DAY).toISOString(),
      to: new Date(p.clock.now() + DAY).toISOString(),
    })
    expect(summary.byStatus).toMatchObject({
      hold: { count: 1, amount: '10.00' },
      voided: { count: 1, amount: '10.00' },
      pending: { count: 0 },
    })
    expect(summary.commissions).toMatchObject({ count: 2, amount: '0.00' })
  })
})

describe('Stripe: the same rules on a provider', () => {
  const SECRET = 'whsec_test_fraud'

  it("a checkout by the affiliate's own e-mail is logged ignored (fraud_self_referral); a disposable one's invoice is held", async () => {
    const p = await program()
    const integration = await p.api.integrations.create({ workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET, livemode: false })
    const send = (event: unknown) => deliver(p.service.fetch, integration.endpointPath, event, SECRET, Math.floor(p.clock.now() / 1000))
    const created = Math.floor(p.clock.now() / 1000) - 60
    await send(
      stripeEvent(
        'checkout.session.completed',
        checkoutSessionObject('cus_self', { clientReferenceId: 'ANN-2026', email: 'annsmith@gmail.com', created }),
        'evt_self',
      ),
    )
    await send(
      stripeEvent(
        'checkout.session.completed',
        checkoutSessionObject('cus_temp', { clientReferenceId: 'ANN-2026', email: 'x@mailinator.com', created }),
        'evt_temp',
      ),
    )
    await send(stripeEvent('invoice.paid', invoiceObject(payment(1, 'cus_temp')), 'evt_inv'))
    const log = (await p.api.integrations.events({ integrationId: integration.integrationId })).items
    expect(log.find((e) => e.eventId === 'evt_self')).toMatchObject({ status: 'ignored', reason: 'fraud_self_referral' })
    const [commission] = (await p.api.commissions.list({ status: 'hold' })).items
    expect(commission).toMatchObject({ invoiceId: 'in_1', holdReasons: ['disposable_email'] })
  })
})

/** Each storage of this repository, opened empty: memory, the sql.js file, and PostgreSQL when the tests have one. */
function storages(): [string, () => Promise<Storage>][] {
  const list: [string, () => Promise<Storage>][] = [
    ['memory', async () => memoryStorage()],
    [
      'the sql.js file',
      async () => sqlJsStorage({ persist: fileJournal(join(mkdtempSync(join(tmpdir(), 'affiliate-fraud-')), 'db.sqlite')) }),
    ],
  ]
  if (postgresUrl) {
    list.push([
      'PostgreSQL',
      async () => {
        const schema = uniqueName('fraud')
        schemas.push(schema)
        return postgresStorage({ connectionString: postgresUrl!, schema })
      },
    ])
  }
  return list
}

const schemas: string[] = []
afterAll(async () => {
  if (schemas.length === 0) return
  const pool = await testPool(1)
  for (const schema of schemas) await dropSchema(pool, schema)
  await pool.end()
})

describe.each(storages())('hold, release and void on %s', (_name, open) => {
  it('stores the rules, the click facts and the reasons, and moves them through review', async () => {
    const storage = await open()
    try {
      const p = await program({ storage, fraudRules: { paid_ad_click: 'flag' } })
      const clickId = await p.click('203.0.113.80', '?gclid=1')
      const a = (await p.sale({ clickId, referralCode: undefined, email: 'x@mailinator.com' })).body.data.commission
      const b = (await p.sale({ email: 'y@mailinator.com', externalId: 'user-2' })).body.data.commission
      expect(a).toMatchObject({ status: 'hold', holdReasons: ['disposable_email', 'paid_ad_click'] })
      expect((await p.api.campaigns.get(p.campaign.id)).fraudRules.paid_ad_click).toBe('flag')
      expect((await p.api.commissions.list({ status: 'hold' })).items.map((c) => c.commissionId).sort()).toEqual(
        [a.commissionId, b.commissionId].sort(),
      )
      await p.api.commissions.release({ commissionIds: [a.commissionId] })
      await p.api.commissions.void({ commissionIds: [b.commissionId] })
      expect(await p.api.commissions.get(a.commissionId)).toMatchObject({ status: 'pending', holdReasons: [] })
      expect(await p.api.commissions.get(b.commissionId)).toMatchObject({ status: 'voided', holdReasons: [] })
      expect((await p.api.commissions.list({ status: 'hold' })).items).toEqual([])
      expect(await p.earnings()).toBe(10)
      const run = await p.api.payouts.run({ workspaceId: WS_A })
      expect(run.payouts.map((x) => x.commissionCount)).toEqual([1])
    } finally {
      await (storage as { close?: () => Promise<void> }).close?.()
    }
  })
})
