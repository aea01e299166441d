import { answerMapper } from './schema.js'
import type { CommissionType } from './records.js'

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
  /** ISO 4217 code of a two-decimal currency: what its commissions and payouts are in. */
  currency: string
  /** Days a click may lead to a signup or sale it is credited with. */
  attributionWindowDays: number
  /**
   * Which paid sales of a customer earn: null every one, 0 only the first, N those paid before the
   * first paid sale + N calendar months (UTC).
   * @default null
   */
  recurringMonths: number | null
  /** The most commissions one customer's sales earn; null for no limit. @default null */
  maxCommissionsPerCustomer: number | null
  createdAt: string
  updatedAt: string
}

export const toCampaign = answerMapper<'campaigns', Campaign>('campaigns', 'campaign')
