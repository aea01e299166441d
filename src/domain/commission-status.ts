import type { CommissionKind, CommissionStatus } from './records.js'

export { COMMISSION_STATUSES } from './descriptions/commissions.js'

const moves: Record<CommissionStatus, readonly CommissionStatus[]> = {
  pending: ['processing', 'paid', 'refunded'],
  processing: ['paid', 'refunded', 'pending'],
  paid: ['refunded'],
  refunded: [],
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
 * balances, not earnings).
 */
export const earnedMinor = (c: EarningCommission): number =>
  c.kind === 'sale' && c.status !== 'refunded' ? c.amountMinor - c.refundedMinor : 0

/**
 * Why a commission cannot be deleted, or null when it may be: money history is kept. The one place
 * deletion rules live: not `paid`, not in a payout (a refunded one that was paid keeps its payoutId,
 * so it stays too), not a clawback (it is how a refund after payment is recovered), not a sale
 * refunded after payment (`refundedMinor > 0`: paid outside payouts, or while its payout was frozen),
 * which is the only kind of sale a clawback reverses.
 */
export function deletionError(commission: { status: CommissionStatus; kind: CommissionKind; payoutId: string | null; refundedMinor: number }): string | null {
  if (commission.status === 'paid') return 'A paid commission cannot be deleted: money history is kept'
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
