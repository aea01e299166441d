import { moneyNumber } from './money.js'
import type { AffiliateRecord, PayoutMethod } from './records.js'

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

export const toAffiliate = (r: AffiliateRecord): Affiliate => ({
  id: r.id,
  email: r.email,
  firstName: r.firstName,
  lastName: r.lastName,
  notes: r.notes,
  workspaceId: r.workspaceId,
  campaignId: r.campaignId,
  payoutEmail: r.payoutEmail,
  payoutMethod: r.payoutMethod,
  details: r.details,
  isActive: r.isActive,
  isBanned: r.isBanned,
  totalOpens: r.totalOpens,
  totalClicks: r.totalClicks,
  totalSignups: r.totalSignups,
  totalEarnings: moneyNumber(r.totalEarningsMinor),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
})
