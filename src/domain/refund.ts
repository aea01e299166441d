// The refund rules (SPEC "Commissions: kinds, due dates, refunds") as one pure function: what a
// refund does to a commission, or why it is refused. The service applies the plan in one transaction.

import { AffiliateError } from '../errors.js'
import type { CommissionKind, CommissionStatus, PayoutStatus } from './records.js'

export type { CommissionKind }

/** The parts of a commission a refund looks at. Money is integer minor units. */
export interface RefundableCommission {
  id: string
  status: CommissionStatus
  kind: CommissionKind
  amountMinor: number
  refundedMinor: number
  payoutId: string | null
  /** The status of the payout it is in (null when in none): from `processing` on a payout is frozen. */
  payoutStatus: PayoutStatus | null
}

/**
 * Whether a refund of this commission is one after payment (a clawback takes the money back) rather
 * than one before (its amount goes down): it is `paid`; or its payout is `processing` or later, so the
 * money is on its way (the payout file may be exported already) and the payout is frozen; or part of
 * it was refunded after payment already (it came back from a payout that failed after that refund,
 * and its clawback still nets that part), so every later refund takes the same path.
 */
export const refundsAfterPayment = (c: Pick<RefundableCommission, 'status' | 'refundedMinor' | 'payoutStatus'>): boolean =>
  c.status === 'paid' || c.refundedMinor > 0 || (c.payoutStatus !== null && c.payoutStatus !== 'pending')

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
 * A refund before payment, of a `pending` or `processing` commission in no payout or in a `pending`
 * one: its amount goes down. A commission in a payout leaves it (`leavesPayoutId`; the payout loses
 * `removedFromPayoutMinor`, see `payoutAfterRemoval`) and, when something is left, goes back to
 * `pending` so the next run picks it up again.
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

/**
 * A refund after payment (see `refundsAfterPayment`): its `refundedAmount` goes up, a clawback is
 * created, and the commission stays where it is (in its payout, if any). A `paid` one becomes
 * `refunded` when nothing is left; any other keeps its status (a frozen payout's commission becomes
 * `refunded` rather than `paid` when its payout is paid, if nothing is left of it).
 */
export interface PaidRefundPlan {
  type: 'paid'
  refundMinor: number
  refundedMinor: number
  status: CommissionStatus
  clawback: ClawbackPlan
}

export type RefundPlan = UnpaidRefundPlan | PaidRefundPlan

/** What is left to refund: the amount less what refunds after payment took back (nothing, for most unpaid ones). */
export const refundableMinor = (c: Pick<RefundableCommission, 'amountMinor' | 'refundedMinor'>): number => c.amountMinor - c.refundedMinor

/**
 * The plan for refunding `amountMinor` (default: what is left) of `commission` at `now` (ISO), or
 * the 422 refusing it: a clawback, a `refunded` commission, a zero, negative or fractional amount,
 * nothing left, or more than what is left.
 */
export function planRefund(commission: RefundableCommission, amountMinor: number | undefined, now: string): RefundPlan | AffiliateError {
  if (commission.kind === 'clawback') return new AffiliateError(422, 'A clawback cannot be refunded', { code: 'refund_refused' })
  if (commission.status === 'refunded') return new AffiliateError(422, 'This commission is already refunded', { code: 'refund_refused' })
  if (commission.status === 'voided')
    return new AffiliateError(422, 'A voided commission earns nothing: there is nothing to refund', { code: 'refund_refused' })
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
    return new AffiliateError(422, `The refund amount is more than what is left to refund (${left} minor units)`, {
      code: 'refund_refused',
    })
  }
  if (refundsAfterPayment(commission)) {
    const refundedMinor = commission.refundedMinor + refund
    return {
      type: 'paid',
      refundMinor: refund,
      refundedMinor,
      status: commission.status === 'paid' && refundedMinor === commission.amountMinor ? 'refunded' : commission.status,
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
