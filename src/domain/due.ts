// Due dates, earnings and balances as pure functions over minor units and ISO timestamps.

import { earnedMinor, type EarningCommission } from './commission-status.js'
import type { CommissionStatus, PayoutStatus } from './records.js'

/** A day in ms: days in the rules (payout terms, attribution windows) are whole 24-hour days. */
export const DAY_MS = 86_400_000

// A date (UTC midnight) or a date-time with its zone: never one JavaScript would read in local time.
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/

/**
 * Milliseconds since the epoch for an ISO 8601 date or zoned date-time; a TypeError naming the value
 * when it is not one (no zone, a day the month lacks, anything else `Date.parse` would guess at).
 */
export function instant(iso: string, name = 'timestamp'): number {
  const match = ISO.exec(iso)
  const ms = match ? Date.parse(iso) : Number.NaN
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0]
  const calendar = new Date(Date.UTC(2000, month - 1, day))
  calendar.setUTCFullYear(year)
  if (!Number.isFinite(ms) || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
    throw new TypeError(`${name} is not a valid timestamp: ${JSON.stringify(iso)}`)
  }
  return ms
}

/**
 * When a commission falls due: `commissionDate` plus `payoutTermDays` whole days, in UTC, where every
 * day is exactly 24 hours (no time zone, no daylight saving), as an ISO timestamp. Month ends and
 * leap days follow the calendar: 2024-01-31 + 29 days is 2024-02-29, 2023-01-31 + 29 days is 2023-03-01.
 */
export function dueAt(commissionDate: string, payoutTermDays: number): string {
  if (!Number.isSafeInteger(payoutTermDays) || payoutTermDays < 0) {
    throw new TypeError(`payoutTermDays must be a non-negative integer, got ${payoutTermDays}`)
  }
  const due = new Date(instant(commissionDate, 'commissionDate') + payoutTermDays * DAY_MS)
  if (!Number.isFinite(due.getTime())) throw new TypeError('dueAt is out of the timestamp range')
  return due.toISOString()
}

export type { EarningCommission }

/**
 * `totalEarnings` in minor units: over `sale` commissions not `refunded`, `amount - refundedAmount`.
 * Clawbacks never count in earnings; they count in balances.
 */
export function earningsOf(commissions: readonly EarningCommission[]): number {
  let total = 0
  for (const c of commissions) total += earnedMinor(c)
  return total
}

/** The parts of a commission a balance looks at. */
export interface BalanceCommission {
  status: CommissionStatus
  amountMinor: number
  refundedMinor: number
  dueAt: string
  payoutId: string | null
}

/** The parts of a payout a balance looks at. */
export interface BalancePayout {
  status: PayoutStatus
  amountMinor: number
}

/** `GET /affiliates/balance` in minor units. */
export interface Balance {
  /** Pending commissions not yet due. */
  held: number
  /** Pending commissions due (`dueAt <= asOf`) and in no payout; negative when clawbacks outweigh sales. */
  due: number
  /** Payouts not yet paid: `pending` or `processing` (failed and canceled ones released theirs). */
  inPayout: number
  /** Paid payouts. */
  paidOut: number
  /**
   * Commissions set `processing` or `paid` by hand (`PUT /commissions`) outside any payout, and
   * those refunded after such a payment (their clawbacks take the refund back in `due`).
   */
  paidOutside: number
}

/**
 * Whether a commission in no payout was paid (or is being paid) outside payouts: set `processing` or
 * `paid` by hand, or `refunded` after that (`refundedMinor > 0`).
 */
const paidOutside = (c: BalanceCommission): boolean =>
  c.payoutId === null && (c.status === 'processing' || c.status === 'paid' || (c.status === 'refunded' && c.refundedMinor > 0))

/**
 * One affiliate's balance at `asOf` from its commissions (both kinds; those in payouts are not looked
 * at, so the caller may pass only those in none) and its payouts. Every commission counts in exactly
 * one figure, or in none when refunded before payment, so the five add up to the affiliate's
 * `totalEarnings` (sales less refunds; clawbacks take back what refunds after payment took):
 * held + due + inPayout + paidOut + paidOutside = earnings.
 */
export function balanceOf(commissions: readonly BalanceCommission[], payouts: readonly BalancePayout[], asOf: string): Balance {
  const at = instant(asOf, 'asOf')
  const balance: Balance = { held: 0, due: 0, inPayout: 0, paidOut: 0, paidOutside: 0 }
  for (const c of commissions) {
    if (paidOutside(c)) balance.paidOutside += c.amountMinor
    if (c.status !== 'pending' || c.payoutId !== null) continue
    if (instant(c.dueAt, 'dueAt') <= at) balance.due += c.amountMinor
    else balance.held += c.amountMinor
  }
  for (const p of payouts) {
    if (p.status === 'pending' || p.status === 'processing') balance.inPayout += p.amountMinor
    else if (p.status === 'paid') balance.paidOut += p.amountMinor
  }
  return balance
}
