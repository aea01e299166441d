// The refund rules (SPEC "Commissions: kinds, due dates, refunds") as one pure function: what a
// refund does to a commission, or why it is refused. The service applies the plan in one transaction.

import { AffiliateError } from '../errors.js'
import type { CommissionKind, CommissionStatus } from './records.js'

export type { CommissionKind }

/** The parts of a commission a refund looks at. Money is integer minor units. */
export interface RefundableCommission {
  id: string
  status: CommissionStatus
  kind: CommissionKind
  amountMinor: number
  refundedMinor: number
  payoutId: string | null
}

/** The clawback a refund of a `paid` commission creates; the caller copies workspace, campaign and affiliate. */
export interface ClawbackPlan {
  kind: 'clawback'
  amountMinor: number
  status: 'pending'
  dueAt: string
  reversesCommissionId: string
  payoutId: null
  refundedMinor: 0
}

/**
 * A refund of a `pending` or `processing` commission: its amount goes down. A commission in a payout
 * leaves it (`leavesPayoutId`; the payout loses `removedFromPayoutMinor`, see `payoutAfterRemoval`)
 * and, when something is left, goes back to `pending` so the next run picks it up again.
 */
export interface UnpaidRefundPlan {
  type: 'unpaid'
  refundMinor: number
  amountMinor: number
  status: CommissionStatus
  /** Always null after the refund: it was null, or the commission left its payout. */
  payoutId: null
  leavesPayoutId: string | null
  removedFromPayoutMinor: number
}

/** A refund of a `paid` commission: its `refundedAmount` goes up and a clawback is created. */
export interface PaidRefundPlan {
  type: 'paid'
  refundMinor: number
  refundedMinor: number
  status: 'paid' | 'refunded'
  clawback: ClawbackPlan
}

export type RefundPlan = UnpaidRefundPlan | PaidRefundPlan

/** What is left to refund: the amount of an unpaid commission, the amount less refunds of a paid one. */
export const refundableMinor = (c: RefundableCommission): number =>
  c.status === 'paid' ? c.amountMinor - c.refundedMinor : c.amountMinor

/**
 * The plan for refunding `amountMinor` (default: what is left) of `commission` at `now` (ISO), or
 * the 422 refusing it: a clawback, a `refunded` commission, a zero, negative or fractional amount,
 * nothing left, or more than what is left.
 */
export function planRefund(
  commission: RefundableCommission,
  amountMinor: number | undefined,
  now: string,
): RefundPlan | AffiliateError {
  if (commission.kind === 'clawback') return new AffiliateError(422, 'A clawback cannot be refunded', { code: 'refund_refused' })
  if (commission.status === 'refunded') return new AffiliateError(422, 'This commission is already refunded', { code: 'refund_refused' })
  const left = refundableMinor(commission)
  const refund = amountMinor ?? left
  if (!Number.isSafeInteger(refund) || refund <= 0) {
    return new AffiliateError(
      422,
      amountMinor === undefined ? 'Nothing is left to refund on this commission' : 'The refund amount must be greater than zero',
      { code: 'refund_refused' },
    )
  }
  if (refund > left) {
    return new AffiliateError(422, `The refund amount is more than what is left to refund (${left} minor units)`, { code: 'refund_refused' })
  }
  if (commission.status === 'paid') {
    const refundedMinor = commission.refundedMinor + refund
    return {
      type: 'paid',
      refundMinor: refund,
      refundedMinor,
      status: refundedMinor === commission.amountMinor ? 'refunded' : 'paid',
      clawback: {
        kind: 'clawback',
        amountMinor: -refund,
        status: 'pending',
        dueAt: now,
        reversesCommissionId: commission.id,
        payoutId: null,
        refundedMinor: 0,
      },
    }
  }
  const amount = commission.amountMinor - refund
  const inPayout = commission.payoutId !== null
  return {
    type: 'unpaid',
    refundMinor: refund,
    amountMinor: amount,
    status: amount === 0 ? 'refunded' : inPayout ? 'pending' : commission.status,
    payoutId: null,
    leavesPayoutId: commission.payoutId,
    removedFromPayoutMinor: inPayout ? commission.amountMinor : 0,
  }
}
