import type { CommissionKind, CommissionStatus } from './records.js'
import { answerMapper } from './schema.js'

/** A commission as the API answers it. Amounts are decimal strings with two decimals. */
export interface Commission {
  commissionId: string
  campaignId: string
  workspaceId: string
  affiliateId: string
  /** The referred user's e-mail. */
  referredUser: string
  amount: string
  adminEarnedAmount: string
  status: CommissionStatus
  commissionDate: string
  remarks: string | null
  /** The referral link the sale came through, when one was given. */
  referralCode: string | null
  /** `clawback`: the negative commission a refund of a paid sale makes, netted into the next payout. */
  kind: CommissionKind
  /** When it may be paid: `commissionDate` plus the campaign's `payoutTerm` days. */
  dueAt: string
  /** The payout it is in, if any. */
  payoutId: string | null
  /** What refunds took back after it was paid, as a decimal string. */
  refundedAmount: string
  /** On a clawback: the paid sale it takes money back from. */
  reversesCommissionId: string | null
  /** The sale it was made from (decimal string, without tax); null when made by hand, and on a clawback. */
  saleAmount: string | null
  /** Its campaign's currency (ISO 4217). */
  currency: string
  /** The customer whose sale made it (a clawback: of the sale it reverses); null when made by hand. */
  customerId: string | null
  invoiceId: string | null
  chargeId: string | null
  stripeSubscriptionId: string | null
  /** The sale's payment intent (Stripe), once an event named it. */
  paymentIntentId: string | null
  /** Why it is held for review; empty unless it is. */
  holdReasons: string[]
  createdAt: string
  updatedAt: string
}

/** A referred user: the same record as a commission, with the signup's extra fields. */
export interface ReferredUser extends Commission {
  payoutDate: string | null
  name: string | null
  isSelfReferral: boolean
  isWalletPayment: number
}

export const toCommission = answerMapper<'commissions', Commission>('commissions', 'commission')

export const toReferredUser = answerMapper<'commissions', ReferredUser>('commissions', 'referredUser')
