import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage, type AffiliateService } from '../../src/index.js'
import { manualClock } from '../support/helpers.js'

// The admin dashboard through service.fetch: what a refused request sees, CSRF on every form,
// secrets shown once, and actions that are the API's own.

const WS = '11111111-1111-4111-8111-111111111111'
const OTHER = '33333333-3333-4333-8333-333333333333'
const ADMIN = { 'x-admin': 'yes' }

function setup() {
  const clock = manualClock()
  const keyStore = memoryKeyStore([], { clock })
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore,
    clock,
    admin: { authorize: (request) => (request.headers.get('x-admin') === 'yes' ? { userId: 'owner', workspaceIds: [WS] } : null), secret: 'a'.repeat(32) },
  })
  /** A browser: it keeps cookies and reads the CSRF token of the last page. */
  let cookies = new Map<string, string>()
  let csrf = ''
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
  }
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  async function get(path: string, headers: Record<string, string> = ADMIN) {
    const response = await service.fetch(new Request(`http://x${path}`, { headers: { ...headers, cookie: cookieHeader() } }))
    remember(response)
    const text = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
    return { status: response.status, text, headers: response.headers }
  }
  async function post(path: string, fields: Record<string, string | string[]>, options: { csrf?: boolean; headers?: Record<string, string> } = {}) {
    const body = new URLSearchParams()
    if (options.csrf !== false) body.append('csrf', csrf)
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
    const response = await service.fetch(
      new Request(`http://x${path}`, { method: 'POST', body, headers: { ...(options.headers ?? ADMIN), cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' } }),
    )
    remember(response)
    const text = await response.text()
    return { status: response.status, text, location: response.headers.get('location') }
  }
  return { service, keyStore, clock, get, post, reset: () => ((cookies = new Map()), (csrf = '')) }
}

async function seed(service: AffiliateService) {
  const campaign = await service.api.campaigns.create({ campaignName: 'Spring', workspaceId: WS, commissionType: 'percentage', amount: 20, url: 'https://shop.example.com', requiresApprovalToJoin: true })
  const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const commission = await service.api.commissions.create({ campaignId: campaign.id, affiliateId: affiliate.id, referredUser: 'cus@example.com', amount: '100.00' })
  const hidden = await service.api.campaigns.create({ campaignName: 'Secret other workspace', workspaceId: OTHER, commissionType: 'fixed', amount: 5, url: 'https://other.example.com' })
  return { campaign, affiliate, commission, hidden }
}

const PAGES = ['/admin', '/admin/campaigns', '/admin/campaigns/new', '/admin/affiliates', '/admin/commissions', '/admin/commissions/new', '/admin/payouts', '/admin/settings/integrations']

describe('admin dashboard', () => {
  it('shows nothing of the admin to a request authorize refuses, on every page and form', async () => {
    const t = setup()
    const { campaign, affiliate } = await seed(t.service)
    for (const path of [...PAGES, `/admin/affiliates/detail?affiliateId=${affiliate.id}`, `/admin/campaigns/edit?campaignId=${campaign.id}`, '/admin/commissions/export', '/admin/payouts/export?format=paypal']) {
      const page = await t.get(path, {})
      expect(page.status, path).toBe(401)
      for (const leak of ['Spring', 'ann@example.com', 'cus@example.com', WS, 'Campaigns']) expect(page.text, `${path} ${leak}`).not.toContain(leak)
    }
    const sent = await t.post('/admin/campaigns/delete', { campaignId: campaign.id, confirmed: 'yes' }, { headers: {} })
    expect(sent.status).toBe(401)
    expect((await t.service.api.campaigns.get(campaign.id)).campaignName).toBe('Spring')
  })

  it('redirects a refused request to signInUrl when there is one', async () => {
    const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), admin: { authorize: () => null, signInUrl: '/login' } })
    const response = await service.fetch(new Request('http://x/admin/campaigns'))
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/login')
    expect(await response.text()).toBe('')
  })

  it('serves every page with a strict CSP (no inline script), a SameSite=Strict HttpOnly cookie, Secure on https, and only its own workspace', async () => {
    const t = setup()
    await seed(t.service)
    for (const path of PAGES) {
      const page = await t.get(path)
      expect(page.status, path).toBe(200)
      const csp = page.headers.get('content-security-policy')!
      expect(csp).toContain("script-src 'self'")
      expect(csp).not.toContain('unsafe-inline')
      expect(page.text).not.toMatch(/<script>/)
      expect(page.text).not.toMatch(/(src|href)="https?:\/\//)
      expect(page.text).not.toContain('Secret other workspace')
    }
    const https = await t.service.fetch(new Request('https://x/admin', { headers: ADMIN }))
    const cookie = https.headers.getSetCookie()[0]!
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/)
    expect(cookie).toContain('; Secure')
  })

  it('refuses every form without its CSRF token, and changes nothing', async () => {
    const t = setup()
    const { campaign, affiliate, commission } = await seed(t.service)
    await t.get('/admin')
    const forms: [string, Record<string, string>][] = [
      ['/admin/campaigns/new', { campaignName: 'X', url: 'https://x.example.com', commissionType: 'fixed', amount: '1' }],
      [`/admin/campaigns/edit?campaignId=${campaign.id}`, { campaignName: 'Renamed' }],
      ['/admin/campaigns/default', { campaignId: campaign.id }],
      ['/admin/campaigns/delete', { campaignId: campaign.id, confirmed: 'yes' }],
      ['/admin/affiliates/approve', { affiliateId: affiliate.id }],
      ['/admin/affiliates/reject', { affiliateId: affiliate.id, confirmed: 'yes' }],
      [`/admin/affiliates/edit?affiliateId=${affiliate.id}`, { firstName: 'Changed' }],
      ['/admin/affiliates/ban', { affiliateId: affiliate.id, confirmed: 'yes' }],
      ['/admin/affiliates/unban', { affiliateId: affiliate.id }],
      ['/admin/commissions/new', { campaignId: campaign.id, affiliateId: affiliate.id, referredUser: 'b@example.com', amount: '5' }],
      ['/admin/commissions/refund', { commissionId: commission.commissionId, amount: '10', confirmed: 'yes' }],
      ['/admin/payouts/preview', {}],
      ['/admin/payouts/run', { confirmed: 'yes' }],
      ['/admin/payouts/mark', { payoutId: affiliate.id, status: 'paid', confirmed: 'yes' }],
      ['/admin/settings/keys/create', { label: 'x', kind: 'secret' }],
      ['/admin/settings/keys/revoke', { keyId: 'x', confirmed: 'yes' }],
      ['/admin/settings/webhooks/create', { url: 'https://hooks.example.com', events: '*' }],
      ['/admin/settings/webhooks/rotate', { webhookId: affiliate.id }],
      ['/admin/settings/webhooks/test', { webhookId: affiliate.id }],
      ['/admin/settings/webhooks/retry', { deliveryId: affiliate.id }],
      ['/admin/workspace', { workspaceId: WS }],
      ['/admin/sign-out', {}],
    ]
    for (const [path, fields] of forms) {
      const sent = await t.post(path, fields, { csrf: false })
      expect(sent.status, path).toBe(403)
      expect(sent.text).toContain('This form has expired')
      const wrong = await t.post(path, { ...fields, csrf: 'x'.repeat(64) }, { csrf: false })
      expect(wrong.status, path).toBe(403)
    }
    expect(await t.service.api.campaigns.get(campaign.id)).toMatchObject({ campaignName: 'Spring', isDefault: false })
    expect(await t.service.api.affiliates.get(affiliate.id)).toMatchObject({ isActive: false, isBanned: false, firstName: '' })
    expect((await t.service.api.commissions.get(commission.commissionId)).amount).toBe('100.00')
    expect((await t.service.api.campaigns.list({ workspaceId: WS })).items).toHaveLength(1)
    expect(await t.keyStore.list()).toHaveLength(0)
  })

  it('shows a new API key once, in a data-secret element; the key works until revoked', async () => {
    const t = setup()
    await seed(t.service)
    await t.get('/admin/settings/integrations')
    const made = await t.post('/admin/settings/keys/create', { label: 'billing', kind: 'secret', allowedOrigins: '' })
    expect(made.status).toBe(200)
    const key = /<code class="secret" data-secret>(aff_live_[A-Za-z0-9]{32})<\/code>/.exec(made.text)?.[1]
    expect(key).toBeDefined()
    expect(made.text).toContain('You will not see it again')
    expect(made.text.split(key!).length - 1).toBe(1)
    const later = await t.get('/admin/settings/integrations')
    expect(later.text).not.toContain(key!.slice(8))
    expect(later.text).toContain('billing')
    const use = await t.service.fetch(new Request(`http://x/api/v1/campaigns/list?workspaceId=${WS}`, { headers: { 'x-auth-service': key! } }))
    expect(use.status).toBe(200)
    const [info] = await t.keyStore.list()
    const ask = await t.post('/admin/settings/keys/revoke', { keyId: info!.keyId })
    expect(ask.text).toContain('Revoke the key billing')
    expect(await t.keyStore.list()).toMatchObject([{ revokedAt: null }])
    const done = await t.post('/admin/settings/keys/revoke', { keyId: info!.keyId, confirmed: 'yes' })
    expect(done.status).toBe(303)
    const refused = await t.service.fetch(new Request(`http://x/api/v1/campaigns/list?workspaceId=${WS}`, { headers: { 'x-auth-service': key! } }))
    expect(refused.status).toBe(401)
  })

  it('shows a webhook secret once, and a rotated one once', async () => {
    const t = setup()
    await t.get('/admin/settings/integrations')
    const made = await t.post('/admin/settings/webhooks/create', { url: 'https://hooks.example.com/in', events: ['*'] })
    expect(made.status).toBe(200)
    const secret = /data-secret>(whsec_[^<]+)</.exec(made.text)?.[1]
    expect(secret).toBeDefined()
    expect(made.text.split(secret!).length - 1).toBe(1)
    expect((await t.get('/admin/settings/integrations')).text).not.toContain(secret!)
  })

  it('refunds half of a commission after a confirmation that says what will happen, through the API (refusals as its message)', async () => {
    const t = setup()
    const { commission } = await seed(t.service)
    await t.get('/admin/commissions')
    const ask = await t.post('/admin/commissions/refund', { commissionId: commission.commissionId, amount: '50.00' })
    expect(ask.status).toBe(200)
    expect(ask.text).toContain('Refund 50.00 USD of 100.00 USD: the commission drops from 100.00 USD to 50.00 USD.')
    expect((await t.service.api.commissions.get(commission.commissionId)).amount).toBe('100.00')
    const done = await t.post('/admin/commissions/refund', { commissionId: commission.commissionId, amount: '50.00', confirmed: 'yes' })
    expect(done.location).toBe('/admin/commissions?notice=refunded')
    expect((await t.service.api.commissions.get(commission.commissionId)).amount).toBe('50.00')
    expect((await t.get('/admin/commissions?notice=refunded')).text).toContain('Commission refunded.')
    const tooMuch = await t.post('/admin/commissions/refund', { commissionId: commission.commissionId, amount: '500.00', confirmed: 'yes' })
    expect(tooMuch.status).toBe(422)
  })

  it('creates a campaign and shows the API field message beside a refused field, keeping what was typed', async () => {
    const t = setup()
    await t.get('/admin/campaigns/new')
    const bad = await t.post('/admin/campaigns/new', { campaignName: 'Summer', url: 'not a url', commissionType: 'fixed', amount: '5' })
    expect(bad.status).toBe(400)
    expect(bad.text).toMatch(/id="url-error">url [^<]+</)
    expect(bad.text).toContain('value="Summer"')
    const good = await t.post('/admin/campaigns/new', { campaignName: 'Summer', url: 'https://shop.example.com', commissionType: 'fixed', amount: '5' })
    expect(good.location).toBe('/admin/campaigns?notice=campaign-created')
    expect((await t.service.api.campaigns.list({ workspaceId: WS })).items.map((c) => c.campaignName)).toEqual(['Summer'])
  })

  it('filters affiliates by status and commissions by kind and period in storage: a match beyond the first 100 records is found', async () => {
    const t = setup()
    const campaign = await t.service.api.campaigns.create({ campaignName: 'Spring', workspaceId: WS, commissionType: 'fixed', amount: 5, url: 'https://shop.example.com', payoutTerm: 0 })
    const first = await t.service.api.affiliates.create({ email: 'first@example.com', campaignId: campaign.id, isActive: true })
    const applicant = await t.service.api.affiliates.create({ email: 'applicant@example.com', campaignId: campaign.id, isActive: false })
    const paid = await t.service.api.commissions.create({ campaignId: campaign.id, affiliateId: first.id, referredUser: 'old@example.com', amount: '40.00', status: 'paid', commissionDate: '2025-06-15T12:00:00Z' })
    await t.service.api.commissions.refund(paid.commissionId, { amount: '10.00' })
    await t.service.api.affiliates.update(first.id, { isBanned: true })
    for (let i = 0; i < 120; i++) {
      t.clock.advance(1000)
      const a = await t.service.api.affiliates.create({ email: `active-${i}@example.com`, campaignId: campaign.id, isActive: true })
      await t.service.api.commissions.create({ campaignId: campaign.id, affiliateId: a.id, referredUser: `buyer-${i}@example.com`, amount: '1.00' })
    }
    const banned = await t.get('/admin/affiliates?status=banned')
    expect(banned.text).toContain('first@example.com')
    expect(banned.text).toContain('1-1 of 1')
    const pending = await t.get('/admin/affiliates?status=pending')
    expect(pending.text).toContain('applicant@example.com')
    expect(pending.text).toContain('1-1 of 1')
    expect((await t.get('/admin/affiliates?status=active')).text).toContain('1-20 of 120')
    const clawbacks = await t.get('/admin/commissions?kind=clawback')
    expect(clawbacks.text).toContain('1-1 of 1')
    expect(clawbacks.text).toContain('old@example.com')
    const june = await t.get('/admin/commissions?from=2025-06-01&to=2025-06-15')
    expect(june.text).toContain('1-1 of 1')
    expect(june.text).toContain('40.00 USD')
    expect((await t.get('/admin/commissions?from=2025-06-16&to=2025-06-30')).text).toContain('No commissions match these filters.')
    const csv = await t.service.fetch(new Request('http://x/admin/commissions/export?from=2025-06-01&to=2025-06-15&kind=sale', { headers: ADMIN }))
    const lines = (await csv.text()).trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toContain('old@example.com')
    expect((await t.get('/admin/commissions?from=not-a-day')).status).toBe(400)
  })
})
