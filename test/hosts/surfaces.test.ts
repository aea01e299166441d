import { createHash } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express4 from 'express4'
import express5 from 'express5'
import { afterEach, describe, expect, it } from 'vitest'
import { expressAdapter } from '../../adapters/express.js'
import { protocolBehindProxies } from '../../adapters/forwarded.js'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, surfaceOf, type AffiliateService } from '../../src/index.js'

// Every surface the service has (API, tracking, portal, admin), from the one list it exposes,
// served by the Node and Express adapters on loopback; and the scheme a trusted proxy says
// (X-Forwarded-Proto) giving the admin's and the portal's pages Secure cookies and https URLs,
// an untrusted one changing nothing. Bun and Deno: test/programs/surfaces-runtimes.test.ts.

const TOKEN = 'the-admin-token-of-this-test-0123456789'
const WS = '11111111-1111-4111-8111-111111111111'

async function program() {
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    portal: {
      secret: 'p'.repeat(32),
      publicUrl: 'https://partners.example.com',
      sendSignInLink: () => undefined,
      sendNotice: () => undefined,
    },
    admin: { tokenHash: createHash('sha256').update(TOKEN).digest('hex'), secret: 'a'.repeat(32) },
  })
  const campaign = await service.api.campaigns.create({
    workspaceId: WS,
    campaignName: 'Spring',
    url: 'https://shop.example.com',
    commissionType: 'percentage',
    amount: 20,
  })
  const affiliate = await service.api.affiliates.create({ campaignId: campaign.id, email: 'ann@example.com' })
  await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-1' })
  const integration = await service.api.integrations.create({
    workspaceId: WS,
    provider: 'stripe',
    signingSecret: 'whsec_surfaces_test_0123',
  })
  return { service, integrationId: integration.integrationId }
}

/** A browser over real HTTP: keeps cookies, sends the last page's CSRF token, and `headers` with every request. */
function browser(origin: string, headers: Record<string, string> = {}) {
  const cookies = new Map<string, string>()
  let csrf = ''
  async function send(method: string, path: string, form?: Record<string, string>) {
    const response = await fetch(origin + path, {
      method,
      redirect: 'manual',
      headers: {
        ...headers,
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams({ csrf, ...form }) : null,
    })
    const setCookies = response.headers.getSetCookie()
    for (const line of setCookies) {
      const [pair = ''] = line.split(';')
      const at = pair.indexOf('=')
      cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
    const text = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
    return {
      status: response.status,
      text,
      setCookies,
      location: response.headers.get('location'),
      type: response.headers.get('content-type'),
    }
  }
  return { send }
}

/** Signs in to the admin and reads the integrations page: the cookies set on the way, and the Stripe endpoint URL shown. */
async function adminThrough(origin: string, integrationId: string, headers: Record<string, string> = {}) {
  const b = browser(origin, headers)
  const first = await b.send('GET', '/admin/sign-in')
  // The sign-in page is a 401 (every request the admin does not let in sees it).
  expect(first.status).toBe(401)
  const signedIn = await b.send('POST', '/admin/sign-in', { token: TOKEN })
  expect(signedIn.location).toBe('/admin')
  // Both cookies of the sign-in (the session, the new CSRF seed), also where the host set headers before (Express).
  expect(signedIn.setCookies.map((line) => line.split('=')[0])).toEqual(['affiliate_admin_session', 'affiliate_admin_csrf'])
  const page = await b.send('GET', '/admin/settings/integrations')
  expect(page.status, page.location ?? '').toBe(200)
  const endpoint = new RegExp(`(https?)://[^"<\\s]*/api/v1/integrations/${integrationId}/events`).exec(page.text)
  expect(endpoint, 'the endpoint URL to paste into Stripe').not.toBeNull()
  return { setCookies: [...first.setCookies, ...signedIn.setCookies], scheme: endpoint![1] }
}

const secure = (lines: string[]) => lines.map((line) => /;\s*Secure/i.test(line))

describe('surfaces', () => {
  it('lists the API, its tracking routes, the portal and the admin; a path belongs to the most specific one', async () => {
    const { service } = await program()
    expect(service.surfaces).toEqual([
      { name: 'api', path: '/api/v1' },
      { name: 'tracking', path: '/api/v1/r' },
      { name: 'tracking', path: '/api/v1/track' },
      { name: 'portal', path: '/portal' },
      { name: 'admin', path: '/admin' },
    ])
    const at = (path: string) => surfaceOf(service.surfaces, path)?.name
    expect([
      at('/api/v1/campaigns'),
      at('/api/v1/r/ANN-1'),
      at('/api/v1/track?x=1'),
      at('/api/v1/rx'),
      at('/admin'),
      at('/admin?x'),
      at('/admin/sign-in'),
      at('/portal/'),
    ]).toEqual(['api', 'tracking', 'tracking', 'api', 'admin', 'admin', 'admin', 'portal'])
    expect([at('/adminx'), at('/'), at('/hello'), at('/api/v2')]).toEqual([undefined, undefined, undefined, undefined])
    const plain = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), basePath: '/' })
    expect(plain.surfaces.map((s) => s.name)).toEqual(['api', 'tracking', 'tracking'])
    expect(surfaceOf(plain.surfaces, '/anything')?.name).toBe('api')
  })

  it('reads the scheme of the outermost trusted proxy from X-Forwarded-Proto, and nothing without one', () => {
    expect(protocolBehindProxies('https', 0)).toBeUndefined()
    expect(protocolBehindProxies('https', 1)).toBe('https')
    expect(protocolBehindProxies('HTTPS', 1)).toBe('https')
    // A client's own entry stands left of what the proxy appends.
    expect(protocolBehindProxies('https, http', 1)).toBe('http')
    expect(protocolBehindProxies('http, https, http', 2)).toBe('https')
    expect(protocolBehindProxies('https', 3)).toBe('https')
    expect(protocolBehindProxies('gopher', 1)).toBeUndefined()
    expect(protocolBehindProxies(undefined, 1)).toBeUndefined()
  })
})

describe('the Node adapter behind a proxy', () => {
  const running: RunningServer[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.close()))
  })
  async function start(service: AffiliateService, trustProxy: boolean | number) {
    const server = await serve(service, { port: 0, trustProxy, webhooks: false })
    running.push(server)
    return new URL(server.url).origin
  }

  it('with trustProxy, https from the proxy gives Secure cookies and https URLs on the admin', async () => {
    const { service, integrationId } = await program()
    const origin = await start(service, true)
    const { setCookies, scheme } = await adminThrough(origin, integrationId, { 'x-forwarded-proto': 'https' })
    expect(setCookies.length).toBeGreaterThanOrEqual(2)
    expect(secure(setCookies).every(Boolean)).toBe(true)
    expect(scheme).toBe('https')
    // The same server, a request the proxy says came over http: neither.
    const plain = await adminThrough(origin, integrationId, { 'x-forwarded-proto': 'http' })
    expect(secure(plain.setCookies).some(Boolean)).toBe(false)
    expect(plain.scheme).toBe('http')
  })

  it("ignores X-Forwarded-Proto without trustProxy, and a client's own entry left of the proxy's", async () => {
    const { service, integrationId } = await program()
    const untrusted = await adminThrough(await start(service, false), integrationId, { 'x-forwarded-proto': 'https' })
    expect(secure(untrusted.setCookies).some(Boolean)).toBe(false)
    expect(untrusted.scheme).toBe('http')
    const second = await program()
    const forged = await adminThrough(await start(second.service, 1), second.integrationId, { 'x-forwarded-proto': 'https, http' })
    expect(secure(forged.setCookies).some(Boolean)).toBe(false)
    expect(forged.scheme).toBe('http')
  })

  it('serves every surface: the API, the redirect, the portal and the admin', async () => {
    const { service } = await program()
    const origin = await start(service, false)
    expect((await fetch(`${origin}/api/v1/health`)).status).toBe(200)
    expect((await fetch(`${origin}/api/v1/r/ANN-1`, { redirect: 'manual' })).status).toBe(302)
    for (const page of ['/portal/sign-in', '/admin/sign-in']) {
      const response = await fetch(origin + page)
      expect(response.status, page).toBe(page === '/admin/sign-in' ? 401 : 200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    }
  })
})

type Express = typeof express5
const majors: [string, Express][] = [
  ['Express 4', express4 as unknown as Express],
  ['Express 5', express5],
]

describe.each(majors)('%s', (_name, express) => {
  const servers: Server[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
  async function app(service: AffiliateService, trustProxy?: string) {
    const app = express()
    if (trustProxy) app.set('trust proxy', trustProxy)
    app.use(expressAdapter(service))
    app.get('/hello', (_req, res) => {
      res.send('hello from the app')
    })
    const server = app.listen(0, '127.0.0.1')
    servers.push(server)
    await new Promise((resolve) => server.once('listening', resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  it('serves the admin and the portal beside the API and the redirect, and leaves every other path to the app', async () => {
    const { service } = await program()
    const origin = await app(service)
    const home = await fetch(`${origin}/admin`, { redirect: 'manual' })
    expect([home.status, home.headers.get('location')]).toEqual([303, '/admin/sign-in'])
    for (const page of ['/admin/sign-in', '/portal/sign-in']) {
      const response = await fetch(origin + page)
      expect(response.status, page).toBe(page === '/admin/sign-in' ? 401 : 200)
      expect(response.headers.get('content-security-policy'), page).toContain("default-src 'none'")
    }
    const signIn = await browser(origin).send('GET', '/admin/sign-in')
    expect(signIn.type).toBe('text/html; charset=utf-8')
    expect(signIn.text).toContain('Admin token')
    expect((await fetch(`${origin}/api/v1/health`)).status).toBe(200)
    expect((await fetch(`${origin}/api/v1/r/ANN-1`, { redirect: 'manual' })).status).toBe(302)
    expect(await (await fetch(`${origin}/hello`)).text()).toBe('hello from the app')
    // Beside the surfaces, Express's own 404, not a page of the admin.
    const beside = await fetch(`${origin}/administration`)
    expect(beside.status).toBe(404)
    expect(await beside.text()).toContain('Cannot GET /administration')
  })

  it('signs in to the admin with Secure cookies and https URLs when Express trusts the proxy, and ignores the header when it does not', async () => {
    const { service, integrationId } = await program()
    const trusted = await adminThrough(await app(service, 'loopback'), integrationId, { 'x-forwarded-proto': 'https' })
    expect(secure(trusted.setCookies).every(Boolean)).toBe(true)
    expect(trusted.scheme).toBe('https')
    const second = await program()
    const untrusted = await adminThrough(await app(second.service), second.integrationId, { 'x-forwarded-proto': 'https' })
    expect(secure(untrusted.setCookies).some(Boolean)).toBe(false)
    expect(untrusted.scheme).toBe('http')
  })
})
