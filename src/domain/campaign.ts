import { moneyNumber } from './money.js'
import type { CampaignRecord, CommissionType } from './records.js'

/** A campaign as the API answers it. */
export interface Campaign {
  id: string
  campaignName: string
  workspaceId: string
  commissionType: CommissionType
  /** A percentage (0 to 100) when `commissionType` is `percentage`, else an amount of money. */
  amount: number
  minimumPayoutAmount: number
  payoutId: string
  url: string
  requiresApprovalToJoin: boolean
  collectAdditionalInfo: boolean
  hideCustomerEmail: boolean
  /** Days. */
  payoutTerm: number
  affiliatePortalWelcomeMessage: string
  affiliateDashboardText: string
  stripeCouponId: string
  allowedUrlParameters: string[]
  isDefault: boolean
  createdAt: string
  updatedAt: string
}

export const toCampaign = (r: CampaignRecord): Campaign => ({
  id: r.id,
  campaignName: r.campaignName,
  workspaceId: r.workspaceId,
  commissionType: r.commissionType,
  amount: moneyNumber(r.amountMinor),
  minimumPayoutAmount: moneyNumber(r.minimumPayoutMinor),
  payoutId: r.payoutId,
  url: r.url,
  requiresApprovalToJoin: r.requiresApprovalToJoin,
  collectAdditionalInfo: r.collectAdditionalInfo,
  hideCustomerEmail: r.hideCustomerEmail,
  payoutTerm: r.payoutTerm,
  affiliatePortalWelcomeMessage: r.affiliatePortalWelcomeMessage,
  affiliateDashboardText: r.affiliateDashboardText,
  stripeCouponId: r.stripeCouponId,
  allowedUrlParameters: [...r.allowedUrlParameters],
  isDefault: r.isDefault,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
})
