import { afterEach, describe, expect, it } from 'vitest'
import { KEY_A, KEY_B, UNKNOWN_ID, WS_B } from '../support/helpers.js'
import { checkedFetch } from '../support/openapi-check.js'
import { trackingSetup } from '../support/tracking-support.js'

// clickId on POST /commissions and POST /referred-users, over HTTP through the Node adapter.

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function setup() {
  const t = await trackingSetup()
  closers.push(t.close)
  const post = async (path: string, body: unknown, key = KEY_A) => {
    const response = await checkedFetch(`${t.running.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-service': key },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }
  const clickId = t.clickIdOf(await t.redirect('ANN-2026'))!
  const sale = (extra: Record<string, unknown> = {}) => ({
    campaignId: t.campaign.id,
    referredUser: 'buyer@example.com',
    amount: 40,
    clickId,
    ...extra,
  })
  const signup = (extra: Record<string, unknown> = {}) => ({ referredTo: 'friend@example.com', clickId, ...extra })
  const totals = async () => {
    const [link] = (await t.service.api.links.list({ affiliateId: t.affiliate.id })).items
    const affiliate = await t.service.api.affiliates.get(t.affiliate.id)
    return { link: [link!.totalSignups, link!.totalEarnings], affiliate: [affiliate.totalSignups, affiliate.totalEarnings] }
  }
  return { ...t, post, clickId, sale, signup, totals }
}

describe.each([
  ['/commissions', 'sale'],
  ['/referred-users', 'signup'],
] as const)('POST %s with clickId', (path, kind) => {
  it("is attributed to the click's link and affiliate; affiliateId may be left out or be the same", async () => {
    const t = await setup()
    const body = kind === 'sale' ? t.sale() : t.signup({ amount: 40 })
    const made = await t.post(path, body)
    expect(made.status).toBe(201)
    expect(made.body.data).toMatchObject({
      affiliateId: t.affiliate.id,
      campaignId: t.campaign.id,
      referralCode: 'ANN-2026',
      amount: '40.00',
    })
    expect(await t.totals()).toEqual({ link: [1, 40], affiliate: [1, 40] })
    const same = await t.post(
      path,
      kind === 'sale'
        ? t.sale({ affiliateId: t.affiliate.id, referredUser: 'b2@example.com' })
        : t.signup({ affiliateId: t.affiliate.id, referredTo: 'b2@example.com' }),
    )
    expect(same.status).toBe(201)
    expect((await t.totals()).link[0]).toBe(2)
  })

  it('refuses another affiliate (422) and changes nothing', async () => {
    const t = await setup()
    const other = await t.service.api.affiliates.create({ email: 'bob@example.com', campaignId: t.campaign.id })
    const body = kind === 'sale' ? t.sale({ affiliateId: other.id }) : t.signup({ affiliateId: other.id })
    expect(await t.post(path, body)).toEqual({
      status: 422,
      body: { status: 422, code: 'attribution_mismatch', message: 'The clickId belongs to another affiliate' },
    })
    expect(await t.totals()).toEqual({ link: [0, 0], affiliate: [0, 0] })
  })

  it("refuses a click older than the campaign's attributionWindowDays at the commission date (422)", async () => {
    const t = await setup()
    await t.service.api.campaigns.update(t.campaign.id, { attributionWindowDays: 7 })
    t.clock.advance(7 * 86_400_000)
    const atEdge = kind === 'sale' ? t.sale() : t.signup()
    expect((await t.post(path, atEdge)).status).toBe(201)
    t.clock.advance(1)
    const late = kind === 'sale' ? t.sale({ referredUser: 'late@example.com' }) : t.signup({ referredTo: 'late@example.com' })
    expect(await t.post(path, late)).toEqual({
      status: 422,
      body: { status: 422, code: 'attribution_window', message: 'Click is outside the attribution window' },
    })
    expect((await t.totals()).link[0]).toBe(1)
    // A sale dated back inside the window is still the click's.
    const backdated =
      kind === 'sale'
        ? t.sale({ referredUser: 'late@example.com', commissionDate: '2026-01-03T00:00:00.000Z' })
        : t.signup({ referredTo: 'late@example.com', commissionDate: '2026-01-03T00:00:00.000Z' })
    expect((await t.post(path, backdated)).status).toBe(201)
  })

  it('refuses a commissionDate before the click (422, like one after the window) and changes nothing; at the click itself it counts', async () => {
    const t = await setup()
    const clickedAt = t.clock.now()
    t.clock.advance(86_400_000)
    const at = (ms: number, who: string) =>
      kind === 'sale'
        ? t.sale({ referredUser: who, commissionDate: new Date(ms).toISOString() })
        : t.signup({ referredTo: who, commissionDate: new Date(ms).toISOString() })
    expect(await t.post(path, at(clickedAt - 1, 'early@example.com'))).toEqual({
      status: 422,
      body: {
        status: 422,
        code: 'attribution_window',
        message: 'Click is outside the attribution window: commissionDate is before the click',
      },
    })
    expect(await t.post(path, at(clickedAt - 86_400_000, 'early@example.com'))).toMatchObject({ status: 422 })
    expect(await t.totals()).toEqual({ link: [0, 0], affiliate: [0, 0] })
    expect((await t.post(path, at(clickedAt, 'on-time@example.com'))).status).toBe(201)
    expect((await t.totals()).link[0]).toBe(1)
  })

  it("answers an unknown clickId, or another workspace's, with the same 422", async () => {
    const t = await setup()
    const message = 'Unknown clickId: no such click is kept (clicks are kept for the longest attribution window of the campaigns)'
    const unknown = kind === 'sale' ? t.sale({ clickId: UNKNOWN_ID }) : t.signup({ clickId: UNKNOWN_ID })
    expect(await t.post(path, unknown)).toEqual({ status: 422, body: { status: 422, code: 'unknown_click', message } })
    // Key B sees workspace B only: workspace A's click is unknown to it.
    const campaignB = await t.service.api.campaigns.create({
      campaignName: 'B',
      workspaceId: WS_B,
      commissionType: 'fixed',
      amount: 1,
      url: 'https://b.example/',
    })
    const foreign = kind === 'sale' ? t.sale({ campaignId: campaignB.id }) : t.signup({ workspaceId: WS_B })
    expect(await t.post(path, foreign, KEY_B)).toEqual({ status: 422, body: { status: 422, code: 'unknown_click', message } })
    expect(await t.totals()).toEqual({ link: [0, 0], affiliate: [0, 0] })
  })

  it('needs affiliateId or clickId (400 naming affiliateId); a bad clickId is a validation error', async () => {
    const t = await setup()
    const neither = kind === 'sale' ? t.sale({ clickId: undefined }) : t.signup({ clickId: undefined })
    const missing = await t.post(path, neither)
    expect(missing.status).toBe(400)
    expect(missing.body.errors).toEqual([
      { type: 'field', msg: 'affiliateId is required (or clickId)', path: 'affiliateId', location: 'body' },
    ])
    const bad = await t.post(path, kind === 'sale' ? t.sale({ clickId: 'nope' }) : t.signup({ clickId: 'nope' }))
    expect(bad.body.errors).toEqual([{ type: 'field', msg: 'clickId must be a UUID', path: 'clickId', location: 'body' }])
  })

  it('a referralCode beside the clickId must be the same link (422)', async () => {
    const t = await setup()
    await t.service.api.links.create({ affiliateId: t.affiliate.id, referralCode: 'ANN-OTHER' })
    const body = kind === 'sale' ? t.sale({ referralCode: 'ANN-OTHER' }) : t.signup({ referralCode: 'ANN-OTHER' })
    expect(await t.post(path, body)).toEqual({
      status: 422,
      body: { status: 422, code: 'attribution_mismatch', message: 'The referralCode is not the link of the clickId' },
    })
  })
})

describe('the typed API', () => {
  it('takes clickId too', async () => {
    const t = await setup()
    const made = await t.service.api.commissions.create({
      campaignId: t.campaign.id,
      referredUser: 'api@example.com',
      amount: 10,
      clickId: t.clickId,
    })
    expect(made).toMatchObject({ affiliateId: t.affiliate.id, referralCode: 'ANN-2026' })
  })
})
