import { describe, expect, it } from 'vitest'
import { portalSetup, signIn, WS } from '../support/portal-support.js'

// The portal shows an affiliate its promo codes and, when the program's site runs the beacon
// (the campaign's beaconInstalled), offers each link on that site (shareUrl, ?via=) first and the
// counting redirect beside it; without the beacon, the redirect alone (SPEC wave 4, "Promo codes").

async function world(beaconInstalled: boolean) {
  const setup = portalSetup()
  const campaign = await setup.api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com/pricing',
    beaconInstalled,
  })
  const affiliate = await setup.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  await setup.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  const other = await setup.api.affiliates.create({ email: 'bob@example.com', campaignId: campaign.id })
  await setup.api.promoCodes.create({ affiliateId: other.id, code: 'BOB10' })
  const browser = await signIn(setup, 'ann@example.com')
  return { setup, affiliate, browser }
}

describe('the portal', () => {
  it('with the beacon installed, offers the link on the program’s site first and the counting redirect beside it', async () => {
    const { browser } = await world(true)
    const page = (await browser.get('/portal')).text
    const share = page.indexOf('value="https://shop.example.com/pricing?via=ANN-2026"')
    const redirect = page.indexOf('value="http://portal.test/api/v1/r/ANN-2026"')
    expect(share).toBeGreaterThan(0)
    expect(redirect).toBeGreaterThan(share)
  })

  it('without it, offers the counting redirect alone (a ?via= link would not be counted)', async () => {
    const { browser } = await world(false)
    const page = (await browser.get('/portal')).text
    expect(page).toContain('value="http://portal.test/api/v1/r/ANN-2026"')
    expect(page).not.toContain('?via=ANN-2026')
  })

  it('lists the affiliate’s own promo codes with their uses, and none of another affiliate’s', async () => {
    const { setup, affiliate, browser } = await world(false)
    expect((await browser.get('/portal')).text).not.toContain('Your promo codes')
    await setup.api.promoCodes.create({ affiliateId: affiliate.id, code: 'ann10' })
    await setup.api.conversions.lead({ workspaceId: WS, externalId: 'u1', email: 'buyer@example.com', promoCode: 'ANN10' })
    const page = (await browser.get('/portal')).text
    expect(page).toContain('<h2 id="promo-codes-title">Your promo codes</h2>')
    expect(page).toMatch(/<code>ANN10<\/code><\/td>\s*<td[^>]*>1<\/td>/)
    expect(page).not.toContain('BOB10')
  })
})
