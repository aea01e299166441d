import { formatMoney } from './money.js'
import type { CommissionRecord, CommissionStatus } from './records.js'

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
  createdAt: string
  updatedAt: string
}

/** A referred user: the same record as a commission, with the signup's extra fields. */
export interface ReferredUser extends Commission {
  payoutDate: string | null
  name: string | null
  isSelfReferral: boolean
  isWalletPayment: number
  chargeId: string | null
  invoiceId: string | null
  stripeSubscriptionId: string | null
}

export const toCommission = (r: CommissionRecord): Commission => ({
  commissionId: r.id,
  campaignId: r.campaignId,
  workspaceId: r.workspaceId,
  affiliateId: r.affiliateId,
  referredUser: r.referredUser,
  amount: formatMoney(r.amountMinor),
  adminEarnedAmount: formatMoney(r.adminEarnedMinor),
  status: r.status,
  commissionDate: r.commissionDate,
  remarks: r.remarks,
  referralCode: r.referralCode,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
})

export const toReferredUser = (r: CommissionRecord): ReferredUser => ({
  ...toCommission(r),
  payoutDate: r.payoutDate,
  name: r.name,
  isSelfReferral: r.isSelfReferral,
  isWalletPayment: r.isWalletPayment,
  chargeId: r.chargeId,
  invoiceId: r.invoiceId,
  stripeSubscriptionId: r.stripeSubscriptionId,
})
