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
