import Stripe from 'stripe'
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
    admin: {
      authorize: (request) => (request.headers.get('x-admin') === 'yes' ? { userId: 'owner', workspaceIds: [WS] } : null),
      secret: 'a'.repeat(32),
    },
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
  async function post(
    path: string,
    fields: Record<string, string | string[]>,
    options: { csrf?: boolean; headers?: Record<string, string> } = {},
  ) {
    const body = new URLSearchParams()
    if (options.csrf !== false) body.append('csrf', csrf)
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
    const response = await service.fetch(
      new Request(`http://x${path}`, {
        method: 'POST',
        body,
        headers: { ...(options.headers ?? ADMIN), cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    remember(response)
    const text = await response.text()
    return { status: response.status, text, location: response.headers.get('location') }
  }
  return { service, keyStore, clock, get, post, reset: () => ((cookies = new Map()), (csrf = '')) }
}

async function seed(service: AffiliateService) {
  const campaign = await service.api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com',
    requiresApprovalToJoin: true,
  })
  const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const commission = await service.api.commissions.create({
    campaignId: campaign.id,
    affiliateId: affiliate.id,
    referredUser: 'cus@example.com',
    amount: '100.00',
  })
  const hidden = await service.api.campaigns.create({
    campaignName: 'Secret other workspace',
    workspaceId: OTHER,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://other.example.com',
  })
  return { campaign, affiliate, commission, hidden }
}

const SIGNING_SECRET = 'whsec_admin_test_5d2c8a1f'

/** Posts a Stripe event signed with `secret` (the SDK's own test header) to the integration's endpoint; answers the status. */
async function signedEvent(
  t: { service: AffiliateService; clock: { now(): number } },
  integrationId: string,
  secret: string,
  id = 'evt_unhandled',
  url = `http://x/api/v1/integrations/${integrationId}/events`,
) {
  const payload = JSON.stringify({
    id,
    object: 'event',
    livemode: true,
    api_version: '2025-03-31.basil',
    type: 'payment_intent.created',
    data: { object: { id: 'pi_1' } },
  })
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(t.clock.now() / 1000) })
  const response = await t.service.fetch(
    new Request(url, { method: 'POST', headers: { 'stripe-signature': header, 'content-type': 'application/json' }, body: payload }),
  )
  return response.status
}

const PAGES = [
  '/admin',
  '/admin/campaigns',
  '/admin/campaigns/new',
  '/admin/affiliates',
  '/admin/commissions',
  '/admin/commissions/new',
  '/admin/payouts',
  '/admin/settings/integrations',
]

describe('admin dashboard', () => {
  it('shows nothing of the admin to a request authorize refuses, on every page and form', async () => {
    const t = setup()
    const { campaign, affiliate, commission } = await seed(t.service)
    const integration = await t.service.api.integrations.create({
      workspaceId: WS,
      provider: 'stripe',
      signingSecret: SIGNING_SECRET,
      description: 'Main shop',
    })
    expect(await signedEvent(t, integration.integrationId, SIGNING_SECRET)).toBe(200)
    const id = integration.integrationId
    for (const path of [
      ...PAGES,
      `/admin/affiliates/detail?affiliateId=${affiliate.id}`,
      `/admin/campaigns/edit?campaignId=${campaign.id}`,
      `/admin/commissions/detail?commissionId=${commission.commissionId}`,
      '/admin/commissions/export',
      '/admin/payouts/export?format=paypal',
      `/admin/settings/integrations/events?integrationId=${id}`,
      `/admin/settings/integrations/secret?integrationId=${id}`,
    ]) {
      const page = await t.get(path, {})
      expect(page.status, path).toBe(401)
      for (const leak of ['Spring', 'ann@example.com', 'cus@example.com', WS, 'Campaigns', 'Main shop', id, 'evt_', SIGNING_SECRET])
        expect(page.text, `${path} ${leak}`).not.toContain(leak)
    }
    const sent = await t.post('/admin/campaigns/delete', { campaignId: campaign.id, confirmed: 'yes' }, { headers: {} })
    expect(sent.status).toBe(401)
    expect((await t.service.api.campaigns.get(campaign.id)).campaignName).toBe('Spring')
    await t.get('/admin/settings/integrations')
    for (const [path, fields] of [
      ['/admin/settings/integrations/connect', { provider: 'stripe', signingSecret: 'whsec_new', livemode: 'true', description: 'sneaky' }],
      ['/admin/settings/integrations/secret', { integrationId: id, signingSecret: 'whsec_replaced' }],
      ['/admin/settings/integrations/disconnect', { integrationId: id, confirmed: 'yes' }],
    ] as const) {
      const refused = await t.post(path, fields, { headers: {} })
      expect(refused.status, path).toBe(401)
      expect(refused.text).not.toContain('Main shop')
    }
    expect((await t.service.api.integrations.list({ workspaceId: WS })).items.map((i) => i.description)).toEqual(['Main shop'])
    expect(await signedEvent(t, id, SIGNING_SECRET, 'evt_after')).toBe(200)
  })

  it('redirects a refused request to signInUrl when there is one', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([]),
      admin: { authorize: () => null, signInUrl: '/login' },
    })
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
    const integration = await t.service.api.integrations.create({
      workspaceId: WS,
      provider: 'stripe',
      signingSecret: SIGNING_SECRET,
      description: 'Main shop',
    })
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
      ['/admin/settings/integrations/connect', { provider: 'stripe', signingSecret: 'whsec_new', livemode: 'true', description: 'sneaky' }],
      ['/admin/settings/integrations/secret', { integrationId: integration.integrationId, signingSecret: 'whsec_replaced' }],
      ['/admin/settings/integrations/disconnect', { integrationId: integration.integrationId, confirmed: 'yes' }],
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
    expect((await t.service.api.integrations.list({ workspaceId: WS })).items.map((i) => i.description)).toEqual(['Main shop'])
    expect(await signedEvent(t, integration.integrationId, SIGNING_SECRET)).toBe(200)
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
    const use = await t.service.fetch(
      new Request(`http://x/api/v1/campaigns/list?workspaceId=${WS}`, { headers: { 'x-auth-service': key! } }),
    )
    expect(use.status).toBe(200)
    const [info] = await t.keyStore.list()
    const ask = await t.post('/admin/settings/keys/revoke', { keyId: info!.keyId })
    expect(ask.text).toContain('Revoke the key billing')
    expect(await t.keyStore.list()).toMatchObject([{ revokedAt: null }])
    const done = await t.post('/admin/settings/keys/revoke', { keyId: info!.keyId, confirmed: 'yes' })
    expect(done.status).toBe(303)
    const refused = await t.service.fetch(
      new Request(`http://x/api/v1/campaigns/list?workspaceId=${WS}`, { headers: { 'x-auth-service': key! } }),
    )
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
    expect(done.location).toBe(`/admin/commissions/detail?commissionId=${commission.commissionId}&notice=refunded`)
    expect((await t.service.api.commissions.get(commission.commissionId)).amount).toBe('50.00')
    expect((await t.get(done.location!)).text).toContain('Commission refunded.')
    const tooMuch = await t.post('/admin/commissions/refund', { commissionId: commission.commissionId, amount: '500.00', confirmed: 'yes' })
    expect(tooMuch.status).toBe(422)
  })

  it('names affiliates by e-mail in commission lists, the overview and the payout preview, and writes money grouped and exact', async () => {
    const t = setup()
    const { campaign, affiliate, commission } = await seed(t.service)
    await t.service.api.campaigns.update(campaign.id, { payoutTerm: 0, minimumPayoutAmount: 0 })
    await t.service.api.affiliates.update(affiliate.id, { isActive: true, payoutEmail: 'ann@pay.example.com', payoutMethod: 'PAYPAL' })
    await t.service.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'big@example.com',
      amount: '999999999.99',
    })
    const link = `<a href="/admin/affiliates/detail?affiliateId=${affiliate.id}">ann@example.com</a>`
    const list = await t.get('/admin/commissions')
    expect(list.text).toContain(link)
    expect(list.text).toContain('999,999,999.99 USD')
    expect(list.text).not.toContain(`${affiliate.id.slice(0, 8)}</a>`)
    expect((await t.get(`/admin/commissions/detail?commissionId=${commission.commissionId}`)).text).toContain(link)
    const overview = await t.get('/admin')
    expect(overview.text).toContain('1,000,000,099.99 USD')
    expect(overview.text.split(link).length - 1).toBeGreaterThanOrEqual(2)
    const preview = await t.post('/admin/payouts/preview', {})
    expect(preview.text).toContain(link)
    expect(preview.text).toContain('1,000,000,099.99 USD in total?')
  })

  it('creates a campaign and shows the API field message beside a refused field, keeping what was typed', async () => {
    const t = setup()
    await t.get('/admin/campaigns/new')
    const bad = await t.post('/admin/campaigns/new', { campaignName: 'Summer', url: 'not a url', commissionType: 'fixed', amount: '5' })
    expect(bad.status).toBe(400)
    expect(bad.text).toMatch(/id="url-error">url [^<]+</)
    expect(bad.text).toContain('value="Summer"')
    const good = await t.post('/admin/campaigns/new', {
      campaignName: 'Summer',
      url: 'https://shop.example.com',
      commissionType: 'fixed',
      amount: '5',
    })
    expect(good.location).toBe('/admin/campaigns?notice=campaign-created')
    expect((await t.service.api.campaigns.list({ workspaceId: WS })).items.map((c) => c.campaignName)).toEqual(['Summer'])
  })

  it('connects Stripe with the API field names and shows the endpoint URL to paste into Stripe, never the signing secret', async () => {
    const t = setup()
    const { campaign } = await seed(t.service)
    const page = await t.get('/admin/settings/integrations')
    expect(page.text).toContain('No payment provider is connected')
    for (const name of ['provider', 'signingSecret', 'campaignId', 'livemode', 'description'])
      expect(page.text, name).toContain(`name="${name}"`)
    for (const label of ['Signing secret', 'Campaign', 'Live mode', 'Description'])
      expect(page.text, label).toMatch(new RegExp(`<label for="[^"]+">${label}`))
    expect(page.text).toContain(`<option value="${campaign.id}">Spring</option>`)
    const refused = await t.post('/admin/settings/integrations/connect', {
      provider: 'stripe',
      signingSecret: '',
      campaignId: '',
      livemode: ['false', 'true'],
      description: 'Main shop',
    })
    expect(refused.status).toBe(400)
    expect(refused.text).toMatch(/id="connect-signingSecret-error">signingSecret [^<]+</)
    expect(refused.text).toContain('value="Main shop"')
    const made = await t.post('/admin/settings/integrations/connect', {
      provider: 'stripe',
      signingSecret: SIGNING_SECRET,
      campaignId: campaign.id,
      livemode: ['false', 'true'],
      description: 'Main shop',
    })
    expect(made.status).toBe(303)
    expect(made.location).toBe('/admin/settings/integrations?notice=integration-connected#providers')
    const [integration] = (await t.service.api.integrations.list({ workspaceId: WS })).items
    expect(integration).toMatchObject({ provider: 'stripe', campaignId: campaign.id, livemode: true, description: 'Main shop' })
    const shown = await t.get('/admin/settings/integrations?notice=integration-connected')
    const endpoint = `http://x/api/v1/integrations/${integration!.integrationId}/events`
    expect(shown.text).toContain('Stripe connected.')
    expect(shown.text).toContain(`data-copy="Copy the endpoint URL of Stripe Main shop">${endpoint}</code>`)
    expect(shown.text).toContain('Live mode · Spring')
    expect(shown.text).not.toContain(SIGNING_SECRET)
    // The URL shown is the one Stripe posts to: a signed event sent there is taken.
    expect(await signedEvent(t, integration!.integrationId, SIGNING_SECRET, 'evt_1', endpoint)).toBe(200)
  })

  it.each([
    ['paddle', 'Paddle Billing', 'transaction.completed'],
    ['lemonsqueezy', 'Lemon Squeezy', 'order_created'],
  ] as const)(
    'connects %s: its own form, endpoint URL, the events to send, its event log and its disconnection',
    async (provider, label, eventType) => {
      const t = setup()
      await seed(t.service)
      const page = await t.get(`/admin/settings/integrations?provider=${provider}`)
      expect(page.text).toContain(`<h3>Connect ${label}</h3>`)
      expect(page.text).toContain(`<input type="hidden" name="provider" value="${provider}">`)
      expect(page.text).toContain(`<button type="submit">Connect ${label}</button>`)
      expect(page.text).toContain(eventType)
      // Stripe's restricted key is Stripe's alone.
      expect(page.text).not.toContain('name="apiKey"')
      // A refusal keeps the provider's form.
      const refused = await t.post('/admin/settings/integrations/connect', {
        provider,
        signingSecret: '',
        campaignId: '',
        livemode: ['false', 'true'],
        description: 'Shop',
      })
      expect(refused.status).toBe(400)
      expect(refused.text).toContain(`<button type="submit">Connect ${label}</button>`)
      const made = await t.post('/admin/settings/integrations/connect', {
        provider,
        signingSecret: 'provider-secret-5d2c8a1f',
        campaignId: '',
        livemode: ['false', 'true'],
        description: 'Shop',
      })
      expect(made.location).toBe(`/admin/settings/integrations?notice=${provider}-connected#providers`)
      const [integration] = (await t.service.api.integrations.list({ workspaceId: WS })).items
      expect(integration).toMatchObject({ provider, description: 'Shop' })
      const shown = await t.get(`/admin/settings/integrations?notice=${provider}-connected`)
      expect(shown.text).toContain(`${label} connected.`)
      expect(shown.text).toContain(`Endpoint URL (paste it into ${label})`)
      expect(shown.text).toContain(
        `data-copy="Copy the endpoint URL of ${label} Shop">http://x/api/v1/integrations/${integration!.integrationId}/events</code>`,
      )
      expect(shown.text).not.toContain('provider-secret-5d2c8a1f')
      const log = await t.get(`/admin/settings/integrations/events?integrationId=${integration!.integrationId}`)
      expect(log.text).toContain(`Events from ${label} Shop`)
      expect(log.text).toContain(`No events yet. Add the endpoint URL`)
      const ask = await t.post('/admin/settings/integrations/disconnect', { integrationId: integration!.integrationId })
      expect(ask.text).toContain(`Disconnect ${label} Shop? Its endpoint refuses ${label}’s events from now on`)
      const gone = await t.post('/admin/settings/integrations/disconnect', { integrationId: integration!.integrationId, confirmed: 'yes' })
      expect(gone.location).toBe(`/admin/settings/integrations?notice=${provider}-disconnected#providers`)
      expect((await t.get(`/admin/settings/integrations?notice=${provider}-disconnected`)).text).toContain(`${label} disconnected.`)
    },
  )

  it('shows the full endpoint URL from the request origin and a custom basePath', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([]),
      basePath: '/affiliates/api',
      admin: { authorize: () => ({ userId: 'owner', workspaceIds: [WS] }), secret: 'a'.repeat(32) },
    })
    const integration = await service.api.integrations.create({ workspaceId: WS, provider: 'stripe', signingSecret: SIGNING_SECRET })
    const page = await (await service.fetch(new Request('https://shop.example.com/admin/settings/integrations'))).text()
    expect(page).toContain(`>https://shop.example.com/affiliates/api/integrations/${integration.integrationId}/events</code>`)
  })

  it("lists a Stripe integration's events with their status, reason and commission, filtered by status", async () => {
    const t = setup()
    const campaign = await t.service.api.campaigns.create({
      campaignName: 'Shop',
      workspaceId: WS,
      commissionType: 'percentage',
      amount: 20,
      url: 'https://shop.example.com',
      payoutTerm: 0,
    })
    const ann = await t.service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id, isActive: true })
    await t.service.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-2026' })
    const integration = await t.service.api.integrations.create({
      workspaceId: WS,
      provider: 'stripe',
      signingSecret: SIGNING_SECRET,
      description: 'Main shop',
    })
    const send = async (id: string, type: string, object: Record<string, unknown>) => {
      const payload = JSON.stringify({ id, object: 'event', livemode: true, api_version: '2025-03-31.basil', type, data: { object } })
      const header = Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: SIGNING_SECRET,
        timestamp: Math.floor(t.clock.now() / 1000),
      })
      const response = await t.service.fetch(
        new Request(`http://x${integration.endpointPath}`, { method: 'POST', headers: { 'stripe-signature': header }, body: payload }),
      )
      expect(response.status).toBe(200)
    }
    await send('evt_customer', 'customer.created', {
      id: 'cus_1',
      object: 'customer',
      email: 'buyer@example.com',
      metadata: { referral: 'ANN-2026' },
    })
    await send('evt_invoice', 'invoice.paid', {
      id: 'in_1',
      object: 'invoice',
      customer: 'cus_1',
      currency: 'usd',
      total: 5000,
      amount_paid: 5000,
      total_excluding_tax: 5000,
      status_transitions: { paid_at: Math.floor(t.clock.now() / 1000) },
      subscription: 'sub_1',
      charge: 'ch_1',
    })
    await send('evt_other', 'payment_intent.created', { id: 'pi_1' })
    const [commission] = (await t.service.api.commissions.list({ workspaceId: WS })).items
    expect(commission).toBeDefined()
    const settings = await t.get('/admin/settings/integrations')
    expect(settings.text).toContain(`href="/admin/settings/integrations/events?integrationId=${integration.integrationId}"`)
    const log = await t.get(`/admin/settings/integrations/events?integrationId=${integration.integrationId}`)
    expect(log.status).toBe(200)
    for (const text of [
      'evt_customer',
      'evt_invoice',
      'evt_other',
      'invoice.paid',
      'unhandled_type',
      'st-processed',
      'st-ignored',
      `/admin/commissions/detail?commissionId=${commission!.commissionId}`,
    ])
      expect(log.text, text).toContain(text)
    const ignored = await t.get(`/admin/settings/integrations/events?integrationId=${integration.integrationId}&status=ignored`)
    expect(ignored.text).toContain('evt_other')
    expect(ignored.text).not.toContain('evt_invoice')
    expect(ignored.text).toContain('<option value="ignored" selected>')
    const detail = await t.get(`/admin/commissions/detail?commissionId=${commission!.commissionId}`)
    expect(detail.text).toContain('Commission 10.00 USD')
    expect(detail.text).toContain('buyer@example.com')
  })

  it('replaces the signing secret (never shown back) and disconnects after a confirmation that says what happens', async () => {
    const t = setup()
    const integration = await t.service.api.integrations.create({
      workspaceId: WS,
      provider: 'stripe',
      signingSecret: SIGNING_SECRET,
      description: 'Main shop',
    })
    const form = await t.get(`/admin/settings/integrations/secret?integrationId=${integration.integrationId}`)
    expect(form.status).toBe(200)
    expect(form.text).toContain('name="signingSecret"')
    expect(form.text).not.toContain(SIGNING_SECRET)
    const empty = await t.post('/admin/settings/integrations/secret', { integrationId: integration.integrationId, signingSecret: '' })
    expect(empty.status).toBe(400)
    expect(empty.text).toMatch(/id="signingSecret-error">signingSecret [^<]+</)
    const replaced = await t.post('/admin/settings/integrations/secret', {
      integrationId: integration.integrationId,
      signingSecret: 'whsec_rotated_9f8e',
    })
    expect(replaced.location).toBe('/admin/settings/integrations?notice=integration-secret#providers')
    expect((await t.get('/admin/settings/integrations?notice=integration-secret')).text).not.toContain('whsec_rotated_9f8e')
    expect(await signedEvent(t, integration.integrationId, SIGNING_SECRET, 'evt_old')).toBe(400)
    expect(await signedEvent(t, integration.integrationId, 'whsec_rotated_9f8e', 'evt_new')).toBe(200)

    const ask = await t.post('/admin/settings/integrations/disconnect', { integrationId: integration.integrationId })
    expect(ask.status).toBe(200)
    expect(ask.text).toContain(
      'Disconnect Stripe Main shop? Its endpoint refuses Stripe’s events from now on and its event log is deleted; the sales and commissions it made stay.',
    )
    expect((await t.service.api.integrations.list({ workspaceId: WS })).items).toHaveLength(1)
    const done = await t.post('/admin/settings/integrations/disconnect', { integrationId: integration.integrationId, confirmed: 'yes' })
    expect(done.location).toBe('/admin/settings/integrations?notice=integration-disconnected#providers')
    expect((await t.service.api.integrations.list({ workspaceId: WS })).items).toHaveLength(0)
    expect((await t.get('/admin/settings/integrations?notice=integration-disconnected')).text).toContain('Stripe disconnected.')
    expect(await signedEvent(t, integration.integrationId, 'whsec_rotated_9f8e', 'evt_gone')).toBe(400)
  })

  it("does not show or change another workspace's integration", async () => {
    const t = setup()
    const other = await t.service.api.integrations.create({
      workspaceId: OTHER,
      provider: 'stripe',
      signingSecret: SIGNING_SECRET,
      description: 'Not yours',
    })
    expect((await t.get('/admin/settings/integrations')).text).not.toContain('Not yours')
    expect((await t.get(`/admin/settings/integrations/events?integrationId=${other.integrationId}`)).status).toBe(404)
    expect((await t.get(`/admin/settings/integrations/secret?integrationId=${other.integrationId}`)).status).toBe(404)
    expect((await t.post('/admin/settings/integrations/disconnect', { integrationId: other.integrationId, confirmed: 'yes' })).status).toBe(
      404,
    )
    expect(
      (await t.post('/admin/settings/integrations/secret', { integrationId: other.integrationId, signingSecret: 'whsec_x' })).status,
    ).toBe(404)
    expect(await signedEvent(t, other.integrationId, SIGNING_SECRET)).toBe(200)
  })

  it('filters affiliates by status and commissions by kind and period in storage: a match beyond the first 100 records is found', async () => {
    const t = setup()
    const campaign = await t.service.api.campaigns.create({
      campaignName: 'Spring',
      workspaceId: WS,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://shop.example.com',
      payoutTerm: 0,
    })
    const first = await t.service.api.affiliates.create({ email: 'first@example.com', campaignId: campaign.id, isActive: true })
    await t.service.api.affiliates.create({ email: 'applicant@example.com', campaignId: campaign.id, isActive: false })
    const paid = await t.service.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: first.id,
      referredUser: 'old@example.com',
      amount: '40.00',
      status: 'paid',
      commissionDate: '2025-06-15T12:00:00Z',
    })
    await t.service.api.commissions.refund(paid.commissionId, { amount: '10.00' })
    await t.service.api.affiliates.update(first.id, { isBanned: true })
    for (let i = 0; i < 120; i++) {
      t.clock.advance(1000)
      const a = await t.service.api.affiliates.create({ email: `active-${i}@example.com`, campaignId: campaign.id, isActive: true })
      await t.service.api.commissions.create({
        campaignId: campaign.id,
        affiliateId: a.id,
        referredUser: `buyer-${i}@example.com`,
        amount: '1.00',
      })
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
    const csv = await t.service.fetch(
      new Request('http://x/admin/commissions/export?from=2025-06-01&to=2025-06-15&kind=sale', { headers: ADMIN }),
    )
    const lines = (await csv.text()).trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toContain('old@example.com')
    expect((await t.get('/admin/commissions?from=not-a-day')).status).toBe(400)
  })
})
