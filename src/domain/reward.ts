// The reward rules (SPEC wave 3, "Reward rules on campaigns") as one pure function: what a sale
// earns its affiliate, or why it earns nothing. Everything that turns sales into commissions calls it.

import type { FraudSkipReason } from './fraud-rules.js'
import type { CommissionType } from './records.js'

/** Why a sale made no commission, in the order the rules are checked. */
export const SALE_SKIP_REASONS = [
  'not_attributed',
  'before_attribution',
  'currency_mismatch',
  'affiliate_banned',
  'affiliate_inactive',
  'outside_recurring_window',
  'max_commissions_reached',
  'zero_amount',
] as const

/** Why a sale made no commission: a reward rule's reason, or a blocking fraud rule's (`fraud_<rule>`, checked after them). */
export type SaleSkipReason = (typeof SALE_SKIP_REASONS)[number] | FraudSkipReason

/** The campaign's rule. `amountMinor` is hundredths: of a percent (`percentage`) or of the currency (`fixed`). */
export interface RewardRule {
  commissionType: CommissionType
  amountMinor: number
  currency: string
  recurringMonths: number | null
  maxCommissionsPerCustomer: number | null
}

/** What the customer's earlier sales left behind; null when there is no customer (the sale is not attributed). */
export interface CustomerHistory {
  /** When its earliest paid sale was paid (ISO), null before its first. */
  firstSaleAt: string | null
  /** Its sales recorded so far (earning or not). */
  salesCount: number
  /** Commissions its sales made so far. */
  commissionCount: number
}

/** The customer a sale is of, as the rules see it: when it was attributed, and what its earlier sales left. */
export interface SaleCustomer extends CustomerHistory {
  /** When it was attributed (ISO): a sale paid before earns nothing. */
  attributedAt: string
}

/** The sale. Money in minor units, `paidAt` ISO. */
export interface SaleFacts {
  amountMinor: number
  currency: string
  paidAt: string
}

/** The affiliate the customer is bound to, as far as earning goes. */
export interface EarnerState {
  isBanned: boolean
  isActive: boolean
}

export type Reward = { type: 'commission'; commissionMinor: number; adminEarnedMinor: number } | { type: 'skipped'; reason: SaleSkipReason }

/** `numerator / denominator` rounded half away from zero, exactly (integers; the denominator > 0). */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n
  const magnitude = negative ? -numerator : numerator
  const rounded = (magnitude * 2n + denominator) / (denominator * 2n)
  return negative ? -rounded : rounded
}

/** `amountMinor`% (in hundredths of a percent) of `saleMinor`, rounded half away from zero to the cent. */
export const percentageOf = (saleMinor: number, percentMinor: number): number =>
  Number(divideRounded(BigInt(saleMinor) * BigInt(percentMinor), 10_000n))

/** The instant `months` calendar months after `iso` (UTC); a day the month lacks becomes its last day (Jan 31 + 1 = Feb 28/29). */
export function addCalendarMonths(iso: string, months: number): number {
  const start = new Date(iso)
  const target = new Date(start.getTime())
  target.setUTCDate(1)
  target.setUTCMonth(target.getUTCMonth() + months)
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(start.getUTCDate(), lastDay))
  return target.getTime()
}

/** Whether a sale paid at `paidAt` lies in the recurring window of a customer with `history`. */
export function inRecurringWindow(recurringMonths: number | null, history: CustomerHistory, paidAt: string): boolean {
  if (recurringMonths === null) return true
  if (recurringMonths === 0) return history.salesCount === 0
  // The first paid sale is the earliest one, this sale included (sales may be reported out of order).
  const first = history.firstSaleAt === null || paidAt < history.firstSaleAt ? paidAt : history.firstSaleAt
  return Date.parse(paidAt) < addCalendarMonths(first, recurringMonths)
}

/**
 * What `sale` earns under `rule` (its campaign's) for `customer` bound to `earner` (null when no
 * customer is found or made: `not_attributed`): nothing when it was paid before the customer was
 * attributed (`before_attribution`); else a commission (`percentage`: the share of the sale;
 * `fixed`: the amount, at most the sale; rounded half away from zero to the cent) and what the
 * owner keeps, or the first reason it earns nothing.
 */
export function reward(rule: RewardRule | null, earner: EarnerState | null, customer: SaleCustomer | null, sale: SaleFacts): Reward {
  const skip = (reason: SaleSkipReason): Reward => ({ type: 'skipped', reason })
  if (rule === null || earner === null || customer === null) return skip('not_attributed')
  if (Date.parse(sale.paidAt) < Date.parse(customer.attributedAt)) return skip('before_attribution')
  const history = customer
  if (sale.currency !== rule.currency) return skip('currency_mismatch')
  if (earner.isBanned) return skip('affiliate_banned')
  if (!earner.isActive) return skip('affiliate_inactive')
  if (!inRecurringWindow(rule.recurringMonths, history, sale.paidAt)) return skip('outside_recurring_window')
  if (rule.maxCommissionsPerCustomer !== null && history.commissionCount >= rule.maxCommissionsPerCustomer)
    return skip('max_commissions_reached')
  const commissionMinor =
    rule.commissionType === 'percentage' ? percentageOf(sale.amountMinor, rule.amountMinor) : Math.min(rule.amountMinor, sale.amountMinor)
  if (commissionMinor <= 0) return skip('zero_amount')
  return { type: 'commission', commissionMinor, adminEarnedMinor: sale.amountMinor - commissionMinor }
}

/**
 * Whether a sale with this reward counts in its customer's history: one paid before the customer
 * was attributed does not (it was no referred customer's sale), so the recurring window and the
 * commission limit count from the attribution on, whatever order the sales are reported in.
 */
export const countsInHistory = (outcome: Reward): boolean => !(outcome.type === 'skipped' && outcome.reason === 'before_attribution')

/** The history after a sale paid at `paidAt` is recorded (`earned`: it made a commission). */
export const afterSale = (history: CustomerHistory, paidAt: string, earned: boolean): CustomerHistory => ({
  firstSaleAt: history.firstSaleAt === null || paidAt < history.firstSaleAt ? paidAt : history.firstSaleAt,
  salesCount: history.salesCount + 1,
  commissionCount: history.commissionCount + (earned ? 1 : 0),
})

/**
 * What a refund takes back from a sale's commission: its share of the commission, worked out on
 * the running total (`commission x refunded so far / sale`, to the cent) so rounding never drifts,
 * and the last refund (the whole sale refunded) takes exactly what is left.
 */
export function refundShare(
  sale: { amountMinor: number; refundedMinor: number; commissionMinor: number; commissionRefundedMinor: number },
  refundMinor: number,
): number {
  const refunded = sale.refundedMinor + refundMinor
  const owed =
    refunded >= sale.amountMinor
      ? sale.commissionMinor
      : Number(divideRounded(BigInt(sale.commissionMinor) * BigInt(refunded), BigInt(sale.amountMinor)))
  return owed - sale.commissionRefundedMinor
}
