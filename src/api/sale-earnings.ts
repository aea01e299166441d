import { isoAt, type Clock } from '../clock.js'
import { toCommission } from '../domain/commission.js'
import { toCustomer, type SaleResult } from '../domain/customer.js'
import type { CommissionRecord, CustomerRecord, SaleRecord } from '../domain/records.js'
import { afterSale, countsInHistory, refundShare, reward, type SaleSkipReason } from '../domain/reward.js'
import { announce, emitChange, type EventTransaction } from '../events/outbox.js'
import type { StorageTransaction } from '../storage/types.js'
import type { Access } from './access.js'
import { insertCommission, refundCommission } from './commission-records.js'
import { settlePayment } from './provider-payments.js'

// What a sale earns (SPEC wave 3, "Reward rules on campaigns"; wave 4, "Stripe as it sends events
// today"): the campaign's rules applied to a sale of a customer, when it is recorded or, for a sale
// of a Stripe customer no customer was bound to yet, when that Stripe customer is bound.

/** The sale's fields the rules and its commission read. */
export type EarningSale = Pick<SaleRecord, 'workspaceId' | 'invoiceId' | 'chargeId' | 'paymentIntentId' | 'subscriptionId' | 'amountMinor' | 'currency' | 'paidAt'>

export interface Earned {
  /** The customer as now stored (its history moved), or null when the sale has none. */
  customer: CustomerRecord | null
  commission: CommissionRecord | null
  /** Why no commission was made; null when one was. */
  skipped: SaleSkipReason | null
}

/**
 * Applies the campaign's reward rules (`reward`) to `sale` of `customer` (null: not attributed) in
 * `tx`: makes the commission (and writes `commission.created`), and moves the customer's history
 * (not for a sale paid before the customer was attributed, see `countsInHistory`).
 */
export async function earnIn(tx: EventTransaction, access: Access, clock: Clock, sale: EarningSale, customer: CustomerRecord | null): Promise<Earned> {
  const affiliate = customer && (await tx.get('affiliates', customer.affiliateId))
  const campaign = affiliate && (await tx.get('campaigns', affiliate.campaignId))
  const outcome = reward(campaign, affiliate, customer, sale)
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
      status: 'pending',
      commissionDate: sale.paidAt,
      invoiceId: sale.invoiceId,
      chargeId: sale.chargeId,
      stripeSubscriptionId: sale.subscriptionId,
      sale: { amountMinor: sale.amountMinor, customerId: customer!.id, paymentIntentId: sale.paymentIntentId },
    })
    await announce(tx, clock, 'commission.created', toCommission(commission))
  }
  let after = customer
  if (customer && countsInHistory(outcome)) {
    after = (await tx.update('customers', customer.id, { ...afterSale(customer, sale.paidAt, commission !== null), updatedAt: isoAt(clock) }))!
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
export async function claimSales(tx: EventTransaction, access: Access, clock: Clock, customer: CustomerRecord): Promise<CommissionRecord[]> {
  if (customer.stripeCustomerId === null) return []
  const sales = await tx.find('sales', {
    where: { workspaceId: customer.workspaceId, stripeCustomerId: customer.stripeCustomerId, customerId: null },
    orderBy: { field: 'paidAt', direction: 'ASC' },
  })
  const made: CommissionRecord[] = []
  let current = customer
  for (const sale of sales) {
    const earned = await earnIn(tx, access, clock, sale, current)
    current = earned.customer ?? current
    let commission = earned.commission
    let taken = 0
    if (commission && sale.refundedMinor > 0) {
      taken = Math.min(refundShare({ ...sale, commissionMinor: commission.amountMinor, refundedMinor: 0, commissionRefundedMinor: 0 }, sale.refundedMinor), commission.amountMinor)
      if (taken > 0) {
        const refunded = await refundCommission(tx, clock, commission, taken)
        await emitChange(tx, clock, 'commission.refunded', commission, refunded, toCommission(refunded))
        commission = refunded
      }
    }
    const answer: SaleResult = { customer: toCustomer(current), commission: commission && toCommission(commission), skipped: earned.skipped }
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
