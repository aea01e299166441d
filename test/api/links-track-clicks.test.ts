import { afterEach, describe, expect, it } from 'vitest'
import { KEY_A, WS_A } from '../support/helpers.js'
import { checkedFetch } from '../support/openapi-check.js'
import { BROWSER, GOOGLEBOT, trackingSetup } from '../support/tracking-support.js'

// One click-counting path (issue 39): the keyed POST /links/track counts through the click capture
// the redirect and the beacon use: a click record per counted event, written in a batch with its
// counters and rollups; with the visitor named (userAgent, clientAddress), the same dedupe and bot
// filter as the redirect.

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function setup() {
  const t = await trackingSetup()
  closers.push(t.close)
  const track = async (body: unknown) => {
    const response = await checkedFetch(`${t.running.url}/links/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-service': KEY_A },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }
  return { ...t, track }
}

describe('the keyed POST /links/track counts as the redirect does', () => {
  it('writes a click record per event, and answers the link with the event counted (written before the answer)', async () => {
    const t = await setup()
    const answer = await t.track({ referralCode: 'ANN-2026', event: 'click' })
    expect(answer.status).toBe(200)
    expect(answer.body.data).toMatchObject({ id: t.link.id, totalClicks: 1, totalOpens: 0 })
    await t.track({ referralCode: 'ANN-2026', event: 'open' })
    // No visitor named: every event counts, each a record of its own.
    await t.track({ referralCode: 'ANN-2026', event: 'click' })
    const clicks = await t.clicks()
    // Made at one instant of the test's clock: compared in any order.
    expect(clicks.map((click) => `${click.linkId} ${click.event}`).sort()).toEqual([
      `${t.link.id} click`,
      `${t.link.id} click`,
      `${t.link.id} open`,
    ])
    expect(new Set(clicks.map((click) => click.visitor)).size).toBe(3)
    expect(await t.counts()).toEqual({ linkClicks: 2, linkOpens: 1, affiliateClicks: 2, affiliateOpens: 1 })
    const summary = await t.service.api.reports.summary({
      workspaceId: WS_A,
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-02T00:00:00.000Z',
    })
    expect(summary).toMatchObject({ clicks: 2, opens: 1 })
    expect(t.errors).toEqual([])
  })

  it('with the visitor named, a repeat within the window counts once, as a redirect of that visitor would', async () => {
    const t = await setup()
    const visitor = { userAgent: BROWSER, clientAddress: '203.0.113.7' }
    const first = await t.track({ referralCode: 'ANN-2026', event: 'click', ...visitor })
    expect(first.body.data.totalClicks).toBe(1)
    const again = await t.track({ referralCode: 'ANN-2026', event: 'click', ...visitor })
    expect(again.body.data.totalClicks).toBe(1)
    const other = await t.track({ referralCode: 'ANN-2026', event: 'click', ...visitor, clientAddress: '203.0.113.8' })
    expect(other.body.data.totalClicks).toBe(2)
    expect(await t.clicks()).toHaveLength(2)
    const batch = await t.track({
      events: [
        { referralCode: 'ANN-2026', event: 'click', ...visitor },
        { referralCode: 'ANN-2026', event: 'open', ...visitor },
      ],
    })
    // The click repeats the first; the open is that visitor's first open.
    expect(batch.body.data).toMatchObject({ tracked: 1, items: [{ totalClicks: 2, totalOpens: 1 }] })
    expect(t.errors).toEqual([])
  })

  it('with a bot named, answers the link and counts nothing', async () => {
    const t = await setup()
    const answer = await t.track({ referralCode: 'ANN-2026', event: 'click', userAgent: GOOGLEBOT })
    expect(answer.status).toBe(200)
    expect(answer.body.data.totalClicks).toBe(0)
    const batch = await t.track({ events: [{ referralCode: 'ANN-2026', event: 'click', userAgent: GOOGLEBOT }] })
    expect(batch.body.data.tracked).toBe(0)
    expect(await t.clicks()).toEqual([])
  })

  it('refuses a visitor field that is not text with 400, counting nothing', async () => {
    const t = await setup()
    const answer = await t.track({ referralCode: 'ANN-2026', event: 'click', userAgent: 42 })
    expect(answer.status).toBe(400)
    const empty = await t.track({ referralCode: 'ANN-2026', event: 'click', clientAddress: '' })
    expect(empty.status).toBe(400)
    expect(await t.clicks()).toEqual([])
  })

  it('a redirect never prunes: expired click records stay until the background work (or pruneClicks) deletes them', async () => {
    const t = await setup()
    await t.service.api.campaigns.update(t.campaign.id, { attributionWindowDays: 1 })
    await t.redirect('ANN-2026')
    await t.service.flush()
    t.clock.advance(3 * 86_400_000)
    await t.redirect('ANN-2026', { 'user-agent': `${BROWSER} other` })
    expect(await t.clicks()).toHaveLength(2)
    expect(await t.service.pruneClicks()).toBe(1)
    expect(await t.clicks()).toHaveLength(1)
  })
})
