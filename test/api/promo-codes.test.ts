import { describe, expect, it } from 'vitest'
import { createAffiliateClient } from '../../src/client/index.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { snapshot } from '../support/fixtures.js'
import { apiCampaignInput, expectValidation, fieldError, KEY_A, KEY_B, setup, USER_A, WS_A, WS_B } from '../support/helpers.js'

// Promo codes (SPEC wave 4, "Promo codes"): the resource, its rules (any case, upper-case kept,
// unique per workspace), and a code naming the affiliate of a lead or a sale without a link; a
// link's shareUrl on the host's own site, counted by the beacon. The Stripe calls: promo-codes-stripe.test.ts.

const PK = 'pk_test_promo_shop'

async function program() {
  const t = setup()
  const { api } = t
  const campaign = await api.campaigns.create(apiCampaignInput({ payoutTerm: 0, url: 'https://shop.example.com/pricing?plan=pro' }))
  const ann = await api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const bob = await api.affiliates.create({ email: 'bob@example.com', campaignId: campaign.id })
  const campaignB = await api.campaigns.create(apiCampaignInput({ workspaceId: WS_B, payoutTerm: 0 }))
  const zed = await api.affiliates.create({ email: 'zed@example.com', campaignId: campaignB.id })
  const create = (body: Record<string, unknown>, key = KEY_A) => t.call('POST', '/promo-codes', { body, key })
  const lead = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/lead', { body: { workspaceId: WS_A, externalId: 'user-1', email: 'buyer@example.com', ...body } })
  const sale = (body: Record<string, unknown> = {}) =>
    t.call('POST', '/conversions/sale', {
      body: { workspaceId: WS_A, externalId: 'user-1', amount: '100.00', currency: 'USD', invoiceId: 'in_1', ...body },
    })
  const uses = async (id: string) => (await api.promoCodes.get(id)).uses
  return { ...t, campaign, ann, bob, campaignB, zed, create, lead, sale, uses }
}

describe('POST /promo-codes', () => {
  it('gives an affiliate a code, kept upper-case, answered with its campaign and workspace, and announced', async () => {
    const p = await program()
    p.clock.advance(1000)
    const made = await p.create({ affiliateId: p.ann.id, code: 'alice-20_x' })
    expect(made.status).toBe(201)
    expect(made.body.message).toBe('Promo code created successfully')
    const now = new Date(p.clock.now()).toISOString()
    expect(made.body.data).toStrictEqual({
      promoCodeId: expect.any(String),
      workspaceId: WS_A,
      campaignId: p.campaign.id,
      affiliateId: p.ann.id,
      code: 'ALICE-20_X',
      stripePromotionCodeId: null,
      uses: 0,
      createdAt: now,
      updatedAt: now,
    })
    expect(await p.api.promoCodes.get(made.body.data.promoCodeId)).toStrictEqual(made.body.data)
    const events = await p.api.events.list({ type: 'promo_code.created' })
    expect(events.items.map((event) => event.data)).toStrictEqual([made.body.data])
  })

  it('refuses a code the workspace already has in any case (422 duplicate), storing nothing; another workspace may hold it', async () => {
    const p = await program()
    await p.create({ affiliateId: p.ann.id, code: 'ALICE20' })
    const before = await snapshot(p.storage)
    for (const [affiliateId, code] of [
      [p.ann.id, 'alice20'],
      [p.bob.id, 'Alice20'],
      [p.bob.id, 'ALICE20'],
    ] as const) {
      const again = await p.create({ affiliateId, code })
      expect(again.status).toBe(422)
      expect(again.body).toEqual({
        status: 422,
        code: 'duplicate',
        message: 'This promo code is already in use in this workspace (codes are compared without case)',
      })
    }
    expect(await snapshot(p.storage)).toBe(before)
    const elsewhere = await p.create({ affiliateId: p.zed.id, code: 'alice20' }, KEY_B)
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body.data).toMatchObject({ workspaceId: WS_B, code: 'ALICE20' })
    // A Stripe promotion code names one promo code of a workspace too.
    await p.create({ affiliateId: p.ann.id, code: 'ANN-STRIPE', stripePromotionCodeId: 'promo_1Abc' })
    const sameStripe = await p.create({ affiliateId: p.bob.id, code: 'BOB-STRIPE', stripePromotionCodeId: 'promo_1Abc' })
    expect(sameStripe.body).toEqual({
      status: 422,
      code: 'duplicate',
      message: 'This stripePromotionCodeId belongs to another promo code in this workspace',
    })
  })

  it('refuses a bad code with 400 naming it, and a missing or unknown affiliate, storing nothing', async () => {
    const p = await program()
    const before = await snapshot(p.storage)
    const must = 'code must be 3 to 40 letters, digits, _ or -'
    for (const code of ['AB', 'A'.repeat(41), 'ALICE 20', 'ALICE!20', 'ÄLICE20', 'ALICE.20', '', 20, null]) {
      expectValidation(await p.create({ affiliateId: p.ann.id, code }), [fieldError('code', must)])
    }
    expectValidation(await p.create({ affiliateId: p.ann.id }), [fieldError('code', 'code is required')])
    expectValidation(await p.create({ affiliateId: p.ann.id, code: 'OK1', uses: 5 }), [fieldError('uses', 'uses is read-only')])
    expect((await p.create({ affiliateId: p.zed.id, code: 'NOTMINE' })).body).toEqual({
      status: 404,
      code: 'not_found',
      message: 'Affiliate not found',
    })
    expect(await snapshot(p.storage)).toBe(before)
    // Lead and sale bodies check a code the same way.
    expectValidation(await p.lead({ promoCode: 'no way' }), [fieldError('promoCode', 'promoCode must be 3 to 40 letters, digits, _ or -')])
    expectValidation(await p.sale({ promoCode: 'x' }), [fieldError('promoCode', 'promoCode must be 3 to 40 letters, digits, _ or -')])
  })
})

describe('GET /promo-codes/list, GET and DELETE /promo-codes', () => {
  it('lists by affiliate and campaign within the key’s workspaces, searches codes, and deletes (announced) freeing the code', async () => {
    const p = await program()
    const ann = (await p.create({ affiliateId: p.ann.id, code: 'ANN10' })).body.data
    p.clock.advance(1)
    const bob = (await p.create({ affiliateId: p.bob.id, code: 'BOB10' })).body.data
    const zed = (await p.create({ affiliateId: p.zed.id, code: 'ZED10' }, KEY_B)).body.data
    const codes = async (query: string, key = KEY_A) =>
      (await p.call('GET', `/promo-codes/list${query}`, { key })).body.data.items.map((item: { code: string }) => item.code)
    expect(await codes('')).toEqual(['BOB10', 'ANN10'])
    expect(await codes(`?affiliateId=${p.ann.id}`)).toEqual(['ANN10'])
    expect(await codes(`?campaignId=${p.campaign.id}&orderValue=ASC`)).toEqual(['ANN10', 'BOB10'])
    expect(await codes('?contains=bob')).toEqual(['BOB10'])
    expect(await codes('', KEY_B)).toEqual(['ZED10'])
    expect((await p.call('GET', `/promo-codes?promoCodeId=${zed.promoCodeId}`)).status).toBe(404)
    expect((await p.call('DELETE', `/promo-codes?promoCodeId=${zed.promoCodeId}`)).status).toBe(404)
    // The client and the typed API take the same routes.
    const client = createAffiliateClient({
      baseUrl: 'http://test.local/api/v1',
      apiKey: KEY_A,
      fetch: (request) => p.service.fetch(request),
    })
    expect((await client.promoCodes.list({ affiliateId: p.bob.id })).items).toStrictEqual([bob])
    // An affiliate holding codes is not deleted: deleting a code is what deactivates its Stripe promotion code.
    expect((await p.call('DELETE', `/affiliates?affiliateId=${p.ann.id}`)).body).toMatchObject({ status: 422, code: 'has_dependents' })
    const deleted = await p.call('DELETE', `/promo-codes?promoCodeId=${ann.promoCodeId}`)
    expect(deleted.status).toBe(200)
    expect(deleted.body.data).toEqual({ id: ann.promoCodeId })
    expect((await p.api.events.list({ type: 'promo_code.deleted' })).items.map((event) => event.data)).toStrictEqual([ann])
    expect((await p.create({ affiliateId: p.bob.id, code: 'ann10' })).status).toBe(201)
    expect((await p.call('DELETE', `/affiliates?affiliateId=${p.ann.id}`)).status).toBe(200)
  })
})

describe('promoCode on conversions', () => {
  it('a lead naming a code (any case) makes the customer its affiliate’s, with no link, and counts one use', async () => {
    const p = await program()
    const code = (await p.create({ affiliateId: p.ann.id, code: 'ANN10' })).body.data
    const made = await p.lead({ promoCode: 'ann10' })
    expect(made.status).toBe(201)
    expect(made.body.data).toMatchObject({
      affiliateId: p.ann.id,
      campaignId: p.campaign.id,
      linkId: null,
      clickId: null,
      attributedAt: new Date(p.clock.now()).toISOString(),
    })
    expect(await p.uses(code.promoCodeId)).toBe(1)
    // A known customer is answered unchanged (the first attribution wins), and its repeat is no use.
    const again = await p.lead({ promoCode: 'ANN10' })
    expect(again.status).toBe(200)
    expect(await p.uses(code.promoCodeId)).toBe(1)
    expectValidation(await p.lead({ externalId: 'user-2', promoCode: 'ANN10', affiliateId: p.bob.id }), [
      fieldError('affiliateId', 'affiliateId cannot be given with promoCode: give one of clickId, referralCode, promoCode or affiliateId'),
    ])
  })

  it('a sale naming a code makes its customer and the commission of the code’s affiliate; a repeated invoice counts no second use', async () => {
    const p = await program()
    const code = (await p.create({ affiliateId: p.bob.id, code: 'BOB-2026' })).body.data
    const sold = await p.sale({ promoCode: 'bob-2026' })
    expect(sold.status).toBe(201)
    expect(sold.body.data.customer).toMatchObject({ affiliateId: p.bob.id, linkId: null, externalId: 'user-1' })
    expect(sold.body.data.commission).toMatchObject({
      affiliateId: p.bob.id,
      amount: '20.00',
      saleAmount: '100.00',
      invoiceId: 'in_1',
      status: 'pending',
    })
    expect(sold.body.data.skipped).toBeNull()
    expect(await p.uses(code.promoCodeId)).toBe(1)
    const before = await snapshot(p.storage)
    const repeat = await p.sale({ promoCode: 'bob-2026' })
    expect(repeat.status).toBe(200)
    expect(repeat.body.data).toEqual(sold.body.data)
    expect(await snapshot(p.storage)).toBe(before)
    // The next sale of that customer names the code again: one more use, the same affiliate.
    const next = await p.sale({ invoiceId: 'in_2', promoCode: 'BOB-2026' })
    expect(next.body.data.commission).toMatchObject({ affiliateId: p.bob.id })
    expect(await p.uses(code.promoCodeId)).toBe(2)
    expectValidation(await p.sale({ invoiceId: 'in_3', promoCode: 'BOB-2026', referralCode: 'SOME-LINK' }), [
      fieldError('promoCode', 'promoCode cannot be given with referralCode: give one of clickId, referralCode or promoCode'),
    ])
  })

  it('the first attribution wins: a code of another affiliate on a later sale counts its use and moves nothing', async () => {
    const p = await program()
    await p.create({ affiliateId: p.ann.id, code: 'ANN10' })
    const bobCode = (await p.create({ affiliateId: p.bob.id, code: 'BOB10' })).body.data
    await p.lead({ promoCode: 'ANN10' })
    const sold = await p.sale({ promoCode: 'BOB10' })
    expect(sold.body.data.customer.affiliateId).toBe(p.ann.id)
    expect(sold.body.data.commission.affiliateId).toBe(p.ann.id)
    expect(await p.uses(bobCode.promoCodeId)).toBe(1)
  })

  it('a code of another workspace never attributes: a lead is 404, a sale is recorded unattributed, and its use is not counted', async () => {
    const p = await program()
    const theirs = (await p.create({ affiliateId: p.zed.id, code: 'ZED10' }, KEY_B)).body.data
    const before = await snapshot(p.storage)
    const lead = await p.lead({ promoCode: 'ZED10' })
    expect(lead.body).toEqual({ status: 404, code: 'not_found', message: 'Promo code not found' })
    expect(await snapshot(p.storage)).toBe(before)
    const sold = await p.sale({ promoCode: 'zed10' })
    expect(sold.status).toBe(200)
    expect(sold.body.data).toEqual({ customer: null, commission: null, skipped: 'not_attributed' })
    expect(await p.uses(theirs.promoCodeId)).toBe(0)
    expect(await p.api.customers.list({ workspaceId: WS_A })).toMatchObject({ items: [] })
    // A discount code no affiliate holds is not a refusal either: the sale is recorded, unattributed.
    expect((await p.sale({ invoiceId: 'in_2', externalId: 'user-2', promoCode: 'BLACKFRIDAY' })).body.data.skipped).toBe('not_attributed')
  })
})

describe('shareUrl', () => {
  it('is the campaign url with via=<code>; the beacon on the host’s page counts a click on the link from that parameter', async () => {
    const storage = memoryStorage()
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([
        { key: KEY_A, userId: USER_A, workspaceIds: [WS_A] },
        { key: PK, userId: USER_A, workspaceIds: [WS_A], allowedOrigins: ['https://shop.example.com'] },
      ]),
      rateLimit: false,
    })
    const campaign = await service.api.campaigns.create(
      apiCampaignInput({ url: 'https://shop.example.com/pricing?plan=pro#buy', beaconInstalled: true }),
    )
    expect(campaign.beaconInstalled).toBe(true)
    const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    const link = await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
    expect(link.shareUrl).toBe('https://shop.example.com/pricing?plan=pro&via=ANN-2026#buy')
    expect((await service.api.links.list({ affiliateId: affiliate.id })).items[0]!.shareUrl).toBe(link.shareUrl)
    // What the documented beacon snippet does on the page the shareUrl opens.
    const code = new URL(link.shareUrl).searchParams.get('via')
    const response = await service.fetch(
      new Request('http://test.local/api/v1/track', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-publishable-key': PK,
          origin: 'https://shop.example.com',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0',
        },
        body: JSON.stringify({ referralCode: code, event: 'click' }),
      }),
    )
    expect(response.status).toBe(200)
    await service.flush()
    expect((await service.api.links.list({ affiliateId: affiliate.id })).items[0]!.totalClicks).toBe(1)
  })
})
