import { formatMoney } from '../domain/money.js'
import type { CommissionStatus, RollupRecord } from '../domain/records.js'
import { ROLLUP_COUNTERS } from '../domain/descriptions/service.js'
import type { StorageTransaction, Where } from '../storage/types.js'
import { bucketsBetween, type Granularity } from './buckets.js'
import { dayOf, hourRowId, levelKey, monthOf, rankKey, seriesKey, type RollupCounter } from './rollup.js'
import { seriesFrom } from './series.js'

// Reports read from rollups, never from records, so their cost follows the length of the period,
// not the number of records. A figure counts when its hour starts in [from, to) (see series.ts).
//
// Each level keeps an hour row per UTC hour and a day row per UTC day (rollup.ts). The figures of
// [a, b) (both on the hour) are F(b) - F(a), F(t) being the figures of the hours before t since
// some origin: the day rows before t's UTC day, plus the hours of that day before t, or (when t is
// late in its day) the day rows up to the next midnight less the hours from t to it. So a period or
// a bucket boundary costs at most 12 hour rows, and a 90-day daily series in Europe/Berlin reads
// about 120 day rows and 91 hour rows rather than 2,160 hour rows.

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Days whose hour rows are read whole, with the day rows, rather than by id. */
const FEW_DAYS = 3
/** Keys (or ids) per storage look-up (one `in` list). */
const KEYS_PER_READ = 200

export type Figures = Record<RollupCounter, number>

const zero = (): Figures => Object.fromEntries(ROLLUP_COUNTERS.map((counter) => [counter, 0])) as Figures

const floorDay = (t: number) => Math.floor(t / DAY) * DAY
const ceilHour = (t: number) => Math.ceil(t / HOUR) * HOUR
const isoOf = (t: number) => new Date(t).toISOString()
const dayText = (t: number) => dayOf(isoOf(t))

/** Whose figures a report reads: a workspace, one of its campaigns, or one of its affiliates. */
export interface ReportScope {
  workspaceId: string
  campaignId?: string | undefined
  affiliateId?: string | undefined
}

const prefixOf = (scope: ReportScope) =>
  levelKey(scope.workspaceId, scope.affiliateId ? '' : (scope.campaignId ?? ''), scope.affiliateId ?? '')

/** The rows matching `where` with `field` one of `values`, a chunk of values per look-up. */
async function readIn(
  tx: StorageTransaction,
  field: 'id' | 'seriesKey' | 'rankKey',
  values: readonly string[],
  where: Where<'rollups'> = {},
): Promise<RollupRecord[]> {
  const out: RollupRecord[] = []
  for (let i = 0; i < values.length; i += KEYS_PER_READ) {
    const rows = await tx.find('rollups', {
      where: { ...where, [field]: { in: values.slice(i, i + KEYS_PER_READ) } },
      // Any order will do; this one costs the memory storage no merge of the keys' lists.
      orderBy: { field: 'hourStart', direction: 'ASC' },
    })
    for (const row of rows) out.push(row)
  }
  return out
}

/** The UTC months (`YYYY-MM`) of the days in [fromDay, toDay). */
function monthsOf(fromDay: number, toDay: number): string[] {
  const out = new Set<string>()
  for (let day = fromDay; day < toDay; day += DAY) out.add(monthOf(dayText(day)))
  return [...out]
}

/**
 * F(t) of one level for each instant (on the hour) of `instants`: the figures of the hours that
 * start before t and on or after the first instant's UTC midnight.
 */
async function cumulative(tx: StorageTransaction, prefix: string, instants: readonly number[]): Promise<(t: number) => Figures> {
  const first = floorDay(Math.min(...instants))
  const last = floorDay(Math.max(...instants)) + DAY
  const days = (last - first) / DAY
  // Each instant: a midnight, then hours added after it or taken away before the next one.
  const plans = new Map<number, { base: number; sign: 1 | -1; hours: number[] }>()
  const wanted = new Set<number>()
  for (const t of instants) {
    const midnight = floorDay(t)
    const into = (t - midnight) / HOUR
    const plan =
      into <= 12
        ? { base: midnight, sign: 1 as const, hours: Array.from({ length: into }, (_, i) => midnight + i * HOUR) }
        : { base: midnight + DAY, sign: -1 as const, hours: Array.from({ length: 24 - into }, (_, i) => t + i * HOUR) }
    for (const hour of plan.hours) wanted.add(hour)
    plans.set(t, plan)
  }
  // The day rows of the months, and the hours wanted: in one look-up when they lie in a few days (a
  // summary: one round trip), else by id (a series: every boundary's day, but only its hours).
  const monthKeys = new Set(monthsOf(first, last).map((month) => seriesKey(prefix, month)))
  const hourDays = new Set([...wanted].map((hour) => seriesKey(prefix, dayText(hour))))
  const together = hourDays.size <= FEW_DAYS
  const byDay = new Map<number, RollupRecord>()
  const byHour = new Map<number, RollupRecord>()
  for (const row of await readIn(tx, 'seriesKey', [...monthKeys, ...(together ? hourDays : [])])) {
    const at = Date.parse(row.hourStart)
    if (monthKeys.has(row.seriesKey)) {
      if (at >= first && at < last) byDay.set(at, row)
    } else if (wanted.has(at)) byHour.set(at, row)
  }
  if (!together) {
    for (const row of await readIn(
      tx,
      'id',
      [...wanted].map((hour) => hourRowId(prefix, isoOf(hour))),
    ))
      byHour.set(Date.parse(row.hourStart), row)
  }
  // D[i]: the day rows of the days before first + i days.
  const D: Figures[] = [zero()]
  for (let i = 0; i < days; i++) {
    const next = { ...D[i]! }
    const row = byDay.get(first + i * DAY)
    if (row) add(next, row)
    D.push(next)
  }
  return (t) => {
    const plan = plans.get(t)!
    const out = { ...D[(plan.base - first) / DAY]! }
    for (const hour of plan.hours) {
      const row = byHour.get(hour)
      if (row) (plan.sign === 1 ? add : subtract)(out, row)
    }
    return out
  }
}

const difference = (later: Figures, earlier: Figures): Figures => {
  const out = { ...later }
  subtract(out, earlier)
  return out
}

/** The figures of the scope over the hours starting in [fromMs, toMs). */
export async function periodFigures(tx: StorageTransaction, scope: ReportScope, fromMs: number, toMs: number): Promise<Figures> {
  const lo = ceilHour(fromMs)
  const hi = ceilHour(toMs)
  if (hi <= lo) return zero()
  const F = await cumulative(tx, prefixOf(scope), [lo, hi])
  return difference(F(hi), F(lo))
}

/** Adds the figures of `row` to `out`, one field at a time (a loop over counter names is several times slower). */
function add(out: Figures, row: Figures): void {
  out.opens += row.opens
  out.clicks += row.clicks
  out.signups += row.signups
  out.saleCount += row.saleCount
  out.earningsMinor += row.earningsMinor
  out.pendingCount += row.pendingCount
  out.pendingMinor += row.pendingMinor
  out.processingCount += row.processingCount
  out.processingMinor += row.processingMinor
  out.paidCount += row.paidCount
  out.paidMinor += row.paidMinor
  out.refundedCount += row.refundedCount
  out.refundedMinor += row.refundedMinor
  out.clawbackCount += row.clawbackCount
  out.clawbackMinor += row.clawbackMinor
  out.payoutCount += row.payoutCount
  out.paidOutMinor += row.paidOutMinor
  out.salesMinor += row.salesMinor
  out.holdCount += row.holdCount
  out.holdMinor += row.holdMinor
  out.voidedCount += row.voidedCount
  out.voidedMinor += row.voidedMinor
}

function subtract(out: Figures, row: Figures): void {
  for (const counter of ROLLUP_COUNTERS) out[counter] -= row[counter]
}

/** Signups per click, to four decimals; 0 without clicks. */
export const conversionRate = (signups: number, clicks: number): number =>
  clicks > 0 ? Math.round((signups / clicks) * 10_000) / 10_000 : 0

export interface CountAndAmount {
  count: number
  /** Two decimals, as commission amounts. */
  amount: string
}

/** `GET /reports/summary`'s figures (see docs/reports.md). */
export interface ReportFigures {
  opens: number
  clicks: number
  /** Referred e-mails whose first record for the affiliate is dated in the period. */
  signups: number
  /** `signups / clicks`, four decimals; 0 without clicks. */
  conversionRate: number
  /** Sales dated in the period; `amount` what they earn (not refunded, less refunds after payment). */
  commissions: CountAndAmount
  /** Those sales by their status now; `amount` the sum of their `amount`s. */
  byStatus: Record<CommissionStatus, CountAndAmount>
  /** Clawbacks made in the period (negative amounts). */
  clawbacks: CountAndAmount
  /** Payouts paid in the period. */
  paidOut: CountAndAmount
  /** The sales dated in the period: their count, and what the referred customers paid (`saleAmount`, before refunds; 0 for commissions added without a sale). */
  sales: CountAndAmount
}

const pair = (count: number, minor: number): CountAndAmount => ({ count, amount: formatMoney(minor) })

export function summaryOf(f: Figures): ReportFigures {
  return {
    opens: f.opens,
    clicks: f.clicks,
    signups: f.signups,
    conversionRate: conversionRate(f.signups, f.clicks),
    commissions: pair(f.saleCount, f.earningsMinor),
    byStatus: {
      pending: pair(f.pendingCount, f.pendingMinor),
      processing: pair(f.processingCount, f.processingMinor),
      paid: pair(f.paidCount, f.paidMinor),
      refunded: pair(f.refundedCount, f.refundedMinor),
      hold: pair(f.holdCount, f.holdMinor),
      voided: pair(f.voidedCount, f.voidedMinor),
    },
    clawbacks: pair(f.clawbackCount, f.clawbackMinor),
    paidOut: pair(f.payoutCount, f.paidOutMinor),
    sales: pair(f.saleCount, f.salesMinor),
  }
}

/** One bucket of `GET /reports/timeseries`. */
export interface SeriesPoint {
  /** The bucket's first instant (UTC ISO): local midnight of the day, week (Monday) or month, or a local hour. */
  start: string
  /** The next bucket's start: a day across a daylight-saving change lasts 23 or 25 hours. */
  end: string
  opens: number
  clicks: number
  signups: number
  commissionCount: number
  /** What the sales dated in the bucket earn, two decimals. */
  earnings: string
}

const SERIES_COUNTERS = ['opens', 'clicks', 'signups', 'saleCount', 'earningsMinor'] as const

/**
 * Every bucket of the period, empty ones included; throws `bucketsBetween`'s input errors. Each
 * bucket holds the hours starting in it and in [fromMs, toMs): F at both ends, summed by `seriesFrom`
 * as one row at the bucket's first such hour.
 */
export async function seriesOf(
  tx: StorageTransaction,
  scope: ReportScope,
  fromMs: number,
  toMs: number,
  interval: Granularity,
  timeZone: string,
): Promise<SeriesPoint[]> {
  const spans = bucketsBetween(fromMs, toMs, interval, timeZone)
    .map((b) => ({ lo: ceilHour(Math.max(b.startMs, fromMs)), hi: ceilHour(Math.min(b.endMs, toMs)) }))
    .filter((span) => span.hi > span.lo)
  const F = spans.length
    ? await cumulative(
        tx,
        prefixOf(scope),
        spans.flatMap((span) => [span.lo, span.hi]),
      )
    : null
  const rows = spans.map((span) => ({ hourStart: isoOf(span.lo), ...difference(F!(span.hi), F!(span.lo)) }))
  return seriesFrom(rows, fromMs, toMs, interval, timeZone, { counters: SERIES_COUNTERS }).map((item) => ({
    start: item.start,
    end: item.end,
    opens: item.opens,
    clicks: item.clicks,
    signups: item.signups,
    commissionCount: item.saleCount,
    earnings: formatMoney(item.earningsMinor),
  }))
}

/**
 * Each affiliate's figures over the hours starting in [fromMs, toMs), from the affiliate rows of a
 * workspace (or one campaign of it): day rows for the whole UTC days, hour rows for the edges.
 */
export async function affiliateFigures(
  tx: StorageTransaction,
  workspaceId: string,
  campaignId: string | undefined,
  fromMs: number,
  toMs: number,
): Promise<Map<string, Figures>> {
  const lo = ceilHour(fromMs)
  const hi = ceilHour(toMs)
  const out = new Map<string, Figures>()
  if (hi <= lo) return out
  const where: Where<'rollups'> = campaignId ? { campaignId } : {}
  const firstWhole = Math.ceil(lo / DAY) * DAY
  const lastWhole = floorDay(hi)
  const rows: RollupRecord[] = []
  if (firstWhole < lastWhole) {
    for (const row of await readIn(
      tx,
      'rankKey',
      monthsOf(firstWhole, lastWhole).map((month) => rankKey(workspaceId, month)),
      where,
    )) {
      const day = Date.parse(row.hourStart)
      if (day >= firstWhole && day < lastWhole) rows.push(row)
    }
  }
  // The hours outside whole days: before the first midnight and after the last one (or all of them,
  // when no whole day lies between), read from the hour rows of the days they touch.
  const edges =
    firstWhole < lastWhole
      ? [
          [lo, firstWhole],
          [lastWhole, hi],
        ]
      : [[lo, hi]]
  const edgeDays = new Set<string>()
  for (const [a, b] of edges) for (let day = floorDay(a!); day < b!; day += DAY) edgeDays.add(dayText(day))
  for (const row of await readIn(
    tx,
    'rankKey',
    [...edgeDays].map((day) => rankKey(workspaceId, day)),
    where,
  )) {
    const hour = Date.parse(row.hourStart)
    if (edges.some(([a, b]) => hour >= a! && hour < b!)) rows.push(row)
  }
  for (const row of rows) {
    let figures = out.get(row.affiliateId)
    if (!figures) out.set(row.affiliateId, (figures = zero()))
    add(figures, row)
  }
  return out
}
