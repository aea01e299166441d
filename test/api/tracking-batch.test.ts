import { afterEach, describe, expect, it } from 'vitest'
import { KEY_A, KEY_B } from '../support/helpers.js'
import { checkedFetch } from '../support/openapi-check.js'
import { PK_A, trackingSetup } from '../support/tracking-support.js'

// POST /links/track with { events: [...] }: up to 1,000 in one transaction, all or none.

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function setup() {
  const t = await trackingSetup()
  closers.push(t.close)
  const second = await t.service.api.links.create({ affiliateId: t.affiliate.id, referralCode: 'ANN-SECOND' })
  const track = async (body: unknown, key = KEY_A) => {
    const response = await checkedFetch(`${t.running.url}/links/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-service': key },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: await response.json() }
  }
  return { ...t, second, track }
}

describe('POST /links/track with events', () => {
  it('counts every event in one call and answers { tracked, items }: each link touched as it now stands', async () => {
    const t = await setup()
    const answer = await t.track({
      events: [
        { referralCode: 'ANN-SECOND', event: 'open' },
        { referralCode: 'ANN-2026', event: 'click' },
        { referralCode: 'ANN-SECOND', event: 'click' },
        { referralCode: 'ANN-2026', event: 'click' },
      ],
    })
    expect(answer.status).toBe(200)
    expect(answer.body.message).toBe('Link event tracked successfully')
    expect(answer.body.data.tracked).toBe(4)
    expect(
      answer.body.data.items.map((l: { referralCode: string; totalOpens: number; totalClicks: number }) => [
        l.referralCode,
        l.totalOpens,
        l.totalClicks,
      ]),
    ).toEqual([
      ['ANN-SECOND', 1, 1],
      ['ANN-2026', 0, 2],
    ])
    const affiliate = await t.service.api.affiliates.get(t.affiliate.id)
    expect([affiliate.totalOpens, affiliate.totalClicks]).toEqual([1, 3])
    // A single event still answers the link.
    const one = await t.track({ referralCode: 'ANN-2026', event: 'open' })
    expect(one.body.data).toMatchObject({ referralCode: 'ANN-2026', totalOpens: 1, totalClicks: 2 })
  })

  it('takes 1,000 events; 0 or 1,001 are a validation error', async () => {
    const t = await setup()
    const events = (n: number) => Array.from({ length: n }, (_, i) => ({ referralCode: i % 2 ? 'ANN-2026' : 'ANN-SECOND', event: 'click' }))
    const full = await t.track({ events: events(1000) })
    expect(full.status).toBe(200)
    expect(full.body.data.tracked).toBe(1000)
    for (const n of [0, 1001]) {
      const refused = await t.track({ events: events(n) })
      expect(refused.status).toBe(400)
      expect(refused.body.errors).toEqual([{ type: 'field', msg: 'events must hold 1 to 1000 events', path: 'events', location: 'body' }])
    }
    expect((await t.service.api.affiliates.get(t.affiliate.id)).totalClicks).toBe(1000)
  })

  it('names the first bad entry with the rules of a single event; unknown fields are refused', async () => {
    const t = await setup()
    const bad = await t.track({
      events: [
        { referralCode: 'ANN-2026', event: 'click' },
        { referralCode: 'ANN-2026', event: 'view' },
      ],
    })
    expect(bad.status).toBe(400)
    expect(bad.body.errors).toEqual([
      { type: 'field', msg: 'events has an invalid entry at 1: event must be one of: open, click', path: 'events', location: 'body' },
    ])
    const extra = await t.track({ events: [{ referralCode: 'ANN-2026', event: 'click', at: 1 }] })
    expect(extra.body.errors[0].msg).toBe('events has an invalid entry at 0: at is not a known field')
    const mixed = await t.track({ events: [{ referralCode: 'ANN-2026', event: 'click' }], referralCode: 'ANN-2026' })
    expect(mixed.body.errors).toEqual([{ type: 'field', msg: 'referralCode is not a known field', path: 'referralCode', location: 'body' }])
    expect((await t.counts()).linkClicks).toBe(0)
  })

  it('is all or none: an unknown code, or one in a workspace the key lacks, is 404 naming it and counts nothing', async () => {
    const t = await setup()
    const events = [
      { referralCode: 'ANN-2026', event: 'click' },
      { referralCode: 'NOPE-1', event: 'click' },
    ]
    expect(await t.track({ events })).toEqual({
      status: 404,
      body: { status: 404, code: 'not_found', message: 'Link NOPE-1 (events[1]) not found' },
    })
    const foreign = await t.track({ events: [{ referralCode: 'ANN-2026', event: 'open' }] }, KEY_B)
    expect(foreign).toEqual({ status: 404, body: { status: 404, code: 'not_found', message: 'Link ANN-2026 (events[0]) not found' } })
    expect(await t.counts()).toEqual({ linkClicks: 0, linkOpens: 0, affiliateClicks: 0, affiliateOpens: 0 })
  })

  it('refuses a publishable key like a wrong key', async () => {
    const t = await setup()
    expect((await t.track({ events: [{ referralCode: 'ANN-2026', event: 'click' }] }, PK_A)).status).toBe(401)
  })

  it('in the typed API too', async () => {
    const t = await setup()
    const answer = await t.service.api.links.track({ events: [{ referralCode: 'ANN-2026', event: 'open' }] })
    expect(answer).toMatchObject({ tracked: 1, items: [{ referralCode: 'ANN-2026', totalOpens: 1 }] })
  })
})
