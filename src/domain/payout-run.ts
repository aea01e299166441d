// A payout run as a pure plan (SPEC "Payouts", `POST /payouts/run`): which due commissions go into
// which payout and which affiliates are skipped, and why. Storage applies the plan in one transaction
// and claims each commission only while it still has no payout, so two runs never share one.

import { instant } from './due.js'
import type { CommissionKind, CommissionStatus, PayoutMethod } from './records.js'

export interface RunCommission {
  id: string
  affiliateId: string
  campaignId: string
  kind: CommissionKind
  status: CommissionStatus
  amountMinor: number
  dueAt: string
  payoutId: string | null
}

export interface RunAffiliate {
  id: string
  isBanned: boolean
  payoutMethod: PayoutMethod | null
  /** `""` (the record's default) counts as unset. */
  payoutEmail: string | null
}

export interface RunCampaign {
  id: string
  minimumPayoutMinor: number
  /** ISO 4217 code; `"USD"` when absent (the campaign default). */
  currency?: string
}

export interface PlannedPayout {
  affiliateId: string
  campaignId: string
  amountMinor: number
  /** Ordered by `dueAt`, then id. */
  commissionIds: string[]
  currency: string
  payoutMethod: PayoutMethod
  payoutEmail: string
}

/** Why a run left an affiliate out, in the order they are checked. */
export const SKIP_REASONS = ['banned', 'not_positive', 'below_minimum', 'no_payout_details'] as const
export type SkipReason = (typeof SKIP_REASONS)[number]

export interface SkippedPayout {
  affiliateId: string
  campaignId: string
  reason: SkipReason
  /** The due net that was not paid. */
  amountMinor: number
}

export interface PayoutRunPlan {
  payouts: PlannedPayout[]
  skipped: SkippedPayout[]
}

export interface PayoutRunInput {
  commissions: readonly RunCommission[]
  affiliates: readonly RunAffiliate[]
  campaigns: readonly RunCampaign[]
  asOf: string
}

/** Due for a run: both kinds, `pending`, `dueAt <= asOf`, in no payout. */
export const isDue = (c: RunCommission, asOfMs: number): boolean =>
  c.status === 'pending' && c.payoutId === null && instant(c.dueAt, 'dueAt') <= asOfMs

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The plan of a payout run at `asOf`: the due commissions grouped per (affiliate, campaign) and netted
 * (clawbacks are negative). A group becomes a payout when its affiliate is not banned, its net is
 * greater than zero and at least the campaign's minimum, and the affiliate has a payout method and a
 * payout e-mail; otherwise it is skipped with the first reason that applies, in this order:
 * `banned`, `not_positive` (net ≤ 0), `below_minimum`, `no_payout_details`. Affiliates with nothing
 * due appear in neither list. Both lists are ordered by campaign id, then affiliate id. A commission
 * whose affiliate or campaign is not in the input is a TypeError: the caller loads them all.
 */
export function planPayoutRun(input: PayoutRunInput): PayoutRunPlan {
  const asOfMs = instant(input.asOf, 'asOf')
  const affiliates = new Map(input.affiliates.map((a) => [a.id, a]))
  const campaigns = new Map(input.campaigns.map((c) => [c.id, c]))
  const groups = new Map<string, { affiliateId: string; campaignId: string; items: RunCommission[] }>()
  for (const c of input.commissions) {
    if (!isDue(c, asOfMs)) continue
    if (!affiliates.has(c.affiliateId)) throw new TypeError(`Affiliate ${c.affiliateId} of commission ${c.id} is missing`)
    if (!campaigns.has(c.campaignId)) throw new TypeError(`Campaign ${c.campaignId} of commission ${c.id} is missing`)
    const key = JSON.stringify([c.campaignId, c.affiliateId])
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { affiliateId: c.affiliateId, campaignId: c.campaignId, items: [] }))
    group.items.push(c)
  }
  const ordered = [...groups.values()].sort((a, b) => compare(a.campaignId, b.campaignId) || compare(a.affiliateId, b.affiliateId))
  const plan: PayoutRunPlan = { payouts: [], skipped: [] }
  for (const { affiliateId, campaignId, items } of ordered) {
    const affiliate = affiliates.get(affiliateId)!
    const campaign = campaigns.get(campaignId)!
    const amountMinor = items.reduce((sum, c) => sum + c.amountMinor, 0)
    const reason: SkipReason | null = affiliate.isBanned
      ? 'banned'
      : amountMinor <= 0
        ? 'not_positive'
        : amountMinor < campaign.minimumPayoutMinor
          ? 'below_minimum'
          : !affiliate.payoutMethod || !affiliate.payoutEmail
            ? 'no_payout_details'
            : null
    if (reason) {
      plan.skipped.push({ affiliateId, campaignId, reason, amountMinor })
      continue
    }
    const sorted = items.map((c) => ({ id: c.id, at: instant(c.dueAt) })).sort((a, b) => a.at - b.at || compare(a.id, b.id))
    plan.payouts.push({
      affiliateId,
      campaignId,
      amountMinor,
      commissionIds: sorted.map((c) => c.id),
      currency: campaign.currency ?? 'USD',
      payoutMethod: affiliate.payoutMethod!,
      payoutEmail: affiliate.payoutEmail!,
    })
  }
  return plan
}
