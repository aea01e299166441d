import { answerMapper } from './schema.js'
import type { PayoutMethod } from './records.js'

/** An affiliate as the API answers it. */
export interface Affiliate {
  id: string
  email: string
  firstName: string
  lastName: string
  notes: string
  workspaceId: string
  campaignId: string
  /** The empty string when unset. */
  payoutEmail: string
  /** null until chosen. */
  payoutMethod: PayoutMethod | null
  details: string | null
  isActive: boolean
  isBanned: boolean
  totalOpens: number
  totalClicks: number
  totalSignups: number
  /** Sum of its commissions that are not refunded; at most two decimals. */
  totalEarnings: number
  createdAt: string
  updatedAt: string
}

export const toAffiliate = answerMapper<'affiliates', Affiliate>('affiliates', 'affiliate')
