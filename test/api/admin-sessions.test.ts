import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage, storageKeyStore, type AdminOptions, type Storage } from '../../src/index.js'
import { manualClock } from '../support/helpers.js'

// The admin's sign-in through service.fetch: sessions kept in the storage (signing out ends them
// for every copy of the cookie, ended ones pruned), the sign-in limit per client address, a new
// CSRF seed at sign-in (the portal's too), and the workspace chooser.

const TOKEN = 'the-admin-token-of-this-test-0123456789'
const TOKEN_HASH = createHash('sha256').update(TOKEN).digest('hex')
const HOUR = 3_600_000
const WS = '11111111-1111-4111-8111-111111111111'
const OTHER = '33333333-3333-4333-8333-333333333333'
const KEYS_ONLY = '55555555-5555-4555-8555-555555555555'

function setup(admin: Partial<AdminOptions> = {}, storage: Storage = memoryStorage()) {
  const clock = manualClock()
  const links: string[] = []
  const service = createAffiliateService({
    storage,
    keyStore: storageKeyStore(storage, { clock }),
    clock,
    portal: {
      secret: 'p'.repeat(32),
      publicUrl: 'http://x',
      sendSignInLink: (_email, url) => void links.push(url),
      sendNotice: () => undefined,
    },
    admin: { tokenHash: TOKEN_HASH, secret: 'a'.repeat(32), sessionHours: 1, ...admin } as AdminOptions,
  })
  /** A browser at `address` (none: an in-process call): it keeps cookies and reads the CSRF token of the last page. */
  function browser(address?: string) {
    const cookies = new Map<string, string>()
    let csrf = ''
    async function send(method: string, path: string, form?: Record<string, string>) {
      const headers: Record<string, string> = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
      if (form) headers['content-type'] = 'application/x-www-form-urlencoded'
      const body = form ? new URLSearchParams({ csrf, ...form }) : null
      const response = await service.fetch(
        new Request(`http://x${path}`, { method, headers, body }),
        address === undefined ? undefined : { clientAddress: address },
      )
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';')
        const at = pair.indexOf('=')
        if (/Max-Age=0/.test(line)) cookies.delete(pair.slice(0, at))
        else cookies.set(pair.slice(0, at), pair.slice(at + 1))
      }
      const text = await response.text()
      csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
      return {
        status: response.status,
        headers: response.headers,
        text,
        location: response.headers.get('location'),
        setCookies: response.headers.getSetCookie(),
      }
    }
    async function signIn(token = TOKEN) {
      await send('GET', '/admin/sign-in')
      return send('POST', '/admin/sign-in', { token })
    }
    return { send, signIn, cookies, csrf: () => csrf }
  }
  const sessions = () => storage.transaction((tx) => tx.find('adminSessions', {}), { readOnly: true })
  return { service, clock, storage, links, browser, sessions }
}

describe('admin sessions', () => {
  it('signing out ends the session everywhere: the cookie copied to another browser no longer opens anything', async () => {
    const t = setup()
    const mine = t.browser()
    expect((await mine.signIn()).location).toBe('/admin')
    const copied = t.browser()
    copied.cookies.set('affiliate_admin_session', mine.cookies.get('affiliate_admin_session')!)
    expect((await copied.send('GET', '/admin')).status).toBe(200)
    expect(await t.sessions()).toHaveLength(1)
    // Only a keyed hash of the cookie's secret is stored.
    expect((await t.sessions())[0]!.id).not.toContain(mine.cookies.get('affiliate_admin_session'))

    await mine.send('GET', '/admin')
    expect((await mine.send('POST', '/admin/sign-out', {})).location).toBe('/admin/sign-in?notice=signed-out')
    expect(await t.sessions()).toHaveLength(0)
    const after = await copied.send('GET', '/admin')
    expect(after.status).toBe(303)
    expect(after.location).toBe('/admin/sign-in')
    expect(after.setCookies.some((line) => /^affiliate_admin_session=; .*Max-Age=0/.test(line))).toBe(true)
    expect((await copied.send('GET', '/admin/campaigns')).location).toBe('/admin/sign-in')
  })

  it('ends a session at sessionHours on every instance sharing the storage, and prunes ended sessions at the next sign-in', async () => {
    const storage = memoryStorage()
    const t = setup({}, storage)
    const other = setup({}, storage)
    const first = t.browser()
    await first.signIn()
    // Another instance (same storage and secret) knows the session, until it ends.
    const elsewhere = other.browser()
    elsewhere.cookies.set('affiliate_admin_session', first.cookies.get('affiliate_admin_session')!)
    expect((await elsewhere.send('GET', '/admin')).status).toBe(200)
    t.clock.advance(HOUR - 1)
    expect((await first.send('GET', '/admin')).status).toBe(200)
    t.clock.advance(1)
    other.clock.advance(HOUR)
    expect((await first.send('GET', '/admin')).location).toBe('/admin/sign-in')
    expect((await elsewhere.send('GET', '/admin')).location).toBe('/admin/sign-in')
    expect(await t.sessions()).toHaveLength(1)
    const second = t.browser()
    await second.signIn()
    const left = await t.sessions()
    expect(left).toHaveLength(1)
    expect(left[0]!.expiresAt).toBe(new Date(t.clock.now() + HOUR).toISOString())
  })

  it('a new admin token ends every session made with the old one', async () => {
    const storage = memoryStorage()
    const before = setup({}, storage)
    const admin = before.browser()
    await admin.signIn()
    const NEW = 'another-admin-token-0123456789-abcdef'
    const after = setup({ tokenHash: createHash('sha256').update(NEW).digest('hex') }, storage)
    const same = after.browser()
    same.cookies.set('affiliate_admin_session', admin.cookies.get('affiliate_admin_session')!)
    expect((await same.send('GET', '/admin')).location).toBe('/admin/sign-in')
    expect((await same.signIn(NEW)).location).toBe('/admin')
  })

  it('gives the browser a new CSRF seed at sign-in: a token of the seed before no longer passes', async () => {
    const t = setup()
    const b = t.browser()
    await b.send('GET', '/admin/sign-in')
    const seedBefore = b.cookies.get('affiliate_admin_csrf')
    const tokenBefore = b.csrf()
    const signedIn = await b.send('POST', '/admin/sign-in', { token: TOKEN })
    expect(signedIn.setCookies.filter((line) => line.startsWith('affiliate_admin_csrf='))).toHaveLength(1)
    expect(b.cookies.get('affiliate_admin_csrf')).not.toBe(seedBefore)
    // The form made before signing in is refused and changes nothing.
    const stale = await b.send('POST', '/admin/sign-out', { csrf: tokenBefore })
    expect(stale.status).toBe(403)
    expect((await b.send('GET', '/admin')).status).toBe(200)
    expect(b.csrf()).not.toBe(tokenBefore)
    expect((await b.send('POST', '/admin/sign-out', {})).location).toBe('/admin/sign-in?notice=signed-out')
  })

  it("gives the portal's browser a new CSRF seed at sign-in too, and its sign-out ends the session everywhere", async () => {
    const t = setup()
    const campaign = await t.service.api.campaigns.create({
      workspaceId: WS,
      campaignName: 'Spring',
      url: 'https://shop.example.com',
      commissionType: 'percentage',
      amount: 20,
    })
    await t.service.api.affiliates.create({ campaignId: campaign.id, email: 'ann@example.com' })
    const b = t.browser()
    await b.send('GET', '/portal/sign-in')
    await b.send('POST', '/portal/sign-in', { email: 'ann@example.com' })
    await expect.poll(() => t.links.length).toBe(1)
    const token = new URL(t.links[0]!).searchParams.get('token')!
    await b.send('GET', `/portal/sign-in/confirm?token=${token}`)
    const seedBefore = b.cookies.get('affiliate_portal_csrf')
    const tokenBefore = b.csrf()
    expect((await b.send('POST', '/portal/sign-in/confirm', { token })).location).toBe('/portal')
    expect(b.cookies.get('affiliate_portal_csrf')).not.toBe(seedBefore)
    expect((await b.send('POST', '/portal/sign-out', { csrf: tokenBefore })).status).toBe(403)
    expect((await b.send('GET', '/portal')).status).toBe(200)
    const copied = t.browser()
    copied.cookies.set('affiliate_portal_session', b.cookies.get('affiliate_portal_session')!)
    expect((await copied.send('GET', '/portal')).status).toBe(200)
    expect((await b.send('POST', '/portal/sign-out', {})).location).toBe('/portal/sign-in?notice=signed-out')
    expect((await copied.send('GET', '/portal')).location).toBe('/portal/sign-in')
  })
})

describe('the admin sign-in limit', () => {
  it('answers 429 with Retry-After to the 11th attempt within a minute from one address, other addresses go on, and a minute later it starts again', async () => {
    const t = setup()
    const guesser = t.browser('203.0.113.7')
    await guesser.send('GET', '/admin/sign-in')
    for (let i = 0; i < 10; i++) {
      const wrong = await guesser.send('POST', '/admin/sign-in', { token: `wrong-${i}` })
      expect(wrong.status).toBe(401)
      expect(wrong.text).toContain('That is not the admin token.')
    }
    const limited = await guesser.send('POST', '/admin/sign-in', { token: 'wrong-10' })
    expect(limited.status).toBe(429)
    // One attempt comes back every 6 seconds.
    expect(limited.headers.get('retry-after')).toBe('6')
    expect(limited.text).toContain('Too many attempts')
    // Even the right token: the limit is checked before the form is read.
    expect((await guesser.send('POST', '/admin/sign-in', { token: TOKEN })).status).toBe(429)
    expect(guesser.cookies.has('affiliate_admin_session')).toBe(false)

    const owner = t.browser('198.51.100.1')
    expect((await owner.signIn()).location).toBe('/admin')

    t.clock.advance(6_000)
    expect((await guesser.send('POST', '/admin/sign-in', { token: 'wrong-11' })).status).toBe(401)
    expect((await guesser.send('POST', '/admin/sign-in', { token: 'wrong-12' })).status).toBe(429)
    t.clock.advance(60_000)
    for (let i = 0; i < 10; i++) expect((await guesser.send('POST', '/admin/sign-in', { token: `again-${i}` })).status).toBe(401)
    expect((await guesser.send('POST', '/admin/sign-in', { token: TOKEN })).status).toBe(429)
  })

  it('counts requests without a client address in one shared bucket, and can be set or turned off', async () => {
    const t = setup()
    const inProcess = t.browser()
    await inProcess.send('GET', '/admin/sign-in')
    for (let i = 0; i < 10; i++) expect((await inProcess.send('POST', '/admin/sign-in', { token: `wrong-${i}` })).status).toBe(401)
    expect((await t.browser().signIn()).status).toBe(429)

    const tight = setup({ signInLimit: { capacity: 2, refillPerSecond: 1 } }).browser('203.0.113.7')
    await tight.send('GET', '/admin/sign-in')
    expect((await tight.send('POST', '/admin/sign-in', { token: 'a' })).status).toBe(401)
    expect((await tight.send('POST', '/admin/sign-in', { token: 'b' })).status).toBe(401)
    expect((await tight.send('POST', '/admin/sign-in', { token: 'c' })).headers.get('retry-after')).toBe('1')

    const open = setup({ signInLimit: false }).browser('203.0.113.7')
    await open.send('GET', '/admin/sign-in')
    for (let i = 0; i < 15; i++) expect((await open.send('POST', '/admin/sign-in', { token: `wrong-${i}` })).status).toBe(401)
    expect(() => setup({ signInLimit: { capacity: 0 } })).toThrow('admin.signInLimit.capacity must be a whole number of at least 1')
  })
})

describe('the workspace chooser', () => {
  it("lists every workspace with campaigns or keys to the token admin, with its campaigns' names, and opens a new one; never a box for an id", async () => {
    const t = setup()
    await t.service.api.campaigns.create({
      workspaceId: WS,
      campaignName: 'Spring',
      url: 'https://shop.example.com',
      commissionType: 'percentage',
      amount: 20,
    })
    t.clock.advance(1000)
    await t.service.api.campaigns.create({
      workspaceId: WS,
      campaignName: 'Summer',
      url: 'https://shop.example.com',
      commissionType: 'percentage',
      amount: 10,
    })
    await t.service.api.campaigns.create({
      workspaceId: OTHER,
      campaignName: 'Other shop',
      url: 'https://other.example.com',
      commissionType: 'fixed',
      amount: 5,
    })
    await storageKeyStore(t.storage).create({ workspaceIds: [KEYS_ONLY], label: 'billing' })
    const b = t.browser()
    await b.signIn()
    const page = await b.send('GET', '/admin/workspaces')
    expect(page.status).toBe(200)
    expect(page.text).toContain('2 campaigns: Summer, Spring')
    expect(page.text).toContain('1 campaign: Other shop')
    expect(page.text).toContain('No campaigns yet')
    for (const id of [WS, OTHER, KEYS_ONLY]) expect(page.text).toContain(`name="workspaceId" value="${id}"`)
    expect(page.text).toContain('New workspace')
    expect(page.text).not.toMatch(/<input[^>]*id="workspaceId"/)

    expect((await b.send('POST', '/admin/workspace', { workspaceId: OTHER })).location).toBe('/admin')
    expect(b.cookies.get('affiliate_admin_workspace')).toBe(OTHER)
    expect((await b.send('GET', '/admin/campaigns')).text).toContain('Other shop')

    const made = await b.send('POST', '/admin/workspace', { workspaceId: 'new' })
    expect(made.location).toBe('/admin/campaigns?notice=workspace-created')
    const fresh = b.cookies.get('affiliate_admin_workspace')!
    expect(fresh).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect([WS, OTHER, KEYS_ONLY]).not.toContain(fresh)
    const campaigns = await b.send('GET', '/admin/campaigns?notice=workspace-created')
    expect(campaigns.status).toBe(200)
    expect(campaigns.text).not.toContain('Other shop')
    expect(campaigns.text).toContain(fresh)
    // Listed while open, though it has no records yet.
    const listed = await b.send('GET', '/admin/workspaces')
    expect(listed.text).toContain(`name="workspaceId" value="${fresh}"`)
    expect(listed.text).toContain('(open now)')
  })

  it('shows the chooser, not an id box, when there is no workspace yet', async () => {
    const t = setup()
    const b = t.browser()
    await b.signIn()
    const home = await b.send('GET', '/admin')
    expect(home.status).toBe(200)
    expect(home.text).toContain('There are no workspaces yet: start a new one.')
    expect(home.text).toContain('New workspace')
    expect(home.text).not.toMatch(/<input[^>]*id="workspaceId"/)
  })

  it('lists only the workspaces authorize grants, opens no other and makes none', async () => {
    const storage = memoryStorage()
    const clock = manualClock()
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([]),
      clock,
      admin: { authorize: () => ({ userId: 'owner', workspaceIds: [WS.toUpperCase(), WS] }), secret: 'a'.repeat(32) },
    })
    await service.api.campaigns.create({
      workspaceId: OTHER,
      campaignName: 'Not yours',
      url: 'https://other.example.com',
      commissionType: 'fixed',
      amount: 5,
    })
    const page = await service.fetch(new Request('http://x/admin/workspaces'))
    const text = await page.text()
    expect(text).toContain(`value="${WS}"`)
    expect(text.split(`value="${WS}"`)).toHaveLength(2)
    expect(text).not.toContain(OTHER)
    expect(text).not.toContain('Not yours')
    expect(text).not.toContain('New workspace')
    const csrfCookie = page.headers
      .getSetCookie()
      .find((line) => line.startsWith('affiliate_admin_csrf='))!
      .split(';')[0]!
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)![1]!
    for (const workspaceId of [OTHER, 'new']) {
      const refused = await service.fetch(
        new Request('http://x/admin/workspace', {
          method: 'POST',
          headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, workspaceId }),
        }),
      )
      expect(refused.status).toBe(404)
      expect(refused.headers.getSetCookie().some((line) => line.startsWith('affiliate_admin_workspace='))).toBe(false)
    }
  })
})
