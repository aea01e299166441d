import { afterEach, describe, expect, it } from 'vitest'
import { serve } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { KEY_A, manualClock, WS_A } from '../support/helpers.js'
import { checkedFetch } from '../support/openapi-check.js'
import { BROWSER, GOOGLEBOT, PK_B, SHOP, trackingSetup } from '../support/tracking-support.js'

// The public click capture over HTTP through the Node adapter: the redirect, the beacon and its
// CORS, limits per client address, dedupe, bots, hashed visitors and pruning.

// Click ids are time-ordered UUIDs (version 7).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})
const setup = async (options: Parameters<typeof trackingSetup>[0] = {}) => {
  const t = await trackingSetup(options)
  closers.push(t.close)
  return t
}

describe('GET /r/<referralCode>', () => {
  it('counts a click and answers 302 to the link url with clickId added (query and fragment kept)', async () => {
    const t = await setup()
    const response = await t.redirect('ANN-2026')
    expect(response.status).toBe(302)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const location = new URL(response.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe('https://shop.example.com/landing')
    expect(location.searchParams.get('utm')).toBe('x')
    expect(location.searchParams.get('ref')).toBe('ANN-2026')
    expect(location.hash).toBe('#top')
    const clickId = location.searchParams.get('clickId')
    expect(clickId).toMatch(UUID)
    expect(await t.counts()).toEqual({ linkClicks: 1, linkOpens: 0, affiliateClicks: 1, affiliateOpens: 0 })
    const [click] = await t.clicks()
    expect(click).toMatchObject({ id: clickId, linkId: t.link.id, event: 'click', createdAt: '2026-01-01T00:00:00.000Z' })
    expect(t.errors).toEqual([])
  })

  it('answers 404 for an unknown or malformed code, counting nothing; needs no key', async () => {
    const t = await setup()
    for (const code of ['NOPE-1', 'a', '%3Cscript%3E']) {
      const response = await t.redirect(code)
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ status: 404, code: 'not_found', message: 'Link not found' })
    }
    expect((await t.redirect('ANN-2026', { 'x-auth-service': 'wrong' })).status).toBe(302)
    expect(await t.clicks()).toHaveLength(1)
  })

  it('stores the visitor only as a hash: neither the address nor the user agent is in the record', async () => {
    const t = await setup()
    await t.redirect('ANN-2026')
    const [click] = await t.clicks()
    expect(click!.visitor).toMatch(/^[A-Za-z0-9_-]{16}$/)
    const stored = JSON.stringify(await t.storage.transaction((tx) => tx.find('clicks', {})))
    expect(stored).not.toContain('127.0.0.1')
    expect(stored).not.toContain('Chrome')
    // The salt's secret lives in storage, 32 random bytes: nothing a visitor could guess.
    const secret = await t.storage.transaction((tx) => tx.get('settings', 'clickSalt'))
    expect(secret!.value).toMatch(/^[0-9a-f]{64}$/)
  })

  it('another method on /r/<code> is 405 with Allow: GET, and counts nothing', async () => {
    const t = await setup()
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await checkedFetch(`${t.running.url}/r/ANN-2026`, { method, redirect: 'manual' })
      expect([response.status, response.headers.get('allow')]).toEqual([405, 'GET'])
    }
    expect((await checkedFetch(`${t.running.url}/r/ANN-2026/more`, { method: 'POST' })).status).toBe(404)
    expect(await t.clicks()).toEqual([])
  })
})

describe('dedupe', () => {
  it('the same link, address and user agent within clickDedupeSeconds count once and answer the same clickId', async () => {
    const t = await setup()
    const first = t.clickIdOf(await t.redirect('ANN-2026'))
    t.clock.advance(3_599_000)
    expect(t.clickIdOf(await t.redirect('ANN-2026'))).toBe(first)
    expect((await t.counts()).linkClicks).toBe(1)
    // Another user agent is another visitor.
    const other = t.clickIdOf(await t.redirect('ANN-2026', { 'user-agent': `${BROWSER} Edg/131` }))
    expect(other).not.toBe(first)
    expect((await t.counts()).linkClicks).toBe(2)
    // Past the window (measured from the first, counted click) it counts again.
    t.clock.advance(2_000)
    const later = t.clickIdOf(await t.redirect('ANN-2026'))
    expect(later).not.toBe(first)
    expect((await t.counts()).linkClicks).toBe(3)
  })

  it('a click and an open of one visitor are two events; each repeats once', async () => {
    const t = await setup()
    await t.redirect('ANN-2026')
    const open = await (await t.beacon({ referralCode: 'ANN-2026', event: 'open' })).json()
    const again = await (await t.beacon({ referralCode: 'ANN-2026', event: 'open' })).json()
    expect(again.data.clickId).toBe(open.data.clickId)
    expect(await t.counts()).toEqual({ linkClicks: 1, linkOpens: 1, affiliateClicks: 1, affiliateOpens: 1 })
  })

  it('holds across midnight UTC, when the daily salt changes; two days later the visitor hash differs', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1, 23, 59, 30))
    const t = await setup({ clock })
    const first = t.clickIdOf(await t.redirect('ANN-2026'))
    clock.advance(60_000)
    expect(t.clickIdOf(await t.redirect('ANN-2026'))).toBe(first)
    clock.advance(2 * 86_400_000)
    await t.redirect('ANN-2026')
    const [a, b] = await t.clicks()
    expect(a!.visitor).not.toBe(b!.visitor)
  })

  it('clickDedupeSeconds: 0 counts every event; a bad value is refused at start', async () => {
    const t = await setup({ clickDedupeSeconds: 0 })
    const ids = new Set([t.clickIdOf(await t.redirect('ANN-2026')), t.clickIdOf(await t.redirect('ANN-2026'))])
    expect(ids.size).toBe(2)
    expect((await t.counts()).linkClicks).toBe(2)
    await expect(setup({ clickDedupeSeconds: -1 })).rejects.toThrow('clickDedupeSeconds must be a whole number from 0 to 604800')
    await expect(setup({ clickDedupeSeconds: 1.5 })).rejects.toThrow('clickDedupeSeconds')
  })

  it('instances sharing a storage share the salt secret, so they dedupe together; trackingSecret replaces it', async () => {
    const storage = memoryStorage()
    const one = await setup({ storage })
    const first = one.clickIdOf(await one.redirect('ANN-2026'))
    // A service knows the clicks waiting in its own batches only: the other finds this one stored.
    await one.service.flush()
    const second = createAffiliateService({ storage, keyStore: memoryKeyStore([]), clock: one.clock, trackingLimit: false })
    const running = await serve(second, { port: 0 })
    closers.push(() => running.close())
    const response = await fetch(`${running.url}/r/ANN-2026`, { redirect: 'manual', headers: { 'user-agent': BROWSER } })
    expect(new URL(response.headers.get('location')!).searchParams.get('clickId')).toBe(first)
    expect(() => createAffiliateService({ storage, keyStore: memoryKeyStore([]), trackingSecret: 'short' })).toThrow(
      'trackingSecret must be',
    )
    const own = await setup({ trackingSecret: 'a secret of the host, 32 chars!!' })
    await own.redirect('ANN-2026')
    expect(await own.storage.transaction((tx) => tx.get('settings', 'clickSalt'))).toBeNull()
  })
})

describe('bots', () => {
  it('are answered but not counted: the redirect goes to the url without clickId; the beacon answers clickId null', async () => {
    const t = await setup()
    const response = await t.redirect('ANN-2026', { 'user-agent': GOOGLEBOT })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(t.link.url)
    expect(t.clickIdOf(response)).toBeNull()
    const beacon = await t.beacon({ referralCode: 'ANN-2026', event: 'open' }, { 'user-agent': GOOGLEBOT })
    expect(beacon.status).toBe(200)
    expect((await beacon.json()).data).toEqual({ clickId: null })
    expect(await t.counts()).toEqual({ linkClicks: 0, linkOpens: 0, affiliateClicks: 0, affiliateOpens: 0 })
    expect(await t.clicks()).toEqual([])
  })
})

describe('POST /track (the beacon)', () => {
  it('with a publishable key: 200 { clickId } in the envelope, counted once', async () => {
    const t = await setup()
    const response = await t.beacon({ referralCode: 'ANN-2026', event: 'click' })
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    const body = await response.json()
    expect(body).toEqual({ status: 200, message: 'Event tracked successfully', data: { clickId: expect.stringMatching(UUID) } })
    expect(await t.counts()).toMatchObject({ linkClicks: 1, affiliateClicks: 1 })
  })

  it('refuses a missing, unknown or secret key with 401, counting nothing', async () => {
    const t = await setup()
    const input = { referralCode: 'ANN-2026', event: 'click' }
    for (const response of [
      await t.beacon(input, {}, null),
      await t.beacon(input, {}, 'pk_unknown'),
      await t.beacon(input, {}, KEY_A),
      await t.beacon(input, { 'x-auth-service': KEY_A }, null),
    ]) {
      expect(response.status).toBe(401)
      expect(await response.json()).toEqual({
        status: 401,
        code: 'invalid_publishable_key',
        message: 'Invalid publishable key. Send a pk_ key in x-publishable-key.',
      })
    }
    expect(await t.clicks()).toEqual([])
  })

  it('answers 404 for a code in a workspace the key does not have, like an unknown code', async () => {
    const t = await setup()
    const response = await t.beacon({ referralCode: 'ANN-2026', event: 'click' }, {}, PK_B)
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ status: 404, code: 'not_found', message: 'Link not found' })
    expect(await t.clicks()).toEqual([])
  })

  it('validates the body with the same rules as POST /links/track', async () => {
    const t = await setup()
    const response = await t.beacon({ referralCode: 'x', event: 'view', extra: 1 }, { origin: SHOP })
    expect(response.status).toBe(400)
    expect(response.headers.get('access-control-allow-origin')).toBe(SHOP)
    const body = await response.json()
    expect(body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['event', 'extra', 'referralCode'])
    expect(await t.clicks()).toEqual([])
  })
})

describe('CORS for the beacon', () => {
  it("answers an allowed origin's POST with Access-Control-Allow-Origin and Vary", async () => {
    const t = await setup()
    const response = await t.beacon({ referralCode: 'ANN-2026', event: 'open' }, { origin: SHOP })
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBe(SHOP)
    expect(response.headers.get('vary')).toBe('Origin')
  })

  it("refuses another origin with 403, without CORS headers, counting nothing; '*' allows any", async () => {
    const t = await setup()
    const response = await t.beacon({ referralCode: 'ANN-2026', event: 'open' }, { origin: 'https://evil.example' })
    expect(response.status).toBe(403)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    expect(await response.json()).toEqual({
      status: 403,
      code: 'origin_not_allowed',
      message: 'Origin https://evil.example is not allowed for this publishable key',
    })
    expect(await t.clicks()).toEqual([])
    const any = await t.beacon({ referralCode: 'NOPE-1', event: 'open' }, { origin: 'https://evil.example' }, PK_B)
    expect(any.status).toBe(404)
    expect(any.headers.get('access-control-allow-origin')).toBe('https://evil.example')
  })

  it('answers the preflight (OPTIONS) with the methods and headers the beacon takes, without a key', async () => {
    const t = await setup()
    const response = await checkedFetch(`${t.running.url}/track`, {
      method: 'OPTIONS',
      headers: {
        origin: SHOP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-publishable-key',
      },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe(SHOP)
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS')
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type, x-publishable-key')
    expect(response.headers.get('access-control-max-age')).toBe('86400')
    expect(await t.clicks()).toEqual([])
  })

  it('GET /track is 405 with Allow', async () => {
    const t = await setup()
    const response = await checkedFetch(`${t.running.url}/track`)
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST, OPTIONS')
  })
})

describe('limits per client address, not per key', () => {
  const limit = { capacity: 3, refillPerSecond: 0.001 }

  it('the socket address by default: redirect and beacon share one budget; a forged X-Forwarded-For earns nothing', async () => {
    const t = await setup({ trackingLimit: limit, clickDedupeSeconds: 0 })
    expect((await t.redirect('ANN-2026', { 'x-forwarded-for': '1.1.1.1' })).status).toBe(302)
    expect((await t.beacon({ referralCode: 'ANN-2026', event: 'open' }, { 'x-forwarded-for': '2.2.2.2' })).status).toBe(200)
    // Another key does not help either: the budget is the address's.
    expect((await t.beacon({ referralCode: 'ANN-2026', event: 'open' }, { 'x-forwarded-for': '3.3.3.3' }, PK_B)).status).toBe(404)
    const limited = await t.redirect('ANN-2026', { 'x-forwarded-for': '4.4.4.4' })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await limited.json()).toEqual({ status: 429, code: 'rate_limited', message: 'Rate limit exceeded. Please retry later.' })
    expect((await t.beacon({ referralCode: 'ANN-2026', event: 'open' })).status).toBe(429)
    expect(await t.counts()).toMatchObject({ linkClicks: 1, linkOpens: 1 })
    // Keyed routes are not touched by it.
    const keyed = await fetch(`${t.running.url}/campaigns/list?workspaceId=${WS_A}`, { headers: { 'x-auth-service': KEY_A } })
    expect(keyed.status).toBe(200)
  })

  it('with trustProxy, each forwarded client has its own budget, refilled with time', async () => {
    const t = await setup({ trackingLimit: limit, clickDedupeSeconds: 0, trustProxy: true })
    const from = (address: string) => t.redirect('ANN-2026', { 'x-forwarded-for': address }).then((r) => r.status)
    expect([await from('1.1.1.1'), await from('1.1.1.1'), await from('1.1.1.1'), await from('1.1.1.1')]).toEqual([302, 302, 302, 429])
    expect(await from('2.2.2.2')).toBe(302)
    t.clock.advance(1_000_000)
    expect(await from('1.1.1.1')).toBe(302)
  })

  it('defaults to 20 a second with bursts of 40', async () => {
    const t = await setup({ trackingLimit: {}, clickDedupeSeconds: 0 })
    const statuses = []
    for (let i = 0; i < 41; i++) statuses.push((await t.redirect('ANN-2026')).status)
    expect(statuses.filter((s) => s === 302)).toHaveLength(40)
    expect(statuses[40]).toBe(429)
    t.clock.advance(50)
    expect((await t.redirect('ANN-2026')).status).toBe(302)
    expect((await t.redirect('ANN-2026')).status).toBe(429)
  })
})

describe('report rollups', () => {
  it('count every counted click and open, from the redirect, the beacon and a batch, and no repeat or bot', async () => {
    const t = await setup()
    await t.redirect('ANN-2026')
    await t.redirect('ANN-2026')
    await t.redirect('ANN-2026', { 'user-agent': GOOGLEBOT })
    await t.beacon({ referralCode: 'ANN-2026', event: 'open' })
    await t.service.api.links.track({
      events: [
        { referralCode: 'ANN-2026', event: 'click' },
        { referralCode: 'ANN-2026', event: 'open' },
      ],
    })
    await t.service.api.links.track({ referralCode: 'ANN-2026', event: 'click' })
    // The redirect and the beacon answer before their batch is written.
    await t.service.flush()
    const summary = await t.service.api.reports.summary({
      workspaceId: WS_A,
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-02T00:00:00.000Z',
    })
    expect(summary).toMatchObject({ clicks: 3, opens: 2 })
    expect(await t.counts()).toMatchObject({ linkClicks: 3, linkOpens: 2 })
  })
})

describe('click records are kept only while they can attribute', () => {
  it('are pruned once older than the longest campaign attributionWindowDays; newer ones stay', async () => {
    const t = await setup({ clickDedupeSeconds: 0 })
    await t.service.api.campaigns.update(t.campaign.id, { attributionWindowDays: 10 })
    await t.redirect('ANN-2026')
    t.clock.advance(5 * 86_400_000)
    await t.redirect('ANN-2026')
    // A campaign with a longer window elsewhere keeps clicks longer: 12 days.
    await t.service.api.campaigns.create({
      campaignName: 'Other',
      workspaceId: WS_A,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://b.example/',
      attributionWindowDays: 12,
    })
    t.clock.advance(11 * 86_400_000)
    await t.redirect('ANN-2026')
    await t.service.pruneClicks()
    // Day 16: the 12-day window reaches back to January 5th, so the click of the 6th stays.
    expect((await t.clicks()).map((c) => c.createdAt)).toEqual(['2026-01-06T00:00:00.000Z', '2026-01-17T00:00:00.000Z'])
    // The counters keep every click.
    expect((await t.counts()).linkClicks).toBe(3)
  })
})
