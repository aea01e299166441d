import type { CommissionKind, CommissionStatus } from './records.js'

export { COMMISSION_STATUSES } from './descriptions/commissions.js'

const moves: Record<CommissionStatus, readonly CommissionStatus[]> = {
  pending: ['processing', 'paid', 'refunded'],
  processing: ['paid', 'refunded', 'pending'],
  paid: ['refunded'],
  refunded: [],
  // Left only through review (`reviewMoveError`): released to pending, or voided.
  hold: ['pending', 'voided'],
  voided: [],
}

/** The statuses review decides: a commission in one is moved only by `POST /commissions/release` and `/commissions/void`. */
const UNDER_REVIEW: readonly CommissionStatus[] = ['hold', 'voided']

/**
 * Why `PUT /commissions` may not move a commission from `from` to `to` (null when it may): a held
 * commission is released or voided through its routes, and a voided one is final.
 */
export function reviewMoveError(from: CommissionStatus, to: CommissionStatus): string | null {
  if (from === to || !UNDER_REVIEW.includes(from)) return null
  return from === 'hold'
    ? 'A held commission is released (POST /commissions/release) or voided (POST /commissions/void) after review; its status cannot be set'
    : 'A voided commission is final: its status cannot change'
}

/** What reviewing a held commission does: `release` makes it pending (payable), `void` makes it voided (earns nothing). */
export type ReviewAction = 'release' | 'void'
export const REVIEW_STATUS: Record<ReviewAction, CommissionStatus> = { release: 'pending', void: 'voided' }

/** Why a commission cannot be reviewed (`action`), or null when it can: only a held one can. */
export function reviewError(status: CommissionStatus, action: ReviewAction): string | null {
  if (status === 'hold') return null
  return `Only a held commission can be ${action === 'release' ? 'released' : 'voided'}; this one is ${status}`
}

/**
 * Whether a commission may move from `from` to `to`: null when it may (staying put always may),
 * else the reason, naming both states.
 */
export function statusChangeError(from: CommissionStatus, to: CommissionStatus): string | null {
  if (from === to || moves[from].includes(to)) return null
  return `Cannot change status from ${from} to ${to}`
}

/** The parts of a commission its affiliate's earnings look at. */
export interface EarningCommission {
  kind: CommissionKind
  status: CommissionStatus
  amountMinor: number
  refundedMinor: number
}

/**
 * What one commission adds to its affiliate's (and link's) `totalEarnings`: a sale not `refunded`
 * adds its amount less what refunds took back after payment; a clawback adds nothing (it counts in
 * balances, not earnings); nor does a sale held for review (until it is released) or voided.
 */
export const earnedMinor = (c: EarningCommission): number =>
  c.kind === 'sale' && c.status !== 'refunded' && c.status !== 'hold' && c.status !== 'voided' ? c.amountMinor - c.refundedMinor : 0

/**
 * Why a commission cannot be deleted, or null when it may be: money history is kept. The one place
 * deletion rules live: not `paid`, not in a payout (a refunded one that was paid keeps its payoutId,
 * so it stays too), not a clawback (it is how a refund after payment is recovered), not a sale
 * refunded after payment (`refundedMinor > 0`: paid outside payouts, or while its payout was frozen),
 * which is the only kind of sale a clawback reverses.
 */
export function deletionError(commission: {
  status: CommissionStatus
  kind: CommissionKind
  payoutId: string | null
  refundedMinor: number
}): string | null {
  if (commission.status === 'paid') return 'A paid commission cannot be deleted: money history is kept'
  if (commission.status === 'voided') return 'A voided commission cannot be deleted: it is kept for history'
  if (commission.kind === 'clawback') return 'A clawback cannot be deleted: money history is kept'
  if (commission.payoutId !== null) {
    return commission.status === 'refunded'
      ? 'A refunded commission that was paid cannot be deleted: money history is kept'
      : 'A commission in a payout cannot be deleted: refund it or cancel the payout first'
  }
  if (commission.refundedMinor > 0) return 'A commission refunded after payment cannot be deleted: its clawback and money history are kept'
  return null
}

/** The parts of a commission a banned affiliate's rule looks at. */
export interface EarningState {
  status: CommissionStatus
  amountMinor: number
}

/**
 * Whether a change may happen to a commission of a banned affiliate, which earns nothing: null when it
 * may, else the reason. Its amount cannot go up and it cannot move to `processing` or `paid`;
 * refunds, lower amounts, going back to `pending` and fields that earn nothing are still allowed.
 */
export function bannedChangeError(from: EarningState, to: EarningState): string | null {
  if (to.status !== from.status && (to.status === 'processing' || to.status === 'paid')) {
    return `This affiliate is banned: its commissions cannot move to ${to.status}`
  }
  if (to.amountMinor > from.amountMinor) return 'This affiliate is banned: the amount of its commissions cannot be raised'
  return null
}
