import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import { toCommission } from '../domain/commission.js'
import type { SaleRefundResult } from '../domain/customer.js'
import type { CommissionRecord, SaleRecord } from '../domain/records.js'
import { refundableMinor } from '../domain/refund.js'
import { refundShare } from '../domain/reward.js'
import { unprocessable } from '../errors.js'
import { emitChange, type EventTransaction } from '../events/outbox.js'
import { refundCommission } from './commission-records.js'

// A refund of a sale (SPEC wave 3, "Customers and conversions"): the commission's share of it goes
// back through the commission refund path. Shared by `POST /conversions/refund` and the refunds
// providers report (src/api/provider-payments.ts).

/**
 * Takes the commission's share of `refundMinor` of `sale` back (a clawback when it was paid) and
 * records the refund with its answer, in `tx`. The refund record is written before anything is
 * checked: a repeat of its `refundId` racing this one collides there and answers what this one answers.
 */
export async function refundSaleIn(
  tx: EventTransaction,
  clock: Clock,
  sale: SaleRecord,
  current: CommissionRecord,
  refundMinor: number,
  refundId: string | null,
): Promise<SaleRefundResult> {
  const now = isoAt(clock)
  const left = sale.amountMinor - sale.refundedMinor
  const refundRecord = {
    id: newId(),
    workspaceId: sale.workspaceId,
    saleId: sale.id,
    refundId,
    amountMinor: refundMinor,
    commissionMinor: 0,
    answer: '',
    createdAt: now,
    updatedAt: now,
  }
  await tx.insert('saleRefunds', refundRecord)
  if (left === 0) throw unprocessable('This sale is already refunded in full', 'refund_refused')
  if (refundMinor > left)
    throw unprocessable(`The refund amount is more than what is left of the sale (${left} minor units)`, 'refund_refused')
  // Its share, but never more than the commission still holds (the host may have refunded it by hand; a voided one holds nothing).
  const share = Math.min(
    refundShare(sale, refundMinor),
    current.status === 'refunded' || current.status === 'voided' ? 0 : refundableMinor(current),
  )
  let commission = current
  let clawback: CommissionRecord | null = null
  if (share > 0) {
    commission = await refundCommission(tx, clock, current, share)
    await emitChange(tx, clock, 'commission.refunded', current, commission, toCommission(commission))
    if (current.status === 'paid') {
      const [made] = await tx.find('commissions', {
        where: { affiliateId: current.affiliateId, reversesCommissionId: current.id, amountMinor: -share, createdAt: now },
        limit: 1,
      })
      clawback = made ?? null
    }
  }
  await tx.update('sales', sale.id, {
    refundedMinor: sale.refundedMinor + refundMinor,
    commissionRefundedMinor: sale.commissionRefundedMinor + Math.max(share, 0),
    updatedAt: now,
  })
  const answer: SaleRefundResult = { commission: toCommission(commission), clawback: clawback && toCommission(clawback) }
  await tx.update('saleRefunds', refundRecord.id, { commissionMinor: Math.max(share, 0), answer: JSON.stringify(answer) })
  return answer
}
