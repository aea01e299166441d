import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { adminVisitor, visibleText } from '../support/admin-visitor.js'
import { manualClock } from '../support/helpers.js'

// What the admin's pages show (issue 38): each figure from the API's own answers, money per
// currency, the campaign's rules and links, the applicants' answers, the refund the service will make.

const WS = '11111111-1111-4111-8111-111111111111'
const DAY = 86_400_000

function setup(options: { portal?: boolean } = {}) {
  const clock = manualClock(Date.UTC(2026, 2, 15, 12))
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    clock,
    rateLimit: false,
    admin: { authorize: () => ({ userId: 'owner', workspaceIds: [WS] }), secret: 'a'.repeat(32) },
    ...(options.portal
      ? {
          portal: {
            secret: 'p'.repeat(32),
            publicUrl: 'https://partners.example.com',
            sendSignInLink: () => undefined,
            sendNotice: () => undefined,
          },
        }
      : {}),
  })
  return { service, api: service.api, clock, browser: adminVisitor(service) }
}

async function program(t: ReturnType<typeof setup>, currency = 'USD', name = 'Partners') {
  const campaign = await t.api.campaigns.create({
    workspaceId: WS,
    campaignName: name,
    url: 'https://shop.example.com/pricing',
    commissionType: 'percentage',
    amount: 20,
    currency,
    recurringMonths: 12,
    maxCommissionsPerCustomer: 24,
  })
  const affiliate = await t.api.affiliates.create({
    email: `ann-${currency.toLowerCase()}@example.com`,
    campaignId: campaign.id,
    payoutEmail: `ann@pay-${currency.toLowerCase()}.example.com`,
    payoutMethod: 'PAYPAL',
  })
  return { campaign, affiliate }
}

describe('admin pages', () => {
  it('confirms a refund of a paid commission with the clawback the service will make, then shows it in the history', async () => {
    const t = setup()
    const { campaign, affiliate } = await program(t)
    const m = await t.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'cus@example.com',
      amount: '20.00',
      status: 'paid',
    })
    await t.browser.get('/admin/commissions')
    const ask = await t.browser.post('/admin/commissions/refund', { commissionId: m.commissionId, amount: '5' })
    expect(ask.status).toBe(200)
    expect(visibleText(ask.text)).toContain(
      'Refund 5.00 USD of 20.00 USD: the commission was paid, so a clawback of -5.00 USD goes into the affiliate’s next payout.',
    )
    expect(visibleText(ask.text)).not.toContain('drops from')
    expect((await t.api.commissions.list({ workspaceId: WS, kind: 'clawback' })).items).toHaveLength(0)
    const done = await t.browser.post('/admin/commissions/refund', { commissionId: m.commissionId, amount: '5', confirmed: 'yes' })
    expect(done.status).toBe(303)
    const [clawback] = (await t.api.commissions.list({ workspaceId: WS, kind: 'clawback' })).items
    expect(clawback).toMatchObject({ amount: '-5.00', reversesCommissionId: m.commissionId })
    const detail = visibleText((await t.browser.get(done.location!)).text)
    expect(detail).toContain('Commission refunded.')
    expect(detail).toContain('Refunded after payment: clawback of -5.00 USD (pending, into the next payout).')
    expect(detail).toContain('Refunded after payment 5.00 USD')
    // The clawback's page says what made it, and links back.
    const own = await t.browser.get(`/admin/commissions/detail?commissionId=${clawback!.commissionId}`)
    expect(visibleText(own.text)).toContain('Clawback of -5.00 USD made by a refund after payment of the sale’s commission.')
    expect(own.text).toContain(`/admin/commissions/detail?commissionId=${m.commissionId}`)
  })

  it('confirms a refund of an unpaid commission in a pending payout with what happens to both, and shows a refused amount as the API words it', async () => {
    const t = setup()
    const { campaign, affiliate } = await program(t)
    await t.api.campaigns.update(campaign.id, { payoutTerm: 0, minimumPayoutAmount: 0 })
    const m = await t.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'cus@example.com',
      amount: '20.00',
    })
    await t.api.commissions.create({ campaignId: campaign.id, affiliateId: affiliate.id, referredUser: 'two@example.com', amount: '10.00' })
    await t.api.payouts.run({ workspaceId: WS })
    await t.browser.get('/admin/commissions')
    const ask = await t.browser.post('/admin/commissions/refund', { commissionId: m.commissionId, amount: '5.00' })
    expect(visibleText(ask.text)).toContain(
      'Refund 5.00 USD of 20.00 USD: the commission drops from 20.00 USD to 15.00 USD. It leaves its pending payout, which drops from 30.00 USD to 10.00 USD.',
    )
    const tooMuch = await t.browser.post('/admin/commissions/refund', { commissionId: m.commissionId, amount: '25.00' })
    expect(tooMuch.status).toBe(422)
    expect(tooMuch.text).toContain('value="25.00"')
    const badAmount = await t.browser.post('/admin/commissions/refund', { commissionId: m.commissionId, amount: '1.234' })
    expect(badAmount.status).toBe(400)
    expect(badAmount.text).toContain('id="amount-error"')
    expect((await t.api.commissions.get(m.commissionId)).amount).toBe('20.00')
  })

  it('confirms a refund of a commission in a payout being paid as the clawback the service makes, not as a drop', async () => {
    const t = setup()
    const { campaign, affiliate } = await program(t)
    await t.api.campaigns.update(campaign.id, { payoutTerm: 0, minimumPayoutAmount: 0 })
    const m = await t.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'cus@example.com',
      amount: '20.00',
    })
    const [payout] = (await t.api.payouts.run({ workspaceId: WS })).payouts
    await t.api.payouts.update(payout!.payoutId, { status: 'processing' })
    await t.browser.get('/admin/commissions')
    const ask = await t.browser.post('/admin/commissions/refund', { commissionId: m.commissionId, amount: '5' })
    expect(visibleText(ask.text)).toContain(
      'Refund 5.00 USD of 20.00 USD: the commission is in a payout being paid, so a clawback of -5.00 USD goes into the affiliate’s next payout.',
    )
  })

  it('shows a sale’s amount, currency, customer and payment ids beside its commission', async () => {
    const t = setup()
    const { campaign, affiliate } = await program(t, 'EUR')
    const link = await t.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-EU' })
    const sale = await t.api.conversions.sale({
      workspaceId: WS,
      referralCode: link.referralCode,
      externalId: 'user-42',
      email: 'buyer@example.com',
      amount: '49.00',
      currency: 'EUR',
      invoiceId: 'in_1QxYZ',
      chargeId: 'ch_3QxYZ',
      subscriptionId: 'sub_1QxYZ',
    })
    const m = sale.commission!
    expect(m).toMatchObject({ amount: '9.80', saleAmount: '49.00', campaignId: campaign.id })
    const list = visibleText((await t.browser.get('/admin/commissions')).text)
    expect(list).toContain('Sale Commission')
    expect(list).toMatch(/buyer@example\.com 49\.00 EUR 9\.80 EUR/)
    const detail = visibleText((await t.browser.get(`/admin/commissions/detail?commissionId=${m.commissionId}`)).text)
    // The overview: the referred revenue beside the commission it earned.
    expect(visibleText((await t.browser.get('/admin')).text)).toMatch(/Referred revenue 49\.00 EUR new Commissions earned 9\.80 EUR new/)
    for (const shown of [
      'Sale amount 49.00 EUR',
      'Currency EUR',
      'buyer@example.com (id user-42)',
      'Invoice in_1QxYZ',
      'Charge ch_3QxYZ',
      'Subscription sub_1QxYZ',
      'Payment intent —',
      'Sale of 49.00 EUR (invoice in_1QxYZ) earned this commission.',
    ]) {
      expect(detail).toContain(shown)
    }
  })

  it('shows money per currency on the overview, never summed across currencies', async () => {
    const t = setup()
    const usd = await program(t, 'USD', 'US partners')
    const eur = await program(t, 'EUR', 'EU partners')
    await t.api.commissions.create({
      campaignId: usd.campaign.id,
      affiliateId: usd.affiliate.id,
      referredUser: 'a@example.com',
      amount: '50.00',
    })
    await t.api.commissions.create({
      campaignId: eur.campaign.id,
      affiliateId: eur.affiliate.id,
      referredUser: 'b@example.com',
      amount: '100.00',
    })
    const page = await t.browser.get('/admin')
    expect(page.status).toBe(200)
    const text = visibleText(page.text)
    expect(text).toMatch(/Commissions earned 100\.00 EUR new 50\.00 USD new/)
    expect(text).not.toContain('150.00')
    expect(text).toContain('EUR campaigns: clicks and earnings per day')
    expect(text).toContain('USD campaigns: clicks and earnings per day')
    // Each affiliate's earnings in its campaign's currency.
    expect(text).toContain('ann-eur@example.com 0 1 100.00 EUR')
  })

  it('shows any period the reports accept, and a period they refuse as their message', async () => {
    const t = setup()
    await program(t)
    const long = await t.browser.get('/admin?from=2025-02-01&to=2026-03-07')
    expect(long.status).toBe(200)
    const text = visibleText(long.text)
    expect(text).toContain('From 2025-02-01 to 2026-03-07 (UTC), compared with the 400 days before.')
    expect(text).toContain('Clicks and earnings per week')
    expect(long.text).toContain('value="2025-02-01"')
    const backwards = await t.browser.get('/admin?from=2026-03-07&to=2026-03-01')
    expect(backwards.status).toBe(400)
    expect(visibleText(backwards.text)).toContain('That period cannot be shown: to must not be before from')
    expect(backwards.text).toContain('value="2026-03-07"')
    const tooLong = await t.browser.get('/admin?from=2000-01-01&to=2026-03-01')
    expect(tooLong.status).toBe(400)
    expect(visibleText(tooLong.text)).toContain('from must be at most 3660 days before to')
    expect((await t.browser.get('/admin?days=&from=someday')).status).toBe(400)
    // A preset chosen while dates are typed is the preset.
    expect(visibleText((await t.browser.get('/admin?days=7&from=2025-02-01&to=2026-03-07')).text)).toContain(
      'From 2026-03-09 to 2026-03-15 (UTC), compared with the 7 days before.',
    )
  })

  it('shows a campaign’s reward rules, its join link and its referral links’ format, and the program name', async () => {
    const t = setup({ portal: true })
    const { campaign } = await program(t)
    await t.api.campaigns.update(campaign.id, {
      isDefault: true,
      allowedUrlParameters: ['via', 'ref'],
      payoutTerm: 30,
      minimumPayoutAmount: 50,
    })
    const list = visibleText((await t.browser.get('/admin/campaigns')).text)
    expect(list).toContain('Program name in e-mails to affiliates: Partners')
    expect(list).toContain('20% of each sale, for 12 months from a customer’s first paid sale, at most 24 per customer')
    const page = await t.browser.get(`/admin/campaigns/edit?campaignId=${campaign.id}`)
    const text = visibleText(page.text)
    for (const rule of [
      '20% of each sale, for 12 months from a customer’s first paid sale',
      'at most 24 commissions per customer',
      'clicks credited for 30 days',
      'payable 30 days after the sale',
      'minimum payout 50.00 USD',
    ]) {
      expect(text).toContain(rule)
    }
    expect(page.text).toContain(`data-copy="Copy the join link">https://partners.example.com/portal/join/${campaign.id}</code>`)
    expect(page.text).toContain('data-copy="Copy the referral link format">https://shop.example.com/pricing?via=REF-AB12CD34</code>')
    expect(page.text).toContain('data-copy="Copy the tracked redirect format">https://partners.example.com/api/v1/r/REF-AB12CD34</code>')
    expect(page.text).not.toContain('id="share-format"')
    await t.api.campaigns.update(campaign.id, { beaconInstalled: true })
    expect((await t.browser.get(`/admin/campaigns/edit?campaignId=${campaign.id}`)).text).toContain(
      'data-copy="Copy the format of links on your own site">https://shop.example.com/pricing?via=REF-AB12CD34</code>',
    )
    // The form still edits every rule.
    expect(page.text).toContain('name="recurringMonths"')
    expect(page.text).toContain('name="maxCommissionsPerCustomer"')
    const off = setup()
    const other = await program(off)
    expect(visibleText((await off.browser.get(`/admin/campaigns/edit?campaignId=${other.campaign.id}`)).text)).toContain(
      'The affiliate portal is off: affiliates join through the API.',
    )
  })

  it('shows what applicants answered on the queue and on their page, and rejects from there after a confirmation', async () => {
    const t = setup()
    const { campaign } = await program(t)
    const about = 'I review budgeting tools on my blog (40k readers a month) and in a newsletter. '.repeat(3).trim()
    const applicant = await t.api.affiliates.create({
      email: 'dee@example.com',
      campaignId: campaign.id,
      isActive: false,
      details: JSON.stringify({ website: 'https://dee.example.com', about }),
    })
    const queue = visibleText((await t.browser.get('/admin/affiliates?status=pending')).text)
    expect(queue).toContain('Website or social profile: https://dee.example.com · How they will promote you: I review budgeting tools')
    expect(queue).toContain('…')
    const page = await t.browser.get(`/admin/affiliates/detail?affiliateId=${applicant.id}`)
    const text = visibleText(page.text)
    expect(text).toContain('Their application')
    expect(text).toContain(about)
    const ask = await t.browser.post('/admin/affiliates/reject', { affiliateId: applicant.id })
    expect(visibleText(ask.text)).toContain('Reject 1 applicant (dee@example.com)? Their applications are deleted.')
    await t.browser.post('/admin/affiliates/reject', { affiliateId: applicant.id, confirmed: 'yes' })
    await expect(t.api.affiliates.get(applicant.id)).rejects.toMatchObject({ status: 404 })
    // Text the API was given as it is.
    const plain = await t.api.affiliates.create({
      email: 'eve@example.com',
      campaignId: campaign.id,
      isActive: false,
      details: 'Podcast <b>host</b>',
    })
    const plainPage = await t.browser.get(`/admin/affiliates/detail?affiliateId=${plain.id}`)
    expect(plainPage.text).toContain('<dt>Details</dt><dd><p>Podcast &lt;b&gt;host&lt;/b&gt;</p></dd>')
  })

  it('names affiliates by their e-mail on the payout pages, beside where the money goes', async () => {
    const t = setup()
    const { campaign, affiliate } = await program(t)
    await t.api.campaigns.update(campaign.id, { payoutTerm: 0, minimumPayoutAmount: 0 })
    await t.api.commissions.create({ campaignId: campaign.id, affiliateId: affiliate.id, referredUser: 'cus@example.com', amount: '12.00' })
    const [payout] = (await t.api.payouts.run({ workspaceId: WS })).payouts
    const link = `<a href="/admin/affiliates/detail?affiliateId=${affiliate.id}">ann-usd@example.com</a>`
    const list = await t.browser.get('/admin/payouts')
    expect(list.text).toContain(link)
    const detail = await t.browser.get(`/admin/payouts/detail?payoutId=${payout!.payoutId}`)
    expect(detail.text).toContain(link)
    expect(visibleText(detail.text)).toContain('Paid to ann@pay-usd.example.com')
  })

  it('lists the clawbacks of one sale through the API filter, and nothing for another', async () => {
    const t = setup()
    const { campaign, affiliate } = await program(t)
    const paid = await t.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'a@example.com',
      amount: '30.00',
      status: 'paid',
    })
    const other = await t.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'b@example.com',
      amount: '30.00',
      status: 'paid',
    })
    await t.api.commissions.refund(paid.commissionId, { amount: '10.00' })
    t.clock.advance(DAY)
    await t.api.commissions.refund(paid.commissionId, { amount: '5.00' })
    const mine = await t.api.commissions.list({
      workspaceId: WS,
      reversesCommissionId: paid.commissionId,
      orderType: 'commissionDate',
      orderValue: 'ASC',
    })
    expect(mine.items.map((k) => k.amount)).toEqual(['-10.00', '-5.00'])
    expect((await t.api.commissions.list({ workspaceId: WS, reversesCommissionId: other.commissionId })).items).toEqual([])
    expect((await t.api.commissions.list({ workspaceId: WS, reversesCommissionId: paid.commissionId, kind: 'sale' })).items).toEqual([])
    await expect(
      Promise.resolve().then(() => t.api.commissions.list({ workspaceId: WS, reversesCommissionId: 'nope' })),
    ).rejects.toMatchObject({ status: 400, errors: [{ path: 'reversesCommissionId', location: 'query' }] })
  })
})
