// The payout state machine, as pure functions and data: no storage, no clock. The service's payout
// routes and the refund path apply what these answer in one transaction.

import { AffiliateError } from '../errors.js'
import type { CommissionStatus, PayoutStatus } from './records.js'

export type { PayoutStatus }

export { PAYOUT_STATUSES } from './descriptions/payouts.js'

/** SPEC "Payouts": pending → processing → paid; pending | processing → failed; pending → canceled. */
const moves: Record<PayoutStatus, readonly PayoutStatus[]> = {
  pending: ['processing', 'failed', 'canceled'],
  processing: ['paid', 'failed'],
  paid: [],
  failed: [],
  canceled: [],
}

/**
 * Whether a payout may move from `from` to `to`. Staying put always may (a no-op, as for
 * commissions), so `PUT /payouts` can update `externalReference` or `failureReason` alone.
 */
export const canMovePayout = (from: PayoutStatus, to: PayoutStatus): boolean => from === to || moves[from].includes(to)

/** The 422 for a move the machine refuses, naming both states; undefined when the move is allowed. */
export function payoutMoveError(from: PayoutStatus, to: PayoutStatus): AffiliateError | undefined {
  if (canMovePayout(from, to)) return undefined
  const allowed = moves[from]
  const hint = allowed.length === 0 ? `a ${from} payout is final` : `from ${from} it may move to ${allowed.join(' or ')}`
  return new AffiliateError(422, `Cannot change payout status from ${from} to ${to}: ${hint}`, { code: 'invalid_status_transition' })
}

/** A payout being made (`enter`) or moving to a status. */
export type PayoutMove = 'enter' | PayoutStatus

/**
 * What a payout move does to the commissions in it, as data:
 * - `status`: the commissions' new status, or null when they keep theirs;
 * - `payoutId`: `set` (to the payout's id), `keep`, or `clear` (back to null: the next run picks
 *   them up again).
 */
export interface CommissionEffect {
  status: CommissionStatus | null
  payoutId: 'set' | 'keep' | 'clear'
}

const effects: Record<PayoutMove, CommissionEffect> = {
  enter: { status: 'processing', payoutId: 'set' },
  pending: { status: null, payoutId: 'keep' },
  processing: { status: null, payoutId: 'keep' },
  paid: { status: 'paid', payoutId: 'keep' },
  failed: { status: 'pending', payoutId: 'clear' },
  canceled: { status: 'pending', payoutId: 'clear' },
}

/**
 * What happens to a payout's commissions when it is made (`enter`: `pending` → `processing` with
 * `payoutId` set) or moves to `to`: `paid` pays them, `failed` and `canceled` return them to `pending`
 * with `payoutId` null, `pending` and `processing` leave them as they are. Staying put is a no-op
 * whatever the status: callers apply the effect only when the status changes.
 */
export const commissionEffect = (to: PayoutMove): CommissionEffect => effects[to]

/** A payout as far as its amount, count and status go. */
export interface PayoutAmountState {
  status: PayoutStatus
  amountMinor: number
  commissionCount: number
}

/**
 * A `pending` payout after a commission left it (a refund before payment takes it out): its amount
 * goes down by the commission's amount before the refund and its count by one. One that would be
 * left at zero or less, or below `minimumMinor` (its campaign's `minimumPayoutAmount`, which a run
 * would not have paid), is `canceled` instead, keeping the amount and count it had, as a payout
 * canceled through `PUT /payouts` does (a payout's amount is always above zero); its other
 * commissions then follow `commissionEffect('canceled')`. From `processing` on a payout is frozen
 * (its money is on its way): a refund of its commissions is one after payment, which leaves them in
 * it (see `refundsAfterPayment`), so only a `pending` payout can lose a commission.
 */
export function payoutAfterRemoval(payout: PayoutAmountState, removedMinor: number, minimumMinor = 0): PayoutAmountState {
  if (payout.status !== 'pending') throw new TypeError(`A ${payout.status} payout cannot lose a commission`)
  const amountMinor = payout.amountMinor - removedMinor
  if (amountMinor <= 0 || amountMinor < minimumMinor) {
    return { status: 'canceled', amountMinor: payout.amountMinor, commissionCount: payout.commissionCount }
  }
  return { status: payout.status, amountMinor, commissionCount: payout.commissionCount - 1 }
}
