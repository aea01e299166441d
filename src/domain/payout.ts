import { answerMapper, type AnswerOf } from './answers.js'
import type { SkipReason } from './payout-run.js'

/** A payout as the API answers it (see descriptions/payouts.ts). Amounts are decimal strings with two decimals. */
export type Payout = AnswerOf<'payouts', 'payout'>

export const toPayout = answerMapper('payouts', 'payout')

/** The events of a change to a payout: its amount or count (`payout.updated`), or its status. */
export const PAYOUT_EVENTS = { updated: 'payout.updated', statusChanged: 'payout.status_changed' } as const

/** An affiliate a payout run left out, and why. */
export interface SkippedAffiliate {
  affiliateId: string
  reason: SkipReason
  /** The due net that was not paid, as a decimal string (may be negative). */
  amount: string
}

/** What `POST /payouts/run` answers: the payouts made (or, on a dry run, that would be) and who was skipped. */
export interface PayoutRunResult {
  payouts: Payout[]
  skipped: SkippedAffiliate[]
}

/** `GET /affiliates/balance`: where an affiliate's money stands, as decimal strings. */
export interface AffiliateBalance {
  affiliateId: string
  currency: string
  /** Pending commissions not yet due. */
  held: string
  /** Pending, due and in no payout; negative when clawbacks outweigh sales. */
  due: string
  /** In payouts not yet paid. */
  inPayout: string
  /** Paid out: the sum of its paid payouts. */
  paidOut: string
  /**
   * Commissions set `processing` or `paid` by hand outside any payout (and those refunded after such
   * a payment). held + due + inPayout + paidOut + paidOutside = the affiliate's `totalEarnings`.
   */
  paidOutside: string
}
