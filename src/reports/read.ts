import { formatMoney } from '../domain/money.js'
import type { CommissionStatus, RollupRecord } from '../domain/records.js'
import { ROLLUP_COUNTERS } from '../domain/schema.js'
import type { StorageTransaction, Where } from '../storage/types.js'
import type { Granularity } from './buckets.js'
import { levelKey, rankKey, seriesKey, type RollupCounter } from './rollup.js'
import { seriesFrom } from './series.js'

// Reports read from rollups: the rows of one level (workspace, campaign or affiliate) for each
// UTC day the period touches, a storage `in` look-up on an indexed key per chunk of days, so their
// cost follows the length of the period, not the number of records. A row counts when its hour
// starts in [from, to).

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Day keys per storage look-up (one `in` list). */
const KEYS_PER_READ = 200

export type Figures = Record<RollupCounter, number>

const zero = (): Figures => Object.fromEntries(ROLLUP_COUNTERS.map((counter) => [counter, 0])) as Figures

/** The UTC days (`YYYY-MM-DD`) holding the hours that start in [fromMs, toMs). */
export function daysOf(fromMs: number, toMs: number): string[] {
  const out: string[] = []
  const firstHour = Math.ceil(fromMs / HOUR) * HOUR
  if (firstHour >= toMs) return out
  for (let day = Math.floor(firstHour / DAY) * DAY; day < toMs; day += DAY) out.push(new Date(day).toISOString().slice(0, 10))
  return out
}

/** Whose figures a report reads: a workspace, one of its campaigns, or one of its affiliates. */
export interface ReportScope {
  workspaceId: string
  campaignId?: string | undefined
  affiliateId?: string | undefined
}

const inPeriod = (row: RollupRecord, fromMs: number, toMs: number) => {
  const hour = Date.parse(row.hourStart)
  return hour >= fromMs && hour < toMs
}

async function readByDay(
  tx: StorageTransaction,
  field: 'seriesKey' | 'rankKey',
  keyOf: (day: string) => string,
  fromMs: number,
  toMs: number,
  where: Where<'rollups'> = {},
): Promise<RollupRecord[]> {
  const keys = daysOf(fromMs, toMs).map(keyOf)
  const out: RollupRecord[] = []
  for (let i = 0; i < keys.length; i += KEYS_PER_READ) {
    const rows = await tx.find('rollups', {
      where: { ...where, [field]: { in: keys.slice(i, i + KEYS_PER_READ) } },
      // Any order will do; this one costs the memory storage no merge of the days' lists.
      orderBy: { field: 'hourStart', direction: 'ASC' },
    })
    for (const row of rows) if (inPeriod(row, fromMs, toMs)) out.push(row)
  }
  return out
}

/** The hourly rows of the scope's level with an hour in [fromMs, toMs). */
export function scopeRows(tx: StorageTransaction, scope: ReportScope, fromMs: number, toMs: number): Promise<RollupRecord[]> {
  const prefix = levelKey(scope.workspaceId, scope.affiliateId ? '' : (scope.campaignId ?? ''), scope.affiliateId ?? '')
  return readByDay(tx, 'seriesKey', (day) => seriesKey(prefix, day), fromMs, toMs)
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
}

/** The figures of `rows`, summed. */
export function sumFigures(rows: Iterable<RollupRecord>): Figures {
  const out = zero()
  for (const row of rows) add(out, row)
  return out
}

/** Signups per click, to four decimals; 0 without clicks. */
export const conversionRate = (signups: number, clicks: number): number => (clicks > 0 ? Math.round((signups / clicks) * 10_000) / 10_000 : 0)

export interface CountAndAmount {
  count: number
  /** Two decimals, as commission amounts. */
  amount: string
}

/** `GET /reports/summary`'s figures (see the README's "Reports"). */
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
    },
    clawbacks: pair(f.clawbackCount, f.clawbackMinor),
    paidOut: pair(f.payoutCount, f.paidOutMinor),
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

/** Every bucket of the period, empty ones included; throws `seriesFrom`'s input errors. */
export function seriesOf(rows: readonly RollupRecord[], fromMs: number, toMs: number, interval: Granularity, timeZone: string): SeriesPoint[] {
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

/** Each affiliate's figures over the period, from the affiliate-level rows of a workspace (or one campaign of it). */
export async function affiliateFigures(
  tx: StorageTransaction,
  workspaceId: string,
  campaignId: string | undefined,
  fromMs: number,
  toMs: number,
): Promise<Map<string, Figures>> {
  const rows = await readByDay(tx, 'rankKey', (day) => rankKey(workspaceId, day), fromMs, toMs, campaignId ? { campaignId } : {})
  const out = new Map<string, Figures>()
  for (const row of rows) {
    let figures = out.get(row.affiliateId)
    if (!figures) out.set(row.affiliateId, (figures = zero()))
    add(figures, row)
  }
  return out
}
