import { earnedMinor } from '../domain/commission-status.js'
import type { CommissionRecord, RollupRecord } from '../domain/records.js'
import { ROLLUP_COUNTERS } from '../domain/descriptions/service.js'
import { chunked, IDS_PER_READ } from '../storage/batch.js'
import type { StorageTransaction } from '../storage/types.js'

// Rollups: the report figures of each UTC hour and day, per affiliate, per campaign and per
// workspace, moved in the same transaction as every write that changes them. Every write reaches
// them through `addToRollups` (a change of figures at one place and instant) or `moveCommission` (a
// commission record before and after a write), so a report reads rows per day of its period and a
// few hours at its edges (read.ts), and never scans records.
//
// Where a figure counts:
// - a commission (and its clawback) in the hour of its `commissionDate`, the date of the sale the
//   host gives (a clawback's is when the refund made it); a change of that date moves it;
// - a signup in the hour of the earliest `commissionDate` among the affiliate's records for that
//   e-mail (so signups add up over hours to the affiliate's `totalSignups`);
// - an open or click in the hour it was tracked; a paid payout in the hour of its `paidAt`.

export type RollupCounter = (typeof ROLLUP_COUNTERS)[number]
export type RollupDeltas = Partial<Record<RollupCounter, number>>

/** Whose figures change: the affiliate (and through it its campaign and workspace). */
export interface RollupScope {
  workspaceId: string
  campaignId: string
  affiliateId: string
}

const HOUR = 3_600_000
/** Stands for "every campaign" or "every affiliate" in keys. */
export const ALL = '*'

/** The UTC hour holding an ISO instant, as ISO. */
export const hourOf = (iso: string): string => new Date(Math.floor(Date.parse(iso) / HOUR) * HOUR).toISOString()
/** The UTC day of an hour as `hourOf` writes it. */
export const dayOf = (hourStart: string): string => hourStart.slice(0, hourStart.indexOf('T'))

/** The three levels a change is counted at: the affiliate's row, its campaign's, its workspace's. */
export type RollupLevel = { campaignId: string; affiliateId: string }
const levels = (scope: RollupScope): RollupLevel[] => [
  { campaignId: scope.campaignId, affiliateId: scope.affiliateId },
  { campaignId: scope.campaignId, affiliateId: '' },
  { campaignId: '', affiliateId: '' },
]

/** The key prefix of one level's rows (`workspace|campaign|affiliate`, '*' for all; an affiliate's rows name no campaign). */
export const levelKey = (workspaceId: string, campaignId: string, affiliateId: string): string =>
  affiliateId !== '' ? `${workspaceId}|${ALL}|${affiliateId}` : `${workspaceId}|${campaignId || ALL}|${ALL}`

/**
 * Each level keeps two spans of rows: an hour row per UTC hour and a day row per UTC day (the sum
 * of its 24 hours), so a long period reads a row per day and only the hours at its edges.
 * - hour row: id `prefix|hourStart`, seriesKey `prefix|YYYY-MM-DD`, rankKey `workspace|YYYY-MM-DD`;
 * - day row: id `prefix|YYYY-MM-DD`, hourStart the day's 00:00, seriesKey `prefix|YYYY-MM`, rankKey `workspace|YYYY-MM`.
 * (rankKey on affiliate rows only.)
 */
export type Span = 'hour' | 'day'

export const hourRowId = (prefix: string, hourStart: string): string => `${prefix}|${hourStart}`
export const dayRowId = (prefix: string, day: string): string => `${prefix}|${day}`
/** The seriesKey of a level's hour rows of one UTC day, or of its day rows of one UTC month (`YYYY-MM`). */
export const seriesKey = (prefix: string, dayOrMonth: string): string => `${prefix}|${dayOrMonth}`
export const rankKey = (workspaceId: string, dayOrMonth: string): string => `${workspaceId}|${dayOrMonth}`
export const monthOf = (day: string): string => day.slice(0, day.lastIndexOf('-'))

/** One change: figures at one place and instant. */
export interface RollupEntry {
  scope: RollupScope
  /** An ISO instant: the change counts in its UTC hour (and day). */
  at: string
  deltas: RollupDeltas
}

const nonZero = (deltas: RollupDeltas): RollupDeltas | null => {
  let out: RollupDeltas | null = null
  for (const counter of ROLLUP_COUNTERS) {
    const value = deltas[counter]
    if (value !== undefined && value !== 0) (out ??= {})[counter] = value
  }
  return out
}

type Target = { row: Omit<RollupRecord, RollupCounter>; deltas: Record<string, number> }

/** The hour, day and month of an instant, as the rows' ids and keys name them. */
type Times = { hourStart: string; day: string; dayStart: string; month: string }
const timesOf = (at: string): Times => {
  const hourStart = hourOf(at)
  const day = dayOf(hourStart)
  return { hourStart, day, dayStart: `${day}T00:00:00.000Z`, month: monthOf(day) }
}

/**
 * The row `id` (an hour's or a day's, starting at `start`) being summed in `rows`, made on first
 * use: its series and rank keys name the period it belongs to (the day of an hour, the month of a
 * day); only an affiliate's rows are ranked.
 */
function targetOf(
  rows: Map<string, Target>,
  id: string,
  workspaceId: string,
  level: RollupLevel,
  prefix: string,
  start: string,
  period: string,
): Target {
  let target = rows.get(id)
  if (target === undefined) {
    const row = {
      workspaceId,
      campaignId: level.campaignId,
      affiliateId: level.affiliateId,
      id,
      hourStart: start,
      seriesKey: seriesKey(prefix, period),
      rankKey: level.affiliateId !== '' ? rankKey(workspaceId, period) : null,
      createdAt: start,
    }
    rows.set(id, (target = { row, deltas: {} }))
  }
  return target
}

/**
 * Adds the figures of each entry to its hour's and day's rows at the affiliate's, campaign's and
 * workspace's level, in the caller's transaction: a row is incremented, or inserted when it does
 * not exist yet (its id is its key, so two writers of the same new row collide on the primary key,
 * and a serializable storage runs one of them again). Entries sharing a row are summed first, and
 * the rows are written in batches (one `incrementEach`, then a look-up and one `insertMany` only
 * when some are new), whatever their number.
 */
export async function addToRollups(tx: StorageTransaction, entries: readonly RollupEntry[]): Promise<void> {
  const rows = new Map<string, Target>()
  // Many entries share an instant (a commission's date) or an hour: each is worked out once.
  const times = new Map<string, Times>()
  for (const entry of entries) {
    const deltas = nonZero(entry.deltas)
    if (deltas === null) continue
    let time = times.get(entry.at)
    if (time === undefined) times.set(entry.at, (time = timesOf(entry.at)))
    const { hourStart, day, dayStart, month } = time
    const { workspaceId } = entry.scope
    for (const level of levels(entry.scope)) {
      const prefix = levelKey(workspaceId, level.campaignId, level.affiliateId)
      const hour = targetOf(rows, hourRowId(prefix, hourStart), workspaceId, level, prefix, hourStart, day)
      const whole = targetOf(rows, dayRowId(prefix, day), workspaceId, level, prefix, dayStart, month)
      for (const counter in deltas) {
        const value = deltas[counter as RollupCounter]!
        hour.deltas[counter] = (hour.deltas[counter] ?? 0) + value
        whole.deltas[counter] = (whole.deltas[counter] ?? 0) + value
      }
    }
  }
  const moving: { row: Target['row']; moved: RollupDeltas }[] = []
  for (const { row, deltas } of rows.values()) {
    const moved = nonZero(deltas)
    if (moved !== null) moving.push({ row, moved })
  }
  if (moving.length === 0) return
  // An entry moves six rows (three levels, an hour and a day each). Most already exist (a status
  // move finds the rows its commission was counted in, a click finds its hour's rows after the
  // hour's first), so increment them all first: when every row changed, that one statement was the
  // whole move. When none did, every row is new; otherwise find which are missing. Either way the
  // missing rows are inserted holding their deltas.
  const changed = await tx.incrementEach(
    'rollups',
    moving.map(({ row, moved }) => ({ id: row.id, deltas: moved })),
  )
  if (changed === moving.length) return
  const existing = new Set<string>()
  if (changed > 0) {
    for (const chunk of chunked(moving, IDS_PER_READ)) {
      const ids = chunk.map(({ row }) => row.id)
      for (const record of await tx.select('rollups', [], { where: { id: { in: ids } } })) existing.add(record.id)
    }
  }
  const missing = moving.filter(({ row }) => !existing.has(row.id)).sort((a, b) => (a.row.id < b.row.id ? -1 : 1))
  if (missing.length > 0)
    await tx.insertMany(
      'rollups',
      missing.map(({ row, moved }) => fresh(row, moved)),
    )
}

/** A new row holding `moved` (every other counter 0). */
function fresh(row: Target['row'], moved: RollupDeltas): RollupRecord {
  // Written out field by field, so every new row has one shape (a hundred thousand of them in a payout run).
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    campaignId: row.campaignId,
    affiliateId: row.affiliateId,
    hourStart: row.hourStart,
    seriesKey: row.seriesKey,
    rankKey: row.rankKey,
    createdAt: row.createdAt,
    opens: moved.opens ?? 0,
    clicks: moved.clicks ?? 0,
    signups: moved.signups ?? 0,
    saleCount: moved.saleCount ?? 0,
    earningsMinor: moved.earningsMinor ?? 0,
    pendingCount: moved.pendingCount ?? 0,
    pendingMinor: moved.pendingMinor ?? 0,
    processingCount: moved.processingCount ?? 0,
    processingMinor: moved.processingMinor ?? 0,
    paidCount: moved.paidCount ?? 0,
    paidMinor: moved.paidMinor ?? 0,
    refundedCount: moved.refundedCount ?? 0,
    refundedMinor: moved.refundedMinor ?? 0,
    clawbackCount: moved.clawbackCount ?? 0,
    clawbackMinor: moved.clawbackMinor ?? 0,
    payoutCount: moved.payoutCount ?? 0,
    paidOutMinor: moved.paidOutMinor ?? 0,
    salesMinor: moved.salesMinor ?? 0,
    holdCount: moved.holdCount ?? 0,
    holdMinor: moved.holdMinor ?? 0,
    voidedCount: moved.voidedCount ?? 0,
    voidedMinor: moved.voidedMinor ?? 0,
  } satisfies Record<keyof RollupRecord, unknown>
}

const scopeOf = (c: Pick<CommissionRecord, 'workspaceId' | 'campaignId' | 'affiliateId'>): RollupScope => ({
  workspaceId: c.workspaceId,
  campaignId: c.campaignId,
  affiliateId: c.affiliateId,
})

/** What one commission record adds to the figures of the hour of its `commissionDate` (signups aside). */
export function commissionFigures(c: CommissionRecord): RollupDeltas {
  if (c.kind === 'clawback') return { clawbackCount: 1, clawbackMinor: c.amountMinor }
  return {
    saleCount: 1,
    earningsMinor: earnedMinor(c),
    salesMinor: c.saleAmountMinor ?? 0,
    [`${c.status}Count`]: 1,
    [`${c.status}Minor`]: c.amountMinor,
  }
}

const negate = (deltas: RollupDeltas): RollupDeltas =>
  Object.fromEntries(Object.entries(deltas).map(([counter, value]) => [counter, -value]))

/** The entries that take `before`'s figures out and put `after`'s in (either may be null: inserted, deleted). */
export function commissionEntries(before: CommissionRecord | null, after: CommissionRecord | null): RollupEntry[] {
  const out: RollupEntry[] = []
  if (before) out.push({ scope: scopeOf(before), at: before.commissionDate, deltas: negate(commissionFigures(before)) })
  if (after) out.push({ scope: scopeOf(after), at: after.commissionDate, deltas: commissionFigures(after) })
  return out
}

const earliest = (records: readonly CommissionRecord[]): string | null => {
  let min: string | null = null
  for (const record of records) if (min === null || Date.parse(record.commissionDate) < Date.parse(min)) min = record.commissionDate
  return min
}

/**
 * The signup entries of a write to one record (already done in `tx`): the e-mail's signup for the
 * affiliate counts in the hour of its earliest record, which an insert, a delete or a new
 * `commissionDate` may move.
 */
async function signupEntries(
  tx: StorageTransaction,
  before: CommissionRecord | null,
  after: CommissionRecord | null,
): Promise<RollupEntry[]> {
  const some = (after ?? before)!
  if (before && after && before.commissionDate === after.commissionDate) return []
  if (before === null) {
    // An insert dated no earlier than another record of the e-mail leaves the earliest where it is:
    // found by reading at most two rows, so a customer's thousandth sale costs what its first did.
    const where = { referredUserKey: some.referredUserKey, affiliateId: some.affiliateId, commissionDate: { lte: some.commissionDate } }
    const earlier = await tx.select('commissions', ['id'], { where, limit: 2 })
    if (earlier.some((record) => record.id !== some.id)) return []
  }
  const now = await tx.find('commissions', { where: { referredUserKey: some.referredUserKey, affiliateId: some.affiliateId } })
  const then = now.filter((record) => record.id !== some.id)
  if (before) then.push(before)
  const was = earliest(then)
  const is = earliest(now)
  if (was !== null && is !== null && hourOf(was) === hourOf(is)) return []
  const out: RollupEntry[] = []
  if (was !== null) out.push({ scope: scopeOf(some), at: was, deltas: { signups: -1 } })
  if (is !== null) out.push({ scope: scopeOf(some), at: is, deltas: { signups: 1 } })
  return out
}

/**
 * Moves the rollups for a write to one commission record, called after the write in its
 * transaction: `before` is the record as it was (null: inserted), `after` as it is now (null: deleted).
 */
export async function moveCommission(
  tx: StorageTransaction,
  before: CommissionRecord | null,
  after: CommissionRecord | null,
): Promise<void> {
  await addToRollups(tx, [...commissionEntries(before, after), ...(await signupEntries(tx, before, after))])
  const stale = staleRefundWindow(before, after)
  if (stale !== null) await forgetRefundWindow(tx, stale)
}

const refundedSale = (c: Pick<CommissionRecord, 'kind' | 'status'> | null): boolean =>
  c !== null && c.kind === 'sale' && c.status === 'refunded'

/**
 * The affiliate whose kept refund window (`refundWindow`, the `refund_rate` fraud rule's sums of its
 * sales and refunded sales over the days before today) a write to one commission makes stale, or
 * null: a sale inserted, deleted or re-dated, or one moving into or out of `refunded`, on a day
 * before the write's own (its `updatedAt`). The write's own day is read afresh by every check.
 */
export function staleRefundWindow(before: CommissionRecord | null, after: CommissionRecord | null): string | null {
  const sale = (c: CommissionRecord | null) => (c !== null && c.kind === 'sale' ? c : null)
  const [was, is] = [sale(before), sale(after)]
  if (was === null && is === null) return null
  const moved =
    was === null ||
    is === null ||
    was.commissionDate !== is.commissionDate ||
    was.affiliateId !== is.affiliateId ||
    refundedSale(was) !== refundedSale(is)
  if (!moved) return null
  // A sale of the write's own day (a new sale, as most are): no earlier day changed.
  if (was === null && is !== null && is.commissionDate.slice(0, 10) === is.updatedAt.slice(0, 10)) return null
  if (
    was !== null &&
    is !== null &&
    was.commissionDate === is.commissionDate &&
    was.affiliateId === is.affiliateId &&
    is.commissionDate.slice(0, 10) === is.updatedAt.slice(0, 10)
  )
    return null
  return (is ?? was)!.affiliateId
}

/** Empties an affiliate's kept refund window: its next `refund_rate` check reads the rollups again. */
export async function forgetRefundWindow(tx: StorageTransaction, affiliateId: string): Promise<void> {
  await tx.update('affiliates', affiliateId, { refundWindow: [] })
}

/** What a status move reads of a commission record. */
export type StatusMoveRecord = Pick<
  CommissionRecord,
  'workspaceId' | 'campaignId' | 'affiliateId' | 'commissionDate' | 'kind' | 'status' | 'amountMinor' | 'refundedMinor'
>

/** Moves the rollups for commissions whose status (and nothing else rollups read) changed together. */
export async function moveCommissionStatus(
  tx: StorageTransaction,
  before: readonly StatusMoveRecord[],
  status: CommissionRecord['status'],
): Promise<void> {
  // One entry per record: what `commissionEntries(record, moved)` adds up to (same place, same hour).
  const entries: RollupEntry[] = []
  // Sales moving into or out of `refunded` (a payout paid with commissions refunded in full): their
  // affiliates' kept refund windows go stale (whatever their day: these moves say no write time).
  const stale = new Set<string>()
  for (const record of before) {
    const deltas = statusMoveFigures(record, status)
    if (deltas !== null) entries.push({ scope: scopeOf(record), at: record.commissionDate, deltas })
    if (refundedSale(record) !== refundedSale({ kind: record.kind, status })) stale.add(record.affiliateId)
  }
  await addToRollups(tx, entries)
  for (const affiliateId of stale) await forgetRefundWindow(tx, affiliateId)
}

/**
 * What moving one record to `status` changes in its hour's figures: `commissionFigures` of the
 * moved record minus those of the record, worked out without copying the record. Null when nothing.
 */
export function statusMoveFigures(c: StatusMoveRecord, status: CommissionRecord['status']): RollupDeltas | null {
  // A clawback's figures do not depend on its status.
  if (c.kind === 'clawback' || c.status === status) return null
  const out: RollupDeltas = {}
  const earned = earnedMinor({ kind: c.kind, status, amountMinor: c.amountMinor, refundedMinor: c.refundedMinor }) - earnedMinor(c)
  if (earned !== 0) out.earningsMinor = earned
  out[`${c.status}Count` as RollupCounter] = -1
  out[`${c.status}Minor` as RollupCounter] = -c.amountMinor
  out[`${status}Count` as RollupCounter] = 1
  out[`${status}Minor` as RollupCounter] = c.amountMinor
  return out
}
