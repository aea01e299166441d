import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { manualClock } from '../support/helpers.js'

// The admin manages an affiliate's promo codes on the affiliate's page (SPEC wave 4, "Promo codes";
// ADMIN.md): listed with their Stripe promotion code and uses, added through the API's own schema
// (its refusals beside the field), deleted after a confirmation that says what happens.

const WS = '11111111-1111-4111-8111-111111111111'
const ADMIN = { 'x-admin': 'yes' }

async function setup() {
  const clock = manualClock()
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([], { clock }),
    clock,
    admin: {
      authorize: (request) => (request.headers.get('x-admin') === 'yes' ? { userId: 'owner', workspaceIds: [WS] } : null),
      secret: 'a'.repeat(32),
    },
  })
  const cookies = new Map<string, string>()
  let csrf = ''
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
  }
  const cookie = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  async function get(path: string) {
    const response = await service.fetch(new Request(`http://x${path}`, { headers: { ...ADMIN, cookie: cookie() } }))
    remember(response)
    const text = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
    return { status: response.status, text }
  }
  async function post(path: string, fields: Record<string, string>, withCsrf = true) {
    const body = new URLSearchParams(withCsrf ? { csrf, ...fields } : fields)
    const response = await service.fetch(
      new Request(`http://x${path}`, {
        method: 'POST',
        body,
        headers: { ...ADMIN, cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    remember(response)
    return { status: response.status, text: await response.text(), location: response.headers.get('location') }
  }
  const campaign = await service.api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com',
    stripeCouponId: 'SUMMER20',
  })
  const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const page = `/admin/affiliates/detail?affiliateId=${affiliate.id}`
  return { service, get, post, affiliate, page }
}

describe("the admin's promo codes of an affiliate", () => {
  it('lists none, adds one (upper-case) through the form, and refuses a bad or taken code beside the field, keeping what was typed', async () => {
    const t = await setup()
    const empty = await t.get(t.page)
    expect(empty.status).toBe(200)
    expect(empty.text).toContain('<h2>Promo codes</h2>')
    expect(empty.text).toContain('No promo codes yet.')
    expect(empty.text).toMatch(/<label for="code">Code<\/label>/)
    expect(empty.text).toContain('<code>SUMMER20</code>')
    const action = `/admin/affiliates/promo-codes?affiliateId=${t.affiliate.id}`
    expect((await t.post(action, { code: 'ann10' }, false)).status).toBe(403)
    const bad = await t.post(action, { code: 'ann 10' })
    expect(bad.status).toBe(400)
    expect(bad.text).toContain('code must be 3 to 40 letters, digits, _ or -')
    expect(bad.text).toMatch(/id="code" name="code"[^>]*value="ann 10"/)
    const added = await t.post(action, { code: 'ann10' })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${t.page}&notice=promo-code-added#promo-codes`)
    const shown = await t.get(added.location!)
    expect(shown.text).toContain('Promo code added.')
    expect(shown.text).toContain('<code>ANN10</code>')
    const [code] = (await t.service.api.promoCodes.list({ affiliateId: t.affiliate.id })).items
    expect(code).toMatchObject({ code: 'ANN10', uses: 0, stripePromotionCodeId: null })
    const taken = await t.post(action, { code: 'Ann10' })
    expect(taken.status).toBe(422)
    expect(taken.text).toContain('This promo code is already in use in this workspace (codes are compared without case)')
    expect((await t.service.api.promoCodes.list({})).items).toHaveLength(1)
  })

  it('deletes a code only after a confirmation saying what happens', async () => {
    const t = await setup()
    const code = await t.service.api.promoCodes.create({
      affiliateId: t.affiliate.id,
      code: 'ANN10',
      stripePromotionCodeId: 'promo_host_1',
    })
    await t.get(t.page)
    const asked = await t.post('/admin/affiliates/promo-codes/delete', { promoCodeId: code.promoCodeId, affiliateId: t.affiliate.id })
    expect(asked.status).toBe(200)
    expect(asked.text).toContain(
      'Delete the promo code ANN10? The customers it brought stay attributed to this affiliate; its Stripe promotion code promo_host_1 is deactivated (when Stripe is connected with an API key).',
    )
    expect((await t.service.api.promoCodes.list({})).items).toHaveLength(1)
    const done = await t.post('/admin/affiliates/promo-codes/delete', {
      promoCodeId: code.promoCodeId,
      affiliateId: t.affiliate.id,
      confirmed: 'yes',
    })
    expect(done.status).toBe(303)
    expect(done.location).toBe(`${t.page}&notice=promo-code-deleted#promo-codes`)
    expect((await t.service.api.promoCodes.list({})).items).toEqual([])
  })
})
