import type { CommissionStatus } from './records.js'

export const COMMISSION_STATUSES: readonly CommissionStatus[] = ['pending', 'processing', 'paid', 'refunded']

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

/** What a commission in this status adds to its affiliate's earnings: everything unless refunded. */
export const earnedMinor = (status: CommissionStatus, amountMinor: number): number =>
  status === 'refunded' ? 0 : amountMinor

/**
 * Why a commission cannot be deleted, or null when it may be: money history is kept. The one place
 * deletion rules live; payouts add theirs here ("in a payout", "refunded but was in a paid payout").
 */
export function deletionError(commission: { status: CommissionStatus }): string | null {
  if (commission.status === 'paid') return 'A paid commission cannot be deleted: money history is kept'
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
