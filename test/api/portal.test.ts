import { describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { OTHER_WS, PORTAL_SECRET, portalSetup, signIn, visitor, WS, type PortalSetup } from '../support/portal-support.js'

const campaignOf = (setup: PortalSetup, overrides: Record<string, unknown> = {}) =>
  setup.api.campaigns.create({
    campaignName: 'Spring launch',
    workspaceId: WS,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com/landing',
    ...overrides,
  })

/** An affiliate made through the API (as the host would), active unless said. */
const affiliateOf = (setup: PortalSetup, campaignId: string, email: string, overrides: Record<string, unknown> = {}) =>
  setup.api.affiliates.create({ email, campaignId, ...overrides })

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!

describe('joining', () => {
  it('makes an active affiliate with the additional info in details, and e-mails a sign-in link', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup, { collectAdditionalInfo: true })
    const browser = visitor(setup)
    const form = await browser.get(`/portal/join/${campaign.id}`)
    expect(form.status).toBe(200)
    expect(form.text).toContain('name="website"')
    expect(form.text).toContain('name="about"')
    const joined = await browser.post(`/portal/join/${campaign.id}`, {
      email: 'ann@example.com',
      firstName: 'Ann',
      lastName: 'Lee',
      website: 'https://ann.example',
      about: 'My cooking blog',
    })
    expect(joined.status).toBe(200)
    expect(joined.text).toContain('You have joined')
    await setup.holds(setup.sent, 1)
    expect(setup.sent.map((s) => s.email)).toEqual(['ann@example.com'])
    const [affiliate] = (await setup.api.affiliates.list({ email: 'ann@example.com' })).items
    expect(affiliate).toMatchObject({ firstName: 'Ann', lastName: 'Lee', isActive: true, campaignId: campaign.id })
    expect(JSON.parse(affiliate!.details!)).toEqual({ website: 'https://ann.example', about: 'My cooking blog' })
  })

  it('asks no additional info when the campaign does not collect it', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    const form = await visitor(setup).get(`/portal/join/${campaign.id}`)
    expect(form.text).not.toContain('name="website"')
  })

  it('makes the affiliate inactive and says it awaits approval when the campaign requires approval', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup, { requiresApprovalToJoin: true })
    const browser = visitor(setup)
    await browser.get(`/portal/join/${campaign.id}`)
    const joined = await browser.post(`/portal/join/${campaign.id}`, { email: 'bo@example.com' })
    expect(joined.text).toContain('awaits approval')
    const [affiliate] = (await setup.api.affiliates.list({ email: 'bo@example.com' })).items
    expect(affiliate!.isActive).toBe(false)
    const signedIn = await signIn(setup, 'bo@example.com')
    const dashboard = await signedIn.get('/portal')
    expect(dashboard.text).toContain('awaits approval')
    const refused = await signedIn.post('/portal/links', {})
    expect(refused.status).toBe(403)
    expect((await setup.api.links.list({ affiliateId: affiliate!.id })).items).toEqual([])
  })

  it('answers a bad e-mail with the form again (400), naming the field, and makes nothing', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    const browser = visitor(setup)
    await browser.get(`/portal/join/${campaign.id}`)
    const answer = await browser.post(`/portal/join/${campaign.id}`, { email: 'not-an-address', firstName: 'X' })
    expect(answer.status).toBe(400)
    expect(answer.text).toContain('email must be a valid e-mail address')
    expect(answer.text).toContain('aria-invalid="true"')
    expect(answer.text).toContain('value="X"')
    expect((await setup.api.affiliates.list({})).items).toEqual([])
  })

  it('answers an address already in the campaign exactly like a new one, and makes no second record', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = visitor(setup)
    await browser.get(`/portal/join/${campaign.id}`)
    const again = await browser.post(`/portal/join/${campaign.id}`, { email: 'ANN@example.com' })
    await browser.get(`/portal/join/${campaign.id}`)
    const fresh = await browser.post(`/portal/join/${campaign.id}`, { email: 'new@example.com' })
    expect(again.status).toBe(fresh.status)
    expect(again.text.replace('ANN@example.com', 'X')).toBe(fresh.text.replace('new@example.com', 'X'))
    expect((await setup.api.affiliates.list({ campaignId: campaign.id })).pagination.total).toBe(2)
  })

  it('answers 404 for a campaign that does not exist or is not a UUID', async () => {
    const setup = portalSetup()
    expect((await visitor(setup).get('/portal/join/99999999-9999-4999-8999-999999999999')).status).toBe(404)
    expect((await visitor(setup).get('/portal/join/nope')).status).toBe(404)
    expect((await visitor(setup).get('/portal/join/%E0%A4%A')).status).toBe(404)
    expect(setup.errors).toEqual([])
  })
})

describe('signing in', () => {
  it('answers the same page for a known and an unknown address, and e-mails only the known one', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const known = visitor(setup)
    await known.get('/portal/sign-in')
    const a = await known.post('/portal/sign-in', { email: 'ann@example.com' })
    const unknown = visitor(setup)
    await unknown.get('/portal/sign-in')
    const b = await unknown.post('/portal/sign-in', { email: 'zed@example.com' })
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(a.text.replace('ann@example.com', 'X')).toBe(b.text.replace('zed@example.com', 'X'))
    expect([...a.headers.keys()].sort()).toEqual([...b.headers.keys()].sort())
    await setup.holds(setup.sent, 1)
    expect(setup.sent.map((s) => s.email)).toEqual(['ann@example.com'])
  })

  it('signs in through the link once: the link then, and a link past 15 minutes, is refused', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    await browser.post('/portal/sign-in', { email: 'ann@example.com' })
    await setup.holds(setup.sent, 1)
    const link = setup.sent[0]!.url
    expect(link).toMatch(/^http:\/\/portal\.test\/portal\/sign-in\/confirm\?token=[A-Za-z0-9_-]{43}$/)
    expect((await browser.get(link)).status).toBe(200)
    const done = await browser.post('/portal/sign-in/confirm', { token: tokenOf(link) })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/portal')
    expect((await browser.get('/portal')).status).toBe(200)

    const other = visitor(setup)
    expect((await other.get(link)).status).toBe(400)
    await other.get('/portal/sign-in')
    const reused = await other.post('/portal/sign-in/confirm', { token: tokenOf(link) })
    expect(reused.status).toBe(400)
    expect(reused.text).toContain('no longer valid')
    expect(other.jar.has('affiliate_portal_session')).toBe(false)

    await other.get('/portal/sign-in')
    await other.post('/portal/sign-in', { email: 'ann@example.com' })
    await setup.holds(setup.sent, 2)
    const late = setup.sent[1]!.url
    setup.clock.advance(15 * 60_000)
    expect((await other.get(late)).status).toBe(400)
    await other.get('/portal/sign-in')
    expect((await other.post('/portal/sign-in/confirm', { token: tokenOf(late) })).status).toBe(400)
    expect(other.jar.has('affiliate_portal_session')).toBe(false)
  })

  it('keeps only keyed hashes of links and sessions in the storage', async () => {
    const storage = memoryStorage()
    const setup = portalSetup({ storage })
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    await browser.post('/portal/sign-in', { email: 'ann@example.com' })
    await setup.holds(setup.sent, 1)
    const token = tokenOf(setup.sent[0]!.url)
    const stored = await storage.transaction((tx) => tx.find('portalTokens', {}))
    expect(stored).toHaveLength(1)
    expect(JSON.stringify(stored)).not.toContain(token)
    await browser.get(setup.sent[0]!.url)
    await browser.post('/portal/sign-in/confirm', { token })
    const session = browser.jar.get('affiliate_portal_session')!
    const after = await storage.transaction((tx) => tx.find('portalTokens', {}))
    expect(after.map((record) => record.kind)).toEqual(['session'])
    expect(JSON.stringify(after)).not.toContain(session)
  })

  it('sends no link to a banned affiliate, refuses a link sent before the ban, and ends a session on ban', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    const banned = await affiliateOf(setup, campaign.id, 'ban@example.com', { isBanned: true })
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    const answer = await browser.post('/portal/sign-in', { email: 'ban@example.com' })
    expect(answer.status).toBe(200)
    // Nothing to send is decided before the answer: nothing waits to go out.
    expect(setup.sent).toEqual([])

    await setup.api.affiliates.update(banned.id, { isBanned: false })
    await browser.get('/portal/sign-in')
    await browser.post('/portal/sign-in', { email: 'ban@example.com' })
    await setup.holds(setup.sent, 1)
    const link = setup.sent[0]!.url
    await setup.api.affiliates.update(banned.id, { isBanned: true })
    await browser.get(link)
    const refused = await browser.post('/portal/sign-in/confirm', { token: tokenOf(link) })
    expect(refused.status).toBe(403)
    expect(browser.jar.has('affiliate_portal_session')).toBe(false)

    await setup.api.affiliates.update(banned.id, { isBanned: false })
    const signedIn = await signIn(setup, 'ban@example.com')
    expect((await signedIn.get('/portal')).status).toBe(200)
    await setup.api.affiliates.update(banned.id, { isBanned: true })
    const out = await signedIn.get('/portal')
    expect(out.status).toBe(403)
    expect(out.text).toContain('cannot sign in')
    expect(signedIn.jar.has('affiliate_portal_session')).toBe(false)
  })

  it('limits sign-in forms per client address (429 with Retry-After), other addresses unaffected', async () => {
    const setup = portalSetup()
    const browser = visitor(setup, '198.51.100.1')
    for (let i = 0; i < 5; i++) {
      await browser.get('/portal/sign-in')
      expect((await browser.post('/portal/sign-in', { email: `p${i}@example.com` })).status).toBe(200)
    }
    await browser.get('/portal/sign-in')
    const limited = await browser.post('/portal/sign-in', { email: 'p9@example.com' })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    const elsewhere = visitor(setup, '198.51.100.2')
    await elsewhere.get('/portal/sign-in')
    expect((await elsewhere.post('/portal/sign-in', { email: 'p9@example.com' })).status).toBe(200)
    setup.clock.advance(60_000)
    await browser.get('/portal/sign-in')
    expect((await browser.post('/portal/sign-in', { email: 'p9@example.com' })).status).toBe(200)
  })

  it('answers a bad address with the form again (400)', async () => {
    const setup = portalSetup()
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    const answer = await browser.post('/portal/sign-in', { email: 'nope' })
    expect(answer.status).toBe(400)
    expect(answer.text).toContain('email must be a valid e-mail address')
  })
})

describe('CSRF', () => {
  async function signedInWithCampaign() {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    const affiliate = await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = await signIn(setup, 'ann@example.com')
    await browser.get('/portal')
    return { setup, affiliate, browser }
  }

  it.each([
    ['missing', null],
    ['empty', ''],
    ['wrong', 'f'.repeat(64)],
  ])('refuses a form whose token is %s (403) and changes nothing', async (_, csrf) => {
    const { setup, affiliate, browser } = await signedInWithCampaign()
    const settings = await browser.post('/portal/settings', { payoutEmail: 'pay@example.com', payoutMethod: 'PAYPAL' }, { csrf })
    expect(settings.status).toBe(403)
    expect(settings.text).toContain('This form has expired')
    const link = await browser.post('/portal/links', {}, { csrf })
    expect(link.status).toBe(403)
    const out = await browser.post('/portal/sign-out', {}, { csrf })
    expect(out.status).toBe(403)
    expect(await setup.api.affiliates.get(affiliate.id)).toMatchObject({ payoutEmail: '', payoutMethod: null })
    expect((await setup.api.links.list({ affiliateId: affiliate.id })).items).toEqual([])
    expect((await browser.get('/portal')).status).toBe(200)
  })

  it("refuses another browser's token, and a form from a browser without the CSRF cookie", async () => {
    const { setup, affiliate, browser } = await signedInWithCampaign()
    const attacker = visitor(setup)
    await attacker.get('/portal/sign-in')
    const theirs = attacker.csrf()
    expect((await browser.post('/portal/settings', { payoutEmail: 'evil@example.com' }, { csrf: theirs })).status).toBe(403)
    const token = browser.csrf()
    browser.jar.delete('affiliate_portal_csrf')
    expect((await browser.post('/portal/settings', { payoutEmail: 'evil@example.com' }, { csrf: token })).status).toBe(403)
    expect((await setup.api.affiliates.get(affiliate.id)).payoutEmail).toBe('')
  })

  it('refuses sign-in and join forms without a token', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    expect((await browser.post('/portal/sign-in', { email: 'a@example.com' }, { csrf: null })).status).toBe(403)
    expect((await browser.post(`/portal/join/${campaign.id}`, { email: 'a@example.com' }, { csrf: null })).status).toBe(403)
    expect((await setup.api.affiliates.list({})).items).toEqual([])
  })
})

describe('one affiliate, never another', () => {
  it("shows only the signed-in affiliate's links, commissions and payouts, and no form reaches another's", async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup, { hideCustomerEmail: true })
    const ann = await affiliateOf(setup, campaign.id, 'ann@example.com')
    const bob = await affiliateOf(setup, campaign.id, 'bob@example.com', { payoutEmail: 'bob-pay@example.com', payoutMethod: 'WISE' })
    await setup.api.links.create({ affiliateId: bob.id, referralCode: 'BOB-SECRET' })
    await setup.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: bob.id,
      amount: 77.77,
      referredUser: 'bobs-buyer@example.com',
    })
    await setup.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-1' })
    await setup.api.commissions.create({ campaignId: campaign.id, affiliateId: ann.id, amount: 12.5, referredUser: 'jane.doe@example.com' })

    const browser = await signIn(setup, 'ann@example.com')
    const page = await browser.get('/portal')
    expect(page.text).toContain('ANN-1')
    expect(page.text).toContain('$12.50')
    expect(page.text).not.toContain('BOB-SECRET')
    expect(page.text).not.toContain('77.77')
    expect(page.text).not.toContain('bob')
    // hideCustomerEmail: the referred e-mail is masked.
    expect(page.text).not.toContain('jane.doe@example.com')
    expect(page.text).toContain('j•••@e•••.com')

    // A form naming Bob's id still acts on Ann only.
    await browser.post('/portal/settings', { payoutEmail: 'ann-pay@example.com', payoutMethod: 'PAYPAL', affiliateId: bob.id })
    await browser.post('/portal/links', { referralCode: 'ANN-2', affiliateId: bob.id })
    expect(await setup.api.affiliates.get(bob.id)).toMatchObject({ payoutEmail: 'bob-pay@example.com', payoutMethod: 'WISE' })
    expect((await setup.api.links.list({ affiliateId: bob.id })).items.map((l) => l.referralCode)).toEqual(['BOB-SECRET'])
    expect(await setup.api.affiliates.get(ann.id)).toMatchObject({ payoutEmail: 'ann-pay@example.com', payoutMethod: 'PAYPAL' })
    // Choosing Bob's record is refused like an unknown one.
    await browser.get('/portal')
    expect((await browser.post('/portal/choose', { affiliateId: bob.id })).status).toBe(404)
    expect((await browser.get('/portal')).text).not.toContain('BOB-SECRET')
  })

  it.each([
    ['/api/v1', undefined],
    ['/affiliates/api', '/affiliates/api'],
  ])('gives the counting redirect <publicUrl>%s/r/<code> to share, which records the click', async (prefix, basePath) => {
    const setup = portalSetup(basePath === undefined ? {} : { basePath })
    const campaign = await campaignOf(setup)
    const ann = await affiliateOf(setup, campaign.id, 'ann@example.com')
    await setup.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-1' })
    const page = await (await signIn(setup, 'ann@example.com')).get('/portal')
    const shared = /value="([^"]+)" aria-label="URL of link ANN-1"/.exec(page.text)?.[1]
    expect(shared).toBe(`http://portal.test${prefix}/r/ANN-1`)
    expect(page.text).not.toContain('?ref=ANN-1')
    const followed = await setup.service.fetch(new Request(shared!))
    expect(followed.status).toBe(302)
    expect(followed.headers.get('location')).toMatch(/^https:\/\/shop\.example\.com\/landing\?ref=ANN-1&clickId=/)
    await setup.service.flush()
    expect((await setup.api.links.list({ affiliateId: ann.id })).items[0]!.totalClicks).toBe(1)
  })

  it('shows referred e-mails in full when the campaign does not hide them', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    const ann = await affiliateOf(setup, campaign.id, 'ann@example.com')
    await setup.api.commissions.create({ campaignId: campaign.id, affiliateId: ann.id, amount: 5, referredUser: 'jane.doe@example.com' })
    const page = await (await signIn(setup, 'ann@example.com')).get('/portal')
    expect(page.text).toContain('jane.doe@example.com')
  })

  it('lets an address in several campaigns choose one after the link, and switch', async () => {
    const setup = portalSetup()
    const spring = await campaignOf(setup, { campaignName: 'Spring' })
    const autumn = await campaignOf(setup, { campaignName: 'Autumn', workspaceId: OTHER_WS })
    const inSpring = await affiliateOf(setup, spring.id, 'ann@example.com')
    const inAutumn = await affiliateOf(setup, autumn.id, 'Ann@Example.com')
    await setup.api.links.create({ affiliateId: inAutumn.id, referralCode: 'AUTUMN-1' })
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    await browser.post('/portal/sign-in', { email: 'ann@example.com' })
    await setup.holds(setup.sent, 1)
    expect(setup.sent).toHaveLength(1)
    await browser.get(setup.sent[0]!.url)
    const done = await browser.post('/portal/sign-in/confirm', { token: tokenOf(setup.sent[0]!.url) })
    expect(done.location).toBe('/portal/choose')
    expect((await browser.get('/portal')).location).toBe('/portal/choose')
    const chooser = await browser.get('/portal/choose')
    expect(chooser.text).toContain('Spring')
    expect(chooser.text).toContain('Autumn')
    expect((await browser.post('/portal/choose', { affiliateId: inSpring.id })).location).toBe('/portal')
    const spring1 = await browser.get('/portal')
    expect(spring1.text).toContain('<h1>Spring')
    expect(spring1.text).not.toContain('AUTUMN-1')
    expect(spring1.text).toContain('Switch to another program')
    await browser.get('/portal/choose')
    await browser.post('/portal/choose', { affiliateId: inAutumn.id })
    expect((await browser.get('/portal')).text).toContain('AUTUMN-1')
  })
})

describe('the session', () => {
  it('ends at sign-out: the old cookie no longer signs in', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = await signIn(setup, 'ann@example.com')
    const cookie = browser.jar.get('affiliate_portal_session')!
    await browser.get('/portal')
    const out = await browser.post('/portal/sign-out', {})
    expect(out.status).toBe(303)
    expect(out.location).toBe('/portal/sign-in?notice=signed-out')
    expect(browser.jar.has('affiliate_portal_session')).toBe(false)
    browser.jar.set('affiliate_portal_session', cookie)
    expect((await browser.get('/portal')).location).toBe('/portal/sign-in')
  })

  it('sends visitors without a session to sign in', async () => {
    const setup = portalSetup()
    const answer = await visitor(setup).get('/portal')
    expect(answer.status).toBe(303)
    expect(answer.location).toBe('/portal/sign-in')
  })

  it('expires after sessionDays', async () => {
    const setup = portalSetup({ portal: { sessionDays: 1 } })
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = await signIn(setup, 'ann@example.com')
    setup.clock.advance(86_400_000 - 1)
    expect((await browser.get('/portal')).status).toBe(200)
    setup.clock.advance(1)
    expect((await browser.get('/portal')).location).toBe('/portal/sign-in')
  })
})

describe('pages and headers', () => {
  it('answers HTML with a strict CSP, HttpOnly SameSite=Lax cookies (Secure on https), and nothing from another host', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = await signIn(setup, 'ann@example.com')
    const page = await browser.get('/portal')
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = page.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/)
    // The one script is a file of the portal's own origin (the copy buttons): no inline script.
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.text).not.toMatch(/<script>/)
    expect([...page.text.matchAll(/<script[^>]*>/g)].map(([tag]) => tag)).toEqual(['<script src="/portal/assets/site.js" defer>'])
    expect(page.text).not.toMatch(/<(link|img)[^>]+(src|href)=/)
    const script = await visitor(setup).get('/portal/assets/site.js')
    expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8'])
    expect(script.text).toContain('navigator.clipboard')
    expect(page.text).not.toMatch(/ style=/)

    const http = await visitor(setup).get('/portal/sign-in')
    expect(http.headers.getSetCookie()[0]).toMatch(/^affiliate_portal_csrf=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Lax$/)
    const https = await visitor(setup).get('https://portal.test/portal/sign-in')
    expect(https.headers.getSetCookie()[0]).toMatch(/; HttpOnly; SameSite=Lax; Secure$/)
    const session = (await signIn(setup, 'ann@example.com')).jar.get('affiliate_portal_session')
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('shows only its own notices, whatever ?notice= says', async () => {
    const setup = portalSetup()
    const page = await visitor(setup).get('/portal/sign-in?notice=constructor')
    expect(page.text).not.toContain('class="notice"')
    expect((await visitor(setup).get('/portal/sign-in?notice=signed-out')).text).toContain('You are signed out.')
  })

  it('escapes every text from records', async () => {
    const setup = portalSetup()
    const campaign = await campaignOf(setup, {
      campaignName: '<script>alert(1)</script>',
      affiliatePortalWelcomeMessage: '<img src=x onerror=alert(1)>',
    })
    await affiliateOf(setup, campaign.id, 'ann@example.com', { firstName: '"><b>x</b>' })
    const page = await (await signIn(setup, 'ann@example.com')).get('/portal')
    expect(page.text).not.toContain('<script>alert')
    expect(page.text).not.toContain('<img')
    expect(page.text).not.toContain('<b>x</b>')
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  })

  it('applies the theme and keeps the CSP hash in step with it', async () => {
    const setup = portalSetup({ portal: { theme: { '--portal-accent': '#7a1fa2' } } })
    const page = await visitor(setup).get('/portal/sign-in')
    expect(page.text).toContain(':root{--portal-accent:#7a1fa2}')
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.text)![1]!
    const digest = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(style))).toString('base64')
    expect(page.headers.get('content-security-policy')).toContain(`'sha256-${digest}'`)
  })

  it('answers unknown portal pages 404 and wrong methods 405, and leaves the API as it was', async () => {
    const setup = portalSetup()
    expect((await visitor(setup).get('/portal/nope')).status).toBe(404)
    const wrong = await visitor(setup).post('/portal/settings', {}, { csrf: null })
    expect(wrong.status).toBe(403)
    const get = await visitor(setup).get('/portal/settings')
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    const health = await setup.service.fetch(new Request('http://portal.test/api/v1/health'))
    expect(health.status).toBe(200)
    expect((await setup.service.fetch(new Request('http://portal.test/portalx'))).status).toBe(404)
  })

  it('is off unless asked for', async () => {
    const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]) })
    const answer = await service.fetch(new Request('http://portal.test/portal/sign-in'))
    expect(answer.status).toBe(404)
    expect(answer.headers.get('content-type')).toContain('application/json')
  })

  const send = (): void => undefined
  const ok = { secret: PORTAL_SECRET, publicUrl: 'https://partners.example.com', sendSignInLink: send, sendNotice: send }
  it.each<[Record<string, unknown>, string]>([
    [{ ...ok, secret: 'short' }, 'portal.secret'],
    [{ ...ok, sendSignInLink: undefined }, 'portal.sendSignInLink'],
    [{ ...ok, sendNotice: undefined }, 'portal.sendNotice'],
    [{ ...ok, path: '/api/v1/portal' }, 'portal.path'],
    [{ ...ok, theme: { '--portal-accent': 'red;}' } }, 'portal.theme'],
    [{ ...ok, theme: { color: 'red' } }, 'portal.theme'],
    [{ ...ok, publicUrl: 'ftp://x' }, 'portal.publicUrl'],
    [{ ...ok, publicUrl: 'partners.example.com' }, 'portal.publicUrl'],
    [{ ...ok, publicUrl: undefined }, 'portal.publicUrl is required'],
    [{ ...ok, signInLimit: { capacity: 0 } }, 'portal.signInLimit.capacity'],
  ])('throws a TypeError naming a bad option (%#)', (portal, name) => {
    expect(() => createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), portal: portal as never })).toThrow(
      new RegExp(name.replace('.', '\\.')),
    )
    expect(() => createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), portal: portal as never })).toThrow(
      TypeError,
    )
  })

  it('sends links to publicUrl, not to the Host the request names', async () => {
    const setup = portalSetup({ portal: { publicUrl: 'https://partners.example.com/ignored' } })
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = visitor(setup)
    await browser.get('http://evil.test/portal/sign-in')
    await browser.post(
      'http://evil.test/portal/sign-in',
      { email: 'ann@example.com' },
      { headers: { host: 'evil.test', 'x-forwarded-host': 'evil.test' } },
    )
    await setup.holds(setup.sent, 1)
    expect(setup.sent[0]!.url).toMatch(/^https:\/\/partners\.example\.com\/portal\/sign-in\/confirm\?token=/)
  })

  it('refuses to start without publicUrl, so no link is ever built from the Host a client sends', () => {
    const portal = { secret: PORTAL_SECRET, sendSignInLink: send, sendNotice: send }
    expect(() => createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), portal: portal as never })).toThrow(
      /^portal\.publicUrl is required: the http\(s\) origin the service is reached at/,
    )
  })

  it('passes a failing sendSignInLink to onError and answers the page all the same', async () => {
    const setup = portalSetup({ portal: { sendSignInLink: () => Promise.reject(new Error('mail down')) } })
    const campaign = await campaignOf(setup)
    await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = visitor(setup)
    await browser.get('/portal/sign-in')
    expect((await browser.post('/portal/sign-in', { email: 'ann@example.com' })).status).toBe(200)
    await setup.holds(setup.errors, 1)
    expect(setup.errors).toEqual([new Error('mail down')])
  })
})

async function joinAndSignIn(storage: Storage) {
  const setup = portalSetup({ storage })
  const campaign = await campaignOf(setup)
  const browser = visitor(setup)
  await browser.get(`/portal/join/${campaign.id}`)
  await browser.post(`/portal/join/${campaign.id}`, { email: 'ann@example.com' })
  const signedIn = await signIn(setup, 'ann@example.com')
  expect((await signedIn.get('/portal')).status).toBe(200)
  const cookie = signedIn.jar.get('affiliate_portal_session')!
  await signedIn.post('/portal/sign-out', {})
  signedIn.jar.set('affiliate_portal_session', cookie)
  expect((await signedIn.get('/portal')).location).toBe('/portal/sign-in')
}

it('works on sql.js storage (migration 9): join, sign in, dashboard, sign out', async () => {
  await joinAndSignIn(sqlJsStorage())
})

describe.skipIf(!postgresUrl)(needs('The portal on PostgreSQL', POSTGRES_VAR), () => {
  it('works on PostgreSQL storage (migration 7): join, sign in, dashboard, sign out', async () => {
    const pool = await testPool(4)
    const schema = uniqueName('portal')
    try {
      await joinAndSignIn(postgresStorage({ pool, schema }))
    } finally {
      await dropSchema(pool, schema)
      await pool.end()
    }
  })
})

it('is served by the Express adapter beside the API, the rest going on to the app', async () => {
  const { default: express } = await import('express5')
  const { expressAdapter } = await import('../../adapters/express.js')
  const setup = portalSetup()
  const app = express()
  app.use(expressAdapter(setup.service))
  app.get('/hello', (_req, res) => void res.send('hello'))
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  try {
    const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`
    const page = await fetch(`${base}/portal/sign-in`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await (await fetch(`${base}/hello`)).text()).toBe('hello')
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200)
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

describe('forms the API refuses', () => {
  async function signedIn() {
    const setup = portalSetup()
    const campaign = await campaignOf(setup, { allowedUrlParameters: ['ref', 'via'] })
    const other = await affiliateOf(setup, campaign.id, 'other@example.com')
    await setup.api.links.create({ affiliateId: other.id, referralCode: 'TAKEN' })
    const affiliate = await affiliateOf(setup, campaign.id, 'ann@example.com', { payoutEmail: 'old@example.com', payoutMethod: 'WISE' })
    const browser = await signIn(setup, 'ann@example.com')
    await browser.get('/portal')
    return { setup, affiliate, browser }
  }

  it('shows a code already in use (422) and a bad code (400) on the dashboard, and makes no link', async () => {
    const { setup, affiliate, browser } = await signedIn()
    const taken = await browser.post('/portal/links', { referralCode: 'TAKEN' })
    expect(taken.status).toBe(422)
    expect(taken.text).toContain('This referralCode is already in use')
    const bad = await browser.post('/portal/links', { referralCode: 'no spaces' })
    expect(bad.status).toBe(400)
    expect(bad.text).toContain('referralCode must be 3 to 64 letters, digits, _ or -')
    expect(bad.text).toContain('value="no spaces"')
    expect((await setup.api.links.list({ affiliateId: affiliate.id })).items).toEqual([])
  })

  it('makes a link with the URL parameter chosen', async () => {
    const { setup, affiliate, browser } = await signedIn()
    expect((await browser.post('/portal/links', { urlParameter: 'via' })).status).toBe(303)
    const [link] = (await setup.api.links.list({ affiliateId: affiliate.id })).items
    expect(link!.url).toMatch(/\?via=REF-[A-Z0-9]{8}$/)
  })

  it('shows a bad payout e-mail or method (400) beside the field and changes nothing', async () => {
    const { setup, affiliate, browser } = await signedIn()
    const email = await browser.post('/portal/settings', { payoutEmail: 'not-an-address', payoutMethod: 'PAYPAL' })
    expect(email.status).toBe(400)
    expect(email.text).toContain('payoutEmail must be a valid e-mail address')
    expect(email.text).toContain('value="not-an-address"')
    await browser.get('/portal')
    const method = await browser.post('/portal/settings', { payoutEmail: 'new@example.com', payoutMethod: 'CHEQUE' })
    expect(method.status).toBe(400)
    expect(method.text).toContain('Choose a payout method from the list')
    expect(await setup.api.affiliates.get(affiliate.id)).toMatchObject({ payoutEmail: 'old@example.com', payoutMethod: 'WISE' })
  })

  it('tells the old payout e-mail and the account e-mail when the payout e-mail changes, and no one when it does not', async () => {
    const { setup, affiliate, browser } = await signedIn()
    expect((await browser.post('/portal/settings', { payoutEmail: 'old@example.com', payoutMethod: 'PAYPAL' })).status).toBe(303)
    // Nothing to send is decided before the answer: nothing waits to go out.
    expect(setup.notices).toEqual([])
    await browser.get('/portal')
    setup.clock.advance(61_000)
    const at = new Date(setup.clock.now()).toISOString()
    expect((await browser.post('/portal/settings', { payoutEmail: 'thief@evil.test', payoutMethod: 'PAYPAL' })).status).toBe(303)
    await setup.holds(setup.notices, 2)
    expect(await setup.api.affiliates.get(affiliate.id)).toMatchObject({ payoutEmail: 'thief@evil.test' })
    expect(setup.notices.map((notice) => notice.email)).toEqual(['old@example.com', 'ann@example.com'])
    for (const notice of setup.notices) {
      expect(notice.subject).toBe('Your payout e-mail for the Spring launch affiliate program was changed')
      expect(notice.text).toContain(`from old@example.com to thief@evil.test at ${at}.`)
      expect(notice.text).toContain('sign in at http://portal.test/portal/sign-in')
    }
    // From none to one: the account's e-mail alone is told.
    setup.notices.length = 0
    await browser.get('/portal')
    await browser.post('/portal/settings', { payoutEmail: '', payoutMethod: '' })
    await browser.get('/portal')
    await browser.post('/portal/settings', { payoutEmail: 'ann-pay@example.com', payoutMethod: 'PAYPAL' })
    await setup.holds(setup.notices, 3)
    expect(setup.notices.map((notice) => [notice.email, /from (\S+) to (\S+)/.exec(notice.text)!.slice(1)])).toEqual([
      ['thief@evil.test', ['thief@evil.test', '(none)']],
      ['ann@example.com', ['thief@evil.test', '(none)']],
      ['ann@example.com', ['(none)', 'ann-pay@example.com']],
    ])
  })

  it('passes a failing sendNotice to onError and saves the settings all the same', async () => {
    const setup = portalSetup({ portal: { sendNotice: () => Promise.reject(new Error('mail down')) } })
    const campaign = await campaignOf(setup)
    const affiliate = await affiliateOf(setup, campaign.id, 'ann@example.com')
    const browser = await signIn(setup, 'ann@example.com')
    await browser.get('/portal')
    expect((await browser.post('/portal/settings', { payoutEmail: 'new@example.com', payoutMethod: 'PAYPAL' })).status).toBe(303)
    await setup.holds(setup.errors, 1)
    expect(setup.errors).toEqual([new Error('mail down')])
    expect(await setup.api.affiliates.get(affiliate.id)).toMatchObject({ payoutEmail: 'new@example.com' })
  })

  it('clears the payout e-mail and method when sent empty', async () => {
    const { setup, affiliate, browser } = await signedIn()
    expect((await browser.post('/portal/settings', { payoutEmail: '', payoutMethod: '' })).status).toBe(303)
    expect(await setup.api.affiliates.get(affiliate.id)).toMatchObject({ payoutEmail: '', payoutMethod: null })
  })

  it('refuses a form that is not urlencoded (415) or too large (413)', async () => {
    const { browser } = await signedIn()
    const json = await browser.post('/portal/settings', {}, { headers: { 'content-type': 'application/json' } })
    expect(json.status).toBe(415)
    await browser.get('/portal')
    const large = await browser.post('/portal/settings', { payoutEmail: 'x'.repeat(20_000) })
    expect(large.status).toBe(413)
  })
})
