import { describe, expect, it } from 'vitest'
import { portalSetup, signIn, visitor, WS } from '../support/portal-support.js'

// The portal and the fraud rules (SPEC wave 4, "Fraud rules and the hold status"): a held commission
// is "under review" to its affiliate, and the devices an affiliate uses the portal from are what
// `self_referral` knows the affiliate's own clicks by.

async function program() {
  const setup = portalSetup()
  const campaign = await setup.api.campaigns.create({
    campaignName: 'Acme partners',
    workspaceId: WS,
    commissionType: 'fixed',
    amount: 10,
    url: 'https://shop.example.com/',
  })
  const affiliate = await setup.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  await setup.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  /** A click on the link from `address` with no user agent (as the test browser sends), once written. */
  const click = async (address: string) => {
    const response = await setup.service.fetch(new Request('http://portal.test/api/v1/r/ANN-2026', { redirect: 'manual' }), {
      clientAddress: address,
    })
    await setup.service.flush()
    return new URL(response.headers.get('location')!).searchParams.get('clickId')!
  }
  return { ...setup, campaign, affiliate, click }
}

describe('the portal and the fraud rules', () => {
  it('shows a held commission as under review, a voided one as not approved', async () => {
    const p = await program()
    const held = await p.api.conversions.sale({
      workspaceId: WS,
      referralCode: 'ANN-2026',
      email: 'x@mailinator.com',
      amount: '50.00',
      currency: 'USD',
      invoiceId: 'in_1',
    })
    await p.api.conversions.sale({
      workspaceId: WS,
      referralCode: 'ANN-2026',
      email: 'y@mailinator.com',
      amount: '50.00',
      currency: 'USD',
      invoiceId: 'in_2',
    })
    await p.api.commissions.void({ commissionIds: [held.commission!.commissionId] })
    const browser = await signIn(p, 'ann@example.com')
    const page = await browser.get('/portal')
    expect(page.status).toBe(200)
    expect(page.text).toContain('<span class="status">under review</span>')
    expect(page.text).toContain('<span class="status">not approved</span>')
    expect(page.text).not.toContain('<span class="status">hold</span>')
  })

  it("keeps the device the affiliate signs in from: a click from it that day is the affiliate's own (self_referral)", async () => {
    const p = await program()
    const browser = await signIn(p, 'ann@example.com', visitor(p, '198.51.100.20'))
    expect((await browser.get('/portal')).status).toBe(200)
    const own = await p.click('198.51.100.20')
    const sale = await p.api.conversions.sale({
      workspaceId: WS,
      clickId: own,
      email: 'friend@example.com',
      amount: '50.00',
      currency: 'USD',
      invoiceId: 'in_own',
    })
    expect(sale).toMatchObject({ commission: null, skipped: 'fraud_self_referral' })
    const other = await p.click('198.51.100.21')
    const paid = await p.api.conversions.sale({
      workspaceId: WS,
      clickId: other,
      email: 'friend2@example.com',
      amount: '50.00',
      currency: 'USD',
      invoiceId: 'in_other',
    })
    expect(paid.commission).toMatchObject({ status: 'pending' })
    expect(p.errors).toEqual([])
  })
})
