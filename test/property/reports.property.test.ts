import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AffiliateError, type Storage } from '../../src/index.js'
import { earnedMinor } from '../../src/domain/commission-status.js'
import { formatMoney } from '../../src/domain/money.js'
import type { CommissionRecord, CommissionStatus as AnyStatus, PayoutRecord } from '../../src/domain/records.js'
/** The statuses a request may set (hold and voided come from the fraud rules and review only). */
type CommissionStatus = Exclude<AnyStatus, 'hold' | 'voided'>
import { bucketStart, bucketsBetween, type Granularity } from '../../src/reports/buckets.js'
import { storageKinds } from '../support/fixtures.js'
import { setup, WS_A } from '../support/helpers.js'

// Every report equals the same figure computed by scanning the records. Random histories of sales
// and referred users (dated anywhere in March 2026, across both daylight-saving changes of
// America/New_York and Europe/Berlin), edits of amount, status and date, refunds (partial, whole,
// after payment: clawbacks), deletes, clicks and opens at random times, payout runs paid or failed;
// then random periods, intervals and time zones. The scan below reads the stored records and a log
// of tracked events, and buckets by `bucketStart` one figure at a time, never through rollups.

const HOUR = 3_600_000
const MARCH = Date.UTC(2026, 2, 1)
const SPAN = 31 * 24 * HOUR
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/Santiago',
] as const
const INTERVALS: readonly Granularity[] = ['hour', 'day', 'week', 'month']
const STATUSES: readonly CommissionStatus[] = ['pending', 'processing', 'paid', 'refunded']
const EMAILS = ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']

type Step =
  | { type: 'sale'; affiliate: number; email: number; cents: number; at: number; referred: boolean }
  | { type: 'edit'; record: number; cents: number | null; status: CommissionStatus | null; at: number | null }
  | { type: 'refund'; record: number; cents: number | null }
  | { type: 'delete'; record: number }
  | { type: 'track'; affiliate: number; event: 'open' | 'click'; at: number }
  | { type: 'payouts'; at: number; outcome: 'paid' | 'failed' }

const instant = fc.integer({ min: 0, max: SPAN - 1 }).map((offset) => MARCH + offset)
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('sale' as const),
      affiliate: fc.nat(3),
      email: fc.nat(EMAILS.length - 1),
      cents: fc.integer({ min: 0, max: 50_000 }),
      at: instant,
      referred: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('edit' as const),
      record: fc.nat(),
      cents: fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: null }),
      status: fc.option(fc.constantFrom(...STATUSES), { nil: null }),
      at: fc.option(instant, { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('refund' as const),
      record: fc.nat(),
      cents: fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('delete' as const), record: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('track' as const),
      affiliate: fc.nat(3),
      event: fc.constantFrom('open' as const, 'click' as const),
      at: instant,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('payouts' as const),
      at: instant,
      outcome: fc.constantFrom('paid' as const, 'failed' as const),
    }),
  },
)

type Period = { from: number; to: number; interval: Granularity; zone: string }
const period: fc.Arbitrary<Period> = fc
  .record({
    a: fc.integer({ min: -2 * 24, max: 33 * 24 }),
    b: fc.integer({ min: -2 * 24, max: 33 * 24 }),
    minutes: fc.constantFrom(0, 0, 15, 30),
    interval: fc.constantFrom(...INTERVALS),
    zone: fc.constantFrom(...ZONES),
  })
  .map(({ a, b, minutes, interval, zone }) => ({
    from: MARCH + Math.min(a, b) * HOUR + minutes * 60_000,
    to: MARCH + Math.max(a, b) * HOUR,
    interval,
    zone,
  }))
  .filter((p) => p.to >= p.from)

type Click = { affiliateId: string; campaignId: string; event: 'open' | 'click'; at: number }

const hourOf = (iso: string | number) => Math.floor((typeof iso === 'number' ? iso : Date.parse(iso)) / HOUR) * HOUR

/** The figures of whatever `keep` admits, computed from the records and the click log, each figure at the hour it lies in. */
function scan(
  commissions: CommissionRecord[],
  payouts: PayoutRecord[],
  clicks: Click[],
  inScope: (r: { affiliateId: string; campaignId: string }) => boolean,
  keep: (hour: number) => boolean,
) {
  const f = { opens: 0, clicks: 0, signups: 0, sales: 0, earnings: 0, clawbacks: 0, clawbackMinor: 0, paidOut: 0, paidOutMinor: 0 }
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, { count: 0, minor: 0 }])) as Record<
    CommissionStatus,
    { count: number; minor: number }
  >
  for (const c of clicks) if (inScope(c) && keep(hourOf(c.at))) f[c.event === 'open' ? 'opens' : 'clicks']++
  const first = new Map<string, CommissionRecord>()
  for (const c of commissions) {
    if (!inScope(c)) continue
    const key = `${c.affiliateId} ${c.referredUserKey}`
    const seen = first.get(key)
    if (!seen || Date.parse(c.commissionDate) < Date.parse(seen.commissionDate)) first.set(key, c)
    if (!keep(hourOf(c.commissionDate))) continue
    if (c.kind === 'clawback') {
      f.clawbacks++
      f.clawbackMinor += c.amountMinor
    } else {
      f.sales++
      f.earnings += earnedMinor(c)
      byStatus[c.status as CommissionStatus].count++
      byStatus[c.status as CommissionStatus].minor += c.amountMinor
    }
  }
  for (const c of first.values()) if (keep(hourOf(c.commissionDate))) f.signups++
  for (const p of payouts) {
    if (p.status === 'paid' && inScope(p) && keep(hourOf(p.paidAt!))) {
      f.paidOut++
      f.paidOutMinor += p.amountMinor
    }
  }
  return { f, byStatus }
}

const rate = (signups: number, clicks: number) => (clicks > 0 ? Math.round((signups / clicks) * 10_000) / 10_000 : 0)

async function check(storage: Storage, steps: Step[], periods: Period[]) {
  const { api, clock } = setup({ storage })
  clock.set(MARCH - 24 * HOUR)
  const campaigns = [
    await api.campaigns.create({
      campaignName: 'One',
      workspaceId: WS_A,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://one.example.com',
    }),
    await api.campaigns.create({
      campaignName: 'Two',
      workspaceId: WS_A,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://two.example.com',
    }),
  ]
  const affiliates = []
  for (let i = 0; i < 4; i++) {
    const campaign = campaigns[i % 2]!
    const affiliate = await api.affiliates.create({
      email: `aff${i}@example.com`,
      campaignId: campaign.id,
      payoutMethod: 'WISE',
      payoutEmail: `pay${i}@example.com`,
    })
    await api.links.create({ affiliateId: affiliate.id, referralCode: `CODE-${i}` })
    affiliates.push(affiliate)
  }
  const clicks: Click[] = []
  const records: string[] = []
  const pick = (n: number) => records[n % records.length]!
  const attempt = async (work: () => Promise<unknown>) => {
    try {
      await work()
    } catch (error) {
      if (!(error instanceof AffiliateError) || error.status >= 500) throw error
    }
  }
  for (const s of steps) {
    switch (s.type) {
      case 'sale': {
        const affiliate = affiliates[s.affiliate]!
        const date = new Date(s.at).toISOString()
        const made = s.referred
          ? await api.referredUsers.create({
              referredTo: EMAILS[s.email]!,
              affiliateId: affiliate.id,
              amount: formatMoney(s.cents),
              commissionDate: date,
            })
          : await api.commissions.create({
              campaignId: affiliate.campaignId,
              affiliateId: affiliate.id,
              referredUser: EMAILS[s.email]!,
              amount: formatMoney(s.cents),
              commissionDate: date,
            })
        records.push(made.commissionId)
        break
      }
      case 'edit':
        if (records.length === 0) break
        await attempt(() =>
          api.commissions.update(pick(s.record), {
            ...(s.cents === null ? {} : { amount: formatMoney(s.cents) }),
            ...(s.status === null ? {} : { status: s.status }),
            ...(s.at === null ? {} : { commissionDate: new Date(s.at).toISOString() }),
          }),
        )
        break
      case 'refund':
        if (records.length === 0) break
        clock.advance(HOUR)
        await attempt(() => api.commissions.refund(pick(s.record), { ...(s.cents === null ? {} : { amount: formatMoney(s.cents) }) }))
        break
      case 'delete':
        if (records.length === 0) break
        await attempt(() => api.commissions.delete(pick(s.record)))
        break
      case 'track': {
        const affiliate = affiliates[s.affiliate]!
        clock.set(s.at)
        await api.links.track({ referralCode: `CODE-${s.affiliate}`, event: s.event })
        clicks.push({ affiliateId: affiliate.id, campaignId: affiliate.campaignId, event: s.event, at: s.at })
        break
      }
      case 'payouts': {
        clock.set(Math.max(clock.now(), s.at))
        const run = await api.payouts.run({ workspaceId: WS_A })
        for (const payout of run.payouts) {
          if (s.outcome === 'paid') {
            await api.payouts.update(payout.payoutId, { status: 'processing' })
            clock.advance(37 * 60_000)
          }
          await api.payouts.update(payout.payoutId, { status: s.outcome })
        }
        break
      }
    }
  }
  const [commissions, payouts] = await storage.transaction(
    async (tx) => [await tx.find('commissions', {}), await tx.find('payouts', {})] as const,
  )
  const scopes = [
    { query: {}, inScope: () => true },
    ...campaigns.map((c) => ({ query: { campaignId: c.id }, inScope: (r: { campaignId: string }) => r.campaignId === c.id })),
    ...affiliates.map((a) => ({ query: { affiliateId: a.id }, inScope: (r: { affiliateId: string }) => r.affiliateId === a.id })),
  ]
  for (const p of periods) {
    const range = { workspaceId: WS_A, from: new Date(p.from).toISOString(), to: new Date(p.to).toISOString() }
    const inPeriod = (hour: number) => hour >= p.from && hour < p.to
    for (const scope of scopes) {
      const { f, byStatus } = scan(commissions, payouts, clicks, scope.inScope as never, inPeriod)
      const summary = await api.reports.summary({ ...range, ...scope.query })
      expect(summary).toMatchObject({
        opens: f.opens,
        clicks: f.clicks,
        signups: f.signups,
        conversionRate: rate(f.signups, f.clicks),
        commissions: { count: f.sales, amount: formatMoney(f.earnings) },
        byStatus: Object.fromEntries(STATUSES.map((s) => [s, { count: byStatus[s].count, amount: formatMoney(byStatus[s].minor) }])),
        clawbacks: { count: f.clawbacks, amount: formatMoney(f.clawbackMinor) },
        paidOut: { count: f.paidOut, amount: formatMoney(f.paidOutMinor) },
      })
    }
    // The series of the workspace and of one affiliate, bucketed by the scan one figure at a time.
    for (const scope of [scopes[0]!, scopes[3]!]) {
      let buckets: ReturnType<typeof bucketsBetween>
      try {
        buckets = bucketsBetween(p.from, p.to, p.interval, p.zone)
      } catch {
        continue // more buckets than a series answers: the route test covers that 400
      }
      const series = await api.reports.timeseries({ ...range, ...scope.query, interval: p.interval, timezone: p.zone })
      expect(series.items.map((i) => [i.start, i.end])).toStrictEqual(buckets.map((b) => [b.start, b.end]))
      const expected = buckets.map((b) => {
        const { f } = scan(
          commissions,
          payouts,
          clicks,
          scope.inScope as never,
          (hour) => inPeriod(hour) && bucketStart(hour, p.interval, p.zone).startMs === b.startMs,
        )
        return {
          start: b.start,
          end: b.end,
          opens: f.opens,
          clicks: f.clicks,
          signups: f.signups,
          commissionCount: f.sales,
          earnings: formatMoney(f.earnings),
        }
      })
      expect(series.items).toStrictEqual(expected)
    }
    const top = await api.reports.topAffiliates({ ...range, by: 'clicks', limit: 100 })
    const expectedTop = affiliates
      .map((a) => ({ id: a.id, ...scan(commissions, payouts, clicks, (r) => r.affiliateId === a.id, inPeriod) }))
      .filter(
        ({ f, byStatus }) =>
          f.opens + f.clicks + f.signups + f.sales + f.clawbacks + f.paidOut > 0 || Object.values(byStatus).some((s) => s.count > 0),
      )
      .sort((a, b) => b.f.clicks - a.f.clicks || (a.id < b.id ? -1 : 1))
    expect(top.items.map((i) => [i.affiliateId, i.clicks, i.signups, i.commissionCount, i.earnings])).toStrictEqual(
      expectedTop.map(({ id, f }) => [id, f.clicks, f.signups, f.sales, formatMoney(f.earnings)]),
    )
  }
}

describe.each(storageKinds)('reports equal a scan of the records (%s)', (_name, makeStorage) => {
  it('for any history of writes, refunds, clicks and payouts, in any period, interval and time zone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.array(period, { minLength: 1, maxLength: 4 }),
        async (steps, periods) => {
          const storage = await makeStorage()
          try {
            await check(storage, steps, periods)
          } finally {
            await storage.close?.()
          }
        },
      ),
      { numRuns: 25 },
    )
  }, 120_000)
})
