import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { manualClock } from '../support/helpers.js'

// The admin's review queue (SPEC wave 4, "Fraud rules and the hold status"): the held commissions
// with their reasons, released or voided one at a time or many at once, after a confirmation.

const WS = '11111111-1111-4111-8111-111111111111'
const ADMIN = { 'x-admin': 'yes' }

async function setup() {
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    clock: manualClock(),
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
  const get = async (path: string) => {
    const response = await service.fetch(new Request(`http://x${path}`, { headers: { ...ADMIN, cookie: cookie() } }))
    remember(response)
    const text = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
    return { status: response.status, text }
  }
  const post = async (path: string, fields: Record<string, string | string[]>) => {
    const body = new URLSearchParams({ csrf })
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
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
  const { api } = service
  const campaign = await api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS,
    commissionType: 'fixed',
    amount: 10,
    url: 'https://shop.example.com',
  })
  const affiliate = await api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  await api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  const sale = (email: string, invoiceId: string) =>
    api.conversions.sale({ workspaceId: WS, referralCode: 'ANN-2026', email, amount: '50.00', currency: 'USD', invoiceId })
  return { service, api, get, post, sale, campaign }
}

describe('the review queue', () => {
  it('lists the held commissions with their reasons; releases many at once after a confirmation', async () => {
    const t = await setup()
    const a = (await t.sale('x@mailinator.com', 'in_1')).commission!
    const b = (await t.sale('y@mailinator.com', 'in_2')).commission!
    await t.sale('z@example.com', 'in_3')
    const queue = await t.get('/admin/commissions?status=hold')
    expect(queue.status).toBe(200)
    expect(queue.text).toContain('Disposable e-mail')
    expect(queue.text.match(/name="commissionId"/g)).toHaveLength(2)
    expect(queue.text).toContain('Release selected')
    expect(queue.text).toContain('Void selected')
    const ask = await t.post('/admin/commissions/release', { commissionId: [a.commissionId, b.commissionId] })
    expect(ask.status).toBe(200)
    expect(ask.text).toContain('Release 2 commissions: they become pending and are paid with the next payout run once due.')
    expect((await t.api.commissions.get(a.commissionId)).status).toBe('hold')
    const done = await t.post('/admin/commissions/release', { commissionId: [a.commissionId, b.commissionId], confirmed: 'yes' })
    expect(done.status).toBe(303)
    expect(done.location).toContain('/admin/commissions?status=hold&notice=released')
    expect((await t.api.commissions.list({ status: 'pending' })).items).toHaveLength(3)
  })

  it('voids one from its detail page, which shows why it was held', async () => {
    const t = await setup()
    const a = (await t.sale('x@mailinator.com', 'in_1')).commission!
    const detail = await t.get(`/admin/commissions/detail?commissionId=${a.commissionId}`)
    expect(detail.text).toContain('Under review')
    expect(detail.text).toContain('The fraud rules held it: Disposable e-mail.')
    const done = await t.post('/admin/commissions/void', { commissionId: a.commissionId, from: 'detail', confirmed: 'yes' })
    expect(done.location).toContain(`/admin/commissions/detail?commissionId=${a.commissionId}&notice=voided`)
    expect(await t.api.commissions.get(a.commissionId)).toMatchObject({ status: 'voided', holdReasons: [] })
    // No review action once voided; releasing it is refused with the API's message.
    const page = await t.get(`/admin/commissions/detail?commissionId=${a.commissionId}`)
    expect(page.text).not.toContain('Under review')
    const again = await t.post('/admin/commissions/release', { commissionId: a.commissionId, confirmed: 'yes' })
    expect(again.status).toBe(422)
    expect(again.text).toContain('Only a held commission can be released; this one is voided')
  })

  it("edits a campaign's fraud rules as rule=mode pairs, and refuses a mode it does not know with the API's message", async () => {
    const t = await setup()
    const edit = `/admin/campaigns/edit?campaignId=${t.campaign.id}`
    const page = await t.get(edit)
    expect(page.text).toContain('self_referral=block, disposable_email=flag, paid_ad_click=off, address_burst=flag, refund_rate=flag')
    const saved = await t.post(edit, { fraudRules: 'paid_ad_click=block, refund_rate=off' })
    expect(saved.status).toBe(303)
    expect((await t.api.campaigns.get(t.campaign.id)).fraudRules).toEqual({
      self_referral: 'block',
      disposable_email: 'flag',
      paid_ad_click: 'block',
      address_burst: 'flag',
      refund_rate: 'off',
    })
    await t.get(edit)
    const refused = await t.post(edit, { fraudRules: 'self_referral=maybe' })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('self_referral must be &quot;off&quot;, &quot;flag&quot; or &quot;block&quot;')
  })
})
