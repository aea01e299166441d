import { isoAt, type Clock } from '../clock.js'
import { toCommission } from '../domain/commission.js'
import { toCustomer, type SaleResult } from '../domain/customer.js'
import type { CommissionRecord, CustomerRecord, SaleRecord } from '../domain/records.js'
import { afterSale, countsInHistory, refundShare, reward, type SaleSkipReason } from '../domain/reward.js'
import { announce, emitChange, type EventTransaction } from '../events/outbox.js'
import type { Access } from './access.js'
import { insertCommission, refundCommission } from './commission-records.js'
import { checkConversion, type DisposableDomains } from './fraud-checks.js'
import { settlePayment } from './provider-payments.js'
import { fraudSkipReason, type FraudRule } from '../domain/fraud-rules.js'

// What a sale earns (SPEC wave 3, "Reward rules on campaigns"; wave 4, "Stripe as it sends events
// today", "Fraud rules and the hold status"): the campaign's rules applied to a sale of a customer,
// when it is recorded or, for a sale of a Stripe customer no customer was bound to yet, when that
// Stripe customer is bound; then, for a sale that earns, the campaign's fraud rules. Every sale, from
// the API and from every provider, earns here and nowhere else.

/** The sale's fields the rules and its commission read. */
export type EarningSale = Pick<
  SaleRecord,
  'workspaceId' | 'invoiceId' | 'chargeId' | 'paymentIntentId' | 'subscriptionId' | 'amountMinor' | 'currency' | 'paidAt'
>

export interface Earned {
  /** The customer as now stored (its history moved), or null when the sale has none. */
  customer: CustomerRecord | null
  commission: CommissionRecord | null
  /** Why no commission was made; null when one was. */
  skipped: SaleSkipReason | null
}

/**
 * Applies the campaign's reward rules (`reward`) to `sale` of `customer` (null: not attributed) in
 * `tx`, then, to a sale that earns, its fraud rules (`checkConversion`): a blocking rule that fires
 * makes no commission (skipped `fraud_<rule>`), flagging ones make it `hold` with them in
 * `holdReasons`. Makes the commission (and writes `commission.created`, and `commission.held` for a
 * held one), and moves the customer's history (not for a sale paid before the customer was
 * attributed, see `countsInHistory`).
 */
export async function earnIn(
  tx: EventTransaction,
  access: Access,
  clock: Clock,
  sale: EarningSale,
  customer: CustomerRecord | null,
  disposableDomains: DisposableDomains,
): Promise<Earned> {
  const affiliate = customer && (await tx.get('affiliates', customer.affiliateId))
  const campaign = affiliate && (await tx.get('campaigns', affiliate.campaignId))
  let outcome = reward(campaign, affiliate, customer, sale)
  let holdReasons: FraudRule[] = []
  if (outcome.type === 'commission') {
    const verdict = await checkConversion(tx, disposableDomains, {
      campaign: campaign!,
      affiliate: affiliate!,
      customer: customer!,
      at: sale.paidAt,
      now: isoAt(clock),
    })
    if (verdict.blockedBy !== null) outcome = { type: 'skipped', reason: fraudSkipReason(verdict.blockedBy) }
    holdReasons = verdict.holdReasons
  }
  let commission: CommissionRecord | null = null
  if (outcome.type === 'commission') {
    const link = customer!.linkId === null ? null : await tx.get('links', customer!.linkId)
    commission = await insertCommission(tx, access, clock, {
      affiliateId: affiliate!.id,
      workspaceId: sale.workspaceId,
      known: { affiliate: affiliate!, campaign: campaign!, link: link?.affiliateId === affiliate!.id ? link : null },
      referredUser: customer!.email,
      amountMinor: outcome.commissionMinor,
      adminEarnedMinor: outcome.adminEarnedMinor,
      status: holdReasons.length > 0 ? 'hold' : 'pending',
      holdReasons,
      commissionDate: sale.paidAt,
      invoiceId: sale.invoiceId,
      chargeId: sale.chargeId,
      stripeSubscriptionId: sale.subscriptionId,
      sale: { amountMinor: sale.amountMinor, customerId: customer!.id, paymentIntentId: sale.paymentIntentId },
    })
    await announce(tx, clock, 'commission.created', toCommission(commission))
    if (commission.status === 'hold') await announce(tx, clock, 'commission.held', toCommission(commission))
  }
  let after = customer
  if (customer && countsInHistory(outcome)) {
    after = (await tx.update('customers', customer.id, {
      ...afterSale(customer, sale.paidAt, commission !== null),
      updatedAt: isoAt(clock),
    }))!
  }
  return { customer: after, commission, skipped: outcome.type === 'skipped' ? outcome.reason : null }
}

/**
 * Attributes the sales of the customer's Stripe customer that were recorded before it was bound
 * (an invoice paid, or delivered, before the checkout naming the customer): each earns by the rules
 * as if it had come after the binding, in the order they were paid (one paid before the customer's
 * attribution earns nothing), and what was refunded of it is taken back from its commission at
 * once. Each one's recorded provider events are brought up to date (`settlePayment`). Answers the
 * commissions made.
 */
export async function claimSales(
  tx: EventTransaction,
  access: Access,
  clock: Clock,
  customer: CustomerRecord,
  disposableDomains: DisposableDomains,
): Promise<CommissionRecord[]> {
  if (customer.stripeCustomerId === null) return []
  const sales = await tx.find('sales', {
    where: { workspaceId: customer.workspaceId, stripeCustomerId: customer.stripeCustomerId, customerId: null },
    orderBy: { field: 'paidAt', direction: 'ASC' },
  })
  const made: CommissionRecord[] = []
  let current = customer
  for (const sale of sales) {
    const earned = await earnIn(tx, access, clock, sale, current, disposableDomains)
    current = earned.customer ?? current
    let commission = earned.commission
    let taken = 0
    if (commission && sale.refundedMinor > 0) {
      taken = Math.min(
        refundShare({ ...sale, commissionMinor: commission.amountMinor, refundedMinor: 0, commissionRefundedMinor: 0 }, sale.refundedMinor),
        commission.amountMinor,
      )
      if (taken > 0) {
        const refunded = await refundCommission(tx, clock, commission, taken)
        await emitChange(tx, clock, 'commission.refunded', commission, refunded, toCommission(refunded))
        commission = refunded
      }
    }
    const answer: SaleResult = {
      customer: toCustomer(current),
      commission: commission && toCommission(commission),
      skipped: earned.skipped,
    }
    const claimed = (await tx.update('sales', sale.id, {
      customerId: current.id,
      commissionId: earned.commission?.id ?? null,
      commissionMinor: earned.commission?.amountMinor ?? 0,
      commissionRefundedMinor: taken,
      answer: JSON.stringify(answer),
      updatedAt: isoAt(clock),
    }))!
    await settlePayment(tx, clock, claimed, earned.skipped)
    if (earned.commission) made.push(earned.commission)
  }
  return made
}
