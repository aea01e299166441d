import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { manualClock } from '../support/helpers.js'

// The site layer the portal and the admin share (src/site), through service.fetch: one script
// file, the router's HEAD, 405 and 404, guards before pages, notices, and the token sign-in's
// session cookie (test/api/admin-sessions.test.ts has the rest of the sessions).

const TOKEN = 'the-admin-token-of-this-test-0123456789'
const HOUR = 3_600_000
const WS = '11111111-1111-4111-8111-111111111111'

function setup() {
  const clock = manualClock()
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    clock,
    portal: { secret: 'p'.repeat(32), publicUrl: 'http://x', sendSignInLink: () => undefined, sendNotice: () => undefined },
    admin: { tokenHash: createHash('sha256').update(TOKEN).digest('hex'), secret: 'a'.repeat(32), sessionHours: 1 },
  })
  let cookies = new Map<string, string>()
  let csrf = ''
  async function send(method: string, path: string, form?: Record<string, string>) {
    const headers: Record<string, string> = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const body = form ? new URLSearchParams({ csrf, ...form }) : null
    const response = await service.fetch(new Request(`http://x${path}`, { method, headers, body }))
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const [name = '', value = ''] = pair.split('=')
      if (/Max-Age=0/.test(line)) cookies.delete(name)
      else cookies.set(name, value)
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
  async function signIn() {
    // A campaign gives the admin of every workspace one to open.
    if ((await service.api.campaigns.list({ limit: 1 })).items.length === 0) {
      await service.api.campaigns.create({
        workspaceId: WS,
        campaignName: 'Spring',
        url: 'https://shop.example.com',
        commissionType: 'percentage',
        amount: 20,
      })
    }
    await send('GET', '/admin/sign-in')
    const done = await send('POST', '/admin/sign-in', { token: TOKEN })
    expect(done.location).toBe('/admin')
  }
  return { service, clock, send, signIn, cookies: () => cookies, forget: () => ((cookies = new Map()), (csrf = '')) }
}

describe('the site layer', () => {
  it('serves one script file from each site, the same text, and every page loads it from its own path', async () => {
    const t = setup()
    const portal = await t.send('GET', '/portal/assets/site.js')
    const admin = await t.send('GET', '/admin/assets/site.js')
    for (const script of [portal, admin]) {
      expect(script.status).toBe(200)
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect(script.headers.get('x-content-type-options')).toBe('nosniff')
    }
    expect(admin.text).toBe(portal.text)
    expect(admin.text).toContain('data-confirm')
    const head = await t.service.fetch(new Request('http://x/portal/assets/site.js', { method: 'HEAD' }))
    expect([head.status, await head.text()]).toEqual([200, ''])
    const signIn = await t.send('GET', '/portal/sign-in')
    expect(signIn.text).toContain('<script src="/portal/assets/site.js" defer></script>')
    expect((await t.send('GET', '/admin/sign-in')).text).toContain('<script src="/admin/assets/site.js" defer></script>')
  })

  it('answers HEAD like GET without a body, and another method with 405 and Allow', async () => {
    const t = setup()
    const head = await t.service.fetch(new Request('http://x/portal/sign-in', { method: 'HEAD' }))
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await head.text()).toBe('')
    const put = await t.send('PUT', '/portal/sign-in/')
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST'])
    expect(put.text).toContain('This page answers GET, HEAD, POST only.')
    await t.signIn()
    const del = await t.send('DELETE', '/admin/campaigns/new')
    expect([del.status, del.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST'])
    const missing = await t.send('GET', '/admin/nowhere')
    expect(missing.status).toBe(404)
    expect(missing.text).toContain('<a href="/admin">Go to the overview</a>')
    expect((await t.send('GET', '/portal/join/not-a-campaign/extra')).status).toBe(404)
  })

  it('tells a request the admin turns away nothing, not even whether a page exists', async () => {
    const t = setup()
    for (const [method, path] of [
      ['GET', '/admin/nowhere'],
      ['DELETE', '/admin/campaigns/new'],
      ['GET', '/admin/campaigns'],
      ['POST', '/admin/sign-out'],
    ] as const) {
      const answer = await t.send(method, path, method === 'GET' || method === 'DELETE' ? undefined : {})
      expect([answer.status, answer.location], `${method} ${path}`).toEqual([303, '/admin/sign-in'])
    }
  })

  it('shows only the notices a site knows, whatever ?notice= names', async () => {
    const t = setup()
    await t.signIn()
    for (const name of ['constructor', '__proto__', 'toString', 'nope']) {
      const page = await t.send('GET', `/admin/campaigns?notice=${name}`)
      expect(page.status, name).toBe(200)
      expect(page.text, name).not.toContain('class="notice"')
    }
    expect((await t.send('GET', '/admin/campaigns?notice=campaign-created')).text).toContain(
      '<p class="notice" role="status">Campaign created.</p>',
    )
    expect((await t.send('GET', '/portal/sign-in?notice=constructor')).text).not.toContain('class="notice"')
  })

  it("keeps the admin's token session in the storage: the cookie is a random secret, it lasts sessionHours, a forged one is removed, signing out ends it", async () => {
    const t = setup()
    await t.signIn()
    const session = t.cookies().get('affiliate_admin_session')!
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect((await t.send('GET', '/admin')).status).toBe(200)
    // A secret of the right shape that no session has is no session, and its cookie is removed.
    t.cookies().set('affiliate_admin_session', `${session.slice(0, -1)}${session.endsWith('A') ? 'B' : 'A'}`)
    const forged = await t.send('GET', '/admin')
    expect(forged.location).toBe('/admin/sign-in')
    expect(forged.setCookies.some((line) => /^affiliate_admin_session=; .*Max-Age=0/.test(line))).toBe(true)
    await t.signIn()
    t.clock.advance(HOUR)
    expect((await t.send('GET', '/admin')).location).toBe('/admin/sign-in')
    await t.signIn()
    await t.send('GET', '/admin')
    const out = await t.send('POST', '/admin/sign-out', {})
    expect(out.location).toBe('/admin/sign-in?notice=signed-out')
    expect(t.cookies().has('affiliate_admin_session')).toBe(false)
    expect((await t.send('GET', '/admin/sign-in?notice=signed-out')).text).toContain('You are signed out.')
  })

  it("keeps each site's CSRF token to itself: the portal's token is refused by the admin", async () => {
    const t = setup()
    await t.signIn()
    await t.send('GET', '/portal/sign-in')
    // The last page read was the portal's: its token goes with the admin's form.
    const refused = await t.send('POST', '/admin/sign-out', {})
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('This form has expired')
    expect(t.cookies().has('affiliate_admin_session')).toBe(true)
  })
})
