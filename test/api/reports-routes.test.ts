// The report and export routes over HTTP: figures of a known history, time zones and their
// daylight-saving days, validation (400 naming the field), workspace isolation, streamed CSV.
import { parse as parseCsv } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { populateBoth } from '../support/fixtures.js'
import { expectValidation, fieldError, KEY_B, setup, UNKNOWN_ID, WS_A, WS_A2, WS_B } from '../support/helpers.js'

const HOUR = 3_600_000

/** A campaign with two affiliates and a history in March 2026 (UTC): clicks, sales, a refund, a paid payout, a clawback. */
async function history() {
  const t = setup()
  const { api, clock } = t
  clock.set(Date.UTC(2026, 2, 1, 12))
  const campaign = await api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS_A,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://shop.example.com',
  })
  const ann = await api.affiliates.create({
    email: 'ann@example.com',
    firstName: 'Ann',
    campaignId: campaign.id,
    payoutMethod: 'PAYPAL',
    payoutEmail: 'ann@pay.example.com',
  })
  const bob = await api.affiliates.create({ email: 'bob@example.com', firstName: '=cmd()', campaignId: campaign.id })
  await api.links.create({ affiliateId: ann.id, referralCode: 'ANN' })
  await api.links.create({ affiliateId: bob.id, referralCode: 'BOB' })
  for (let i = 0; i < 4; i++) await api.links.track({ referralCode: 'ANN', event: 'click' })
  await api.links.track({ referralCode: 'ANN', event: 'open' })
  clock.set(Date.UTC(2026, 2, 3, 9))
  for (let i = 0; i < 10; i++) await api.links.track({ referralCode: 'BOB', event: 'click' })
  const sale = (affiliateId: string, referredUser: string, amount: string, commissionDate: string) =>
    api.commissions.create({ campaignId: campaign.id, affiliateId, referredUser, amount, commissionDate })
  const paid = await sale(ann.id, 'x@example.com', '40.00', '2026-03-01T13:15:00.000Z')
  await sale(ann.id, 'x@example.com', '10.00', '2026-03-02T08:00:00.000Z')
  const refunded = await sale(bob.id, 'y@example.com', '12.00', '2026-03-03T10:00:00.000Z')
  await api.commissions.refund(refunded.commissionId)
  await sale(bob.id, 'z@example.com', '7.50', '2026-03-03T11:00:00.000Z')
  clock.set(Date.UTC(2026, 3, 5, 10))
  const run = await api.payouts.run({ workspaceId: WS_A })
  await api.payouts.update(run.payouts[0]!.payoutId, { status: 'processing' })
  await api.payouts.update(run.payouts[0]!.payoutId, { status: 'paid' })
  await api.commissions.refund(paid.commissionId, { amount: '15.00' })
  return { ...t, campaign, ann, bob }
}

const MARCH = 'from=2026-03-01T00:00:00.000Z&to=2026-04-01T00:00:00.000Z'
const MARCH_AND_APRIL = 'from=2026-03-01T00:00:00.000Z&to=2026-05-01T00:00:00.000Z'

describe('GET /reports/summary', () => {
  it("answers the period's figures: clicks, signups, sales by status, clawbacks, paid out", async () => {
    const { call } = await history()
    const response = await call('GET', `/reports/summary?workspaceId=${WS_A}&${MARCH_AND_APRIL}`)
    expect(response.status).toBe(200)
    expect(response.body.data).toStrictEqual({
      workspaceId: WS_A,
      campaignId: null,
      affiliateId: null,
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-05-01T00:00:00.000Z',
      opens: 1,
      clicks: 14,
      signups: 3,
      conversionRate: 0.2143,
      // Ann's 40 (15 refunded after payment) and 10 (paid), Bob's 7.50 (its payout never made: no payout details); the refunded 12 earns nothing.
      commissions: { count: 4, amount: '42.50' },
      byStatus: {
        pending: { count: 1, amount: '7.50' },
        processing: { count: 0, amount: '0.00' },
        paid: { count: 2, amount: '50.00' },
        refunded: { count: 1, amount: '0.00' },
        hold: { count: 0, amount: '0.00' },
        voided: { count: 0, amount: '0.00' },
      },
      clawbacks: { count: 1, amount: '-15.00' },
      paidOut: { count: 1, amount: '50.00' },
      // Commissions added by hand carry no sale: no referred revenue.
      sales: { count: 4, amount: '0.00' },
    })
  })

  it('narrows to a campaign or an affiliate, and counts a figure by the hour it lies in, when that hour starts in [from, to)', async () => {
    const { call, ann, bob, campaign } = await history()
    const ofAnn = await call('GET', `/reports/summary?workspaceId=${WS_A}&affiliateId=${ann.id}&${MARCH}`)
    expect(ofAnn.body.data).toMatchObject({
      affiliateId: ann.id,
      clicks: 4,
      opens: 1,
      signups: 1,
      commissions: { count: 2, amount: '35.00' },
      clawbacks: { count: 0 },
    })
    const ofBob = await call('GET', `/reports/summary?workspaceId=${WS_A}&campaignId=${campaign.id}&affiliateId=${bob.id}&${MARCH}`)
    expect(ofBob.body.data).toMatchObject({ clicks: 10, signups: 2, conversionRate: 0.2, commissions: { count: 2, amount: '7.50' } })
    // The 13:15 sale lies in the hour from 13:00: a period from 13:30 leaves that hour out, one from 13:00 holds it.
    const from1330 = await call(
      'GET',
      `/reports/summary?workspaceId=${WS_A}&affiliateId=${ann.id}&from=2026-03-01T13:30:00.000Z&to=2026-03-01T14:00:00.000Z`,
    )
    expect(from1330.body.data.commissions.count).toBe(0)
    const from1300 = await call(
      'GET',
      `/reports/summary?workspaceId=${WS_A}&affiliateId=${ann.id}&from=2026-03-01T13:00:00.000Z&to=2026-03-01T14:00:00.000Z`,
    )
    expect(from1300.body.data.commissions).toStrictEqual({ count: 1, amount: '25.00' })
  })

  it('defaults to the 30 days up to now', async () => {
    const { call, clock } = await history()
    clock.set(Date.UTC(2026, 2, 20))
    const response = await call('GET', `/reports/summary?workspaceId=${WS_A}`)
    expect(response.body.data).toMatchObject({ from: '2026-02-18T00:00:00.000Z', to: '2026-03-20T00:00:00.000Z', clicks: 14 })
  })
})

describe('GET /reports/timeseries', () => {
  it('answers every bucket of the period, empty ones included', async () => {
    const { call } = await history()
    const response = await call('GET', `/reports/timeseries?workspaceId=${WS_A}&from=2026-03-01T00:00:00.000Z&to=2026-03-05T00:00:00.000Z`)
    expect(response.status).toBe(200)
    expect(response.body.data).toMatchObject({ interval: 'day', timezone: 'UTC' })
    expect(response.body.data.items).toStrictEqual([
      {
        start: '2026-03-01T00:00:00.000Z',
        end: '2026-03-02T00:00:00.000Z',
        opens: 1,
        clicks: 4,
        signups: 1,
        commissionCount: 1,
        earnings: '25.00',
      },
      {
        start: '2026-03-02T00:00:00.000Z',
        end: '2026-03-03T00:00:00.000Z',
        opens: 0,
        clicks: 0,
        signups: 0,
        commissionCount: 1,
        earnings: '10.00',
      },
      {
        start: '2026-03-03T00:00:00.000Z',
        end: '2026-03-04T00:00:00.000Z',
        opens: 0,
        clicks: 10,
        signups: 2,
        commissionCount: 2,
        earnings: '7.50',
      },
      {
        start: '2026-03-04T00:00:00.000Z',
        end: '2026-03-05T00:00:00.000Z',
        opens: 0,
        clicks: 0,
        signups: 0,
        commissionCount: 0,
        earnings: '0.00',
      },
    ])
  })

  it('buckets in a time zone: a sale at 13:15 UTC is on March 2 in Pacific/Auckland, and weeks start on Monday', async () => {
    const { call } = await history()
    const days = await call(
      'GET',
      `/reports/timeseries?workspaceId=${WS_A}&timezone=pacific/auckland&from=2026-03-01T11:00:00.000Z&to=2026-03-03T11:00:00.000Z`,
    )
    expect(days.body.data.timezone).toBe('Pacific/Auckland')
    expect(days.body.data.items.map((i: { start: string; earnings: string }) => [i.start, i.earnings])).toStrictEqual([
      ['2026-03-01T11:00:00.000Z', '35.00'],
      ['2026-03-02T11:00:00.000Z', '0.00'],
    ])
    const weeks = await call('GET', `/reports/timeseries?workspaceId=${WS_A}&interval=week&${MARCH}`)
    expect(weeks.body.data.items[0]).toMatchObject({
      start: '2026-02-23T00:00:00.000Z',
      end: '2026-03-02T00:00:00.000Z',
      commissionCount: 1,
    })
    expect(weeks.body.data.items).toHaveLength(6)
  })

  describe.each([
    // [zone, local day, its start (UTC), hours, a sale late that day (UTC)]
    ['Europe/Berlin', '2026-03-29', '2026-03-28T23:00:00.000Z', 23, '2026-03-29T21:30:00.000Z'],
    ['Europe/Berlin', '2026-10-25', '2026-10-24T22:00:00.000Z', 25, '2026-10-25T22:30:00.000Z'],
    ['America/New_York', '2026-03-08', '2026-03-08T05:00:00.000Z', 23, '2026-03-09T03:30:00.000Z'],
    ['America/New_York', '2026-11-01', '2026-11-01T04:00:00.000Z', 25, '2026-11-02T04:30:00.000Z'],
  ])('%s on %s, a daylight-saving day', (zone, _day, start, hours, lateSale) => {
    it(`is a bucket of ${hours} hours starting at ${start}, holding a sale of its last hour`, async () => {
      const { api, call } = setup()
      const campaign = await api.campaigns.create({
        campaignName: 'DST',
        workspaceId: WS_A,
        commissionType: 'fixed',
        amount: 5,
        url: 'https://shop.example.com',
      })
      const affiliate = await api.affiliates.create({ email: 'dst@example.com', campaignId: campaign.id })
      await api.commissions.create({
        campaignId: campaign.id,
        affiliateId: affiliate.id,
        referredUser: 'late@example.com',
        amount: '9.00',
        commissionDate: lateSale,
      })
      const startMs = Date.parse(start)
      const query = `workspaceId=${WS_A}&timezone=${zone}&from=${new Date(startMs - 24 * HOUR).toISOString()}&to=${new Date(startMs + 48 * HOUR).toISOString()}`
      const { items } = (await call('GET', `/reports/timeseries?${query}`)).body.data
      const bucket = items.find((item: { start: string }) => item.start === start)
      expect(bucket).toBeDefined()
      expect((Date.parse(bucket.end) - Date.parse(bucket.start)) / HOUR).toBe(hours)
      expect(bucket).toMatchObject({ commissionCount: 1, earnings: '9.00', signups: 1 })
      const next = items[items.indexOf(bucket) + 1]
      expect(next).toMatchObject({ start: bucket.end, commissionCount: 0 })
    })
  })
})

describe('GET /reports/top-affiliates', () => {
  it('ranks the affiliates with figures by earnings, clicks, signups or conversion rate', async () => {
    const { call, ann, bob } = await history()
    const top = async (by: string, extra = '') =>
      (await call('GET', `/reports/top-affiliates?workspaceId=${WS_A}&by=${by}&${MARCH}${extra}`)).body.data.items.map(
        (i: { affiliateId: string }) => i.affiliateId,
      )
    expect(await top('earnings')).toStrictEqual([ann.id, bob.id])
    expect(await top('clicks')).toStrictEqual([bob.id, ann.id])
    expect(await top('signups')).toStrictEqual([bob.id, ann.id])
    expect(await top('conversionRate')).toStrictEqual([ann.id, bob.id])
    expect(await top('clicks', '&limit=1')).toStrictEqual([bob.id])
    const first = (await call('GET', `/reports/top-affiliates?workspaceId=${WS_A}&${MARCH}`)).body.data
    expect(first.by).toBe('earnings')
    expect(first.items[0]).toStrictEqual({
      affiliateId: ann.id,
      campaignId: ann.campaignId,
      email: 'ann@example.com',
      firstName: 'Ann',
      lastName: '',
      opens: 1,
      clicks: 4,
      signups: 1,
      conversionRate: 0.25,
      commissionCount: 2,
      earnings: '35.00',
    })
  })
})

describe('report input errors', () => {
  it('answers 400 naming the field, in the query', async () => {
    const { call } = setup()
    const base = `/reports/timeseries?workspaceId=${WS_A}`
    expectValidation(await call('GET', `${base}&timezone=Mars/Olympus`), [
      fieldError('timezone', 'timezone must be an IANA time zone name such as Europe/Berlin', 'query'),
    ])
    expectValidation(await call('GET', `${base}&interval=fortnight`), [
      fieldError('interval', 'interval must be one of: hour, day, week, month', 'query'),
    ])
    expectValidation(await call('GET', `${base}&from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z`), [
      fieldError('to', 'to must not be before from', 'query'),
    ])
    expectValidation(await call('GET', `${base}&from=yesterday`), [fieldError('from', 'from must be an ISO 8601 timestamp', 'query')])
    const tooMany = await call('GET', `${base}&interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z`)
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.errors).toMatchObject([
      { path: 'interval', location: 'query', msg: expect.stringMatching(/^interval is refused: .*more than 1000 hour buckets/) },
    ])
    const tooLong = await call('GET', `/reports/summary?workspaceId=${WS_A}&from=2000-01-01T00:00:00Z&to=2026-01-01T00:00:00Z`)
    expectValidation(tooLong, [fieldError('from', 'from must be at most 3660 days before to', 'query')])
    expectValidation(await call('GET', `/reports/top-affiliates?workspaceId=${WS_A}&limit=101`), [
      fieldError('limit', 'limit must be an integer from 1 to 100', 'query'),
    ])
    expectValidation(await call('GET', `/reports/top-affiliates?workspaceId=${WS_A}&by=revenue`), [
      fieldError('by', 'by must be one of: earnings, clicks, signups, conversionRate', 'query'),
    ])
    expectValidation(await call('GET', '/reports/summary'), [fieldError('workspaceId', 'workspaceId is required', 'query')])
    expect((await call('GET', `/reports/summary?workspaceId=${WS_A}&extra=1`)).status).toBe(400)
  })
})

describe('reports and exports keep workspaces apart', () => {
  it("another workspace's figures, campaigns and affiliates answer 403 or exactly like unknown ids, and never leak", async () => {
    const { call, api } = setup()
    const { a, b } = await populateBoth(call)
    await api.links.track({ referralCode: a.link.referralCode, event: 'click' })
    const period = 'from=2025-12-01T00:00:00.000Z&to=2026-02-01T00:00:00.000Z'
    for (const path of ['/reports/summary', '/reports/timeseries', '/reports/top-affiliates']) {
      expect((await call('GET', `${path}?workspaceId=${WS_A}&${period}`, { key: KEY_B })).status).toBe(403)
      for (const [field, id, what] of [
        ['campaignId', a.campaign.id, 'Campaign'],
        ['affiliateId', a.affiliate.id, 'Affiliate'],
      ] as const) {
        const theirs = await call('GET', `${path}?workspaceId=${WS_B}&${field}=${id}&${period}`, { key: KEY_B })
        const unknown = await call('GET', `${path}?workspaceId=${WS_B}&${field}=${UNKNOWN_ID}&${period}`, { key: KEY_B })
        expect(theirs.status).toBe(404)
        expect(theirs.text).toBe(unknown.text)
        expect(theirs.body.message).toBe(`${what} not found`)
      }
    }
    // Key A sees A and A2: a campaign of A asked about under A2 is refused, not summed.
    expect((await call('GET', `/reports/summary?workspaceId=${WS_A2}&campaignId=${a.campaign.id}&${period}`)).status).toBe(422)
    const bSummary = (await call('GET', `/reports/summary?workspaceId=${WS_B}&${period}`, { key: KEY_B })).body.data
    // A sale, a referred user (amount 0) and the payee's sale.
    expect(bSummary).toMatchObject({ clicks: 0, commissions: { count: 3, amount: '35.00' } })
    const bTop = (await call('GET', `/reports/top-affiliates?workspaceId=${WS_B}&${period}`, { key: KEY_B })).body.data.items
    expect(bTop.map((i: { affiliateId: string }) => i.affiliateId).sort()).toStrictEqual([b.affiliate.id, b.payee.id].sort())
    for (const path of ['/exports/commissions', '/exports/affiliates']) {
      const mine = await call('GET', path, { key: KEY_B })
      expect(mine.status).toBe(200)
      expect(mine.text).not.toContain(WS_A)
      expect(mine.text).toContain(WS_B)
      expect((await call('GET', `${path}?workspaceId=${WS_A}`, { key: KEY_B })).status).toBe(403)
    }
  })
})

describe('GET /exports/commissions and /exports/affiliates', () => {
  it("streams every matching record as CSV, money with two decimals and its currency, flags true/false, the affiliate's e-mail and the campaign's name beside their ids, formulas defused", async () => {
    const { call, api, bob, campaign } = await history()
    const response = await call('GET', `/exports/commissions?workspaceId=${WS_A}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="commissions-2026-04-05.csv"')
    const rows = parseCsv(response.text, { columns: true }) as Record<string, string>[]
    expect(rows).toHaveLength(5)
    expect(Object.keys(rows[0]!).slice(0, 8)).toStrictEqual([
      'commissionId',
      'campaignId',
      'campaignName',
      'workspaceId',
      'affiliateId',
      'affiliateEmail',
      'referredUser',
      'amount',
    ])
    const clawback = rows.find((row) => row.kind === 'clawback')!
    expect(clawback).toMatchObject({
      amount: '-15.00',
      currency: 'USD',
      status: 'pending',
      isSelfReferral: 'false',
      isWalletPayment: 'false',
      payoutId: '',
      affiliateEmail: 'ann@example.com',
      campaignName: 'Spring',
    })
    expect(rows.filter((row) => row.affiliateEmail === 'bob@example.com')).toHaveLength(2)
    for (const row of rows)
      expect([row.isSelfReferral, row.isWalletPayment].every((flag) => flag === 'true' || flag === 'false')).toBe(true)
    expect(rows.map((row) => row.createdAt)).toStrictEqual(rows.map((row) => row.createdAt).sort())
    const bobs = parseCsv((await call('GET', `/exports/commissions?affiliateId=${bob.id}&status=pending`)).text, {
      columns: true,
    }) as Record<string, string>[]
    expect(bobs.map((row) => row.amount)).toStrictEqual(['7.50'])
    const affiliates = await call('GET', `/exports/affiliates?workspaceId=${WS_A}&contains=bob`)
    const [header, row] = parseCsv(affiliates.text) as string[][]
    expect(header).toContain('totalEarnings')
    expect(row![header!.indexOf('firstName')]).toBe("'=cmd()")
    expect(row![header!.indexOf('totalClicks')]).toBe('10')
    expect(row![header!.indexOf('totalEarnings')]).toBe('7.50')
    expect(header!.slice(header!.indexOf('totalEarnings'), header!.indexOf('totalEarnings') + 2)).toStrictEqual([
      'totalEarnings',
      'currency',
    ])
    expect(row![header!.indexOf('currency')]).toBe('USD')
    expect(row![header!.indexOf('campaignName')]).toBe('Spring')
    expect([row![header!.indexOf('isActive')], row![header!.indexOf('isBanned')]]).toStrictEqual(['true', 'false'])
    // The API answers the source's 0/1 flag; the file says true.
    await api.referredUsers.create({ referredTo: 'wallet@example.com', affiliateId: bob.id, campaignId: campaign.id, isWalletPayment: 1 })
    const withWallet = parseCsv((await call('GET', `/exports/commissions?workspaceId=${WS_A}&contains=wallet`)).text, {
      columns: true,
    }) as Record<string, string>[]
    expect(withWallet.map((row) => [row.referredUser, row.isWalletPayment])).toStrictEqual([['wallet@example.com', 'true']])
  })

  it('answers the header alone when nothing matches, and 400 for a filter it does not know', async () => {
    const { call } = setup()
    const empty = await call('GET', `/exports/affiliates?workspaceId=${WS_A}`)
    expect(empty.text.trim().split('\r\n')).toHaveLength(1)
    expectValidation(await call('GET', `/exports/commissions?status=lost`), [
      fieldError('status', 'status must be one of: pending, processing, paid, refunded', 'query'),
    ])
    expect((await call('GET', `/exports/commissions?page=2`)).status).toBe(400)
  })
})
