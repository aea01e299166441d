import { isoAt, type Clock } from '../clock.js'
import { toCommission } from '../domain/commission.js'
import type { CommissionRecord, ProviderEventRecord, SaleRecord } from '../domain/records.js'
import { announce, type EventTransaction } from '../events/outbox.js'
import type { StorageTransaction } from '../storage/types.js'
import { refundSaleIn } from './sale-refunds.js'

// The payment behind a sale, as a provider's events tell of it piecemeal (SPEC wave 4, "Stripe as it
// sends events today"): the invoice paid, the invoice's payment (naming its payment intent or
// charge) and refunds of the charge (naming the charge and its payment intent), in any order. Each
// event's record in the event log keeps the ids it names and a refund's amounts; whenever a sale is
// made, gains an id or is attributed, the recorded events of its payment are applied to it here,
// so every order of the same events ends the same.

/** The ids a payment may be known by; each is unique per workspace on a sale. */
export interface PaymentIds {
  invoiceId?: string | null | undefined
  chargeId?: string | null | undefined
  paymentIntentId?: string | null | undefined
}

const ID_FIELDS = ['invoiceId', 'chargeId', 'paymentIntentId'] as const

/** The recorded events of the workspace naming any of `ids`, each once. */
async function eventsNaming(tx: StorageTransaction, workspaceId: string, ids: PaymentIds): Promise<ProviderEventRecord[]> {
  const found = new Map<string, ProviderEventRecord>()
  for (const field of ID_FIELDS) {
    const value = ids[field]
    if (!value) continue
    for (const event of await tx.find('providerEvents', { where: { workspaceId, [field]: value } })) found.set(event.id, event)
  }
  return [...found.values()]
}

/** Whether a recorded event is of the sale's payment: it names one of the sale's ids. */
const isOf = (sale: SaleRecord, event: ProviderEventRecord): boolean =>
  (event.invoiceId !== null && event.invoiceId === sale.invoiceId) ||
  (event.chargeId !== null && event.chargeId === sale.chargeId) ||
  (event.paymentIntentId !== null && event.paymentIntentId === sale.paymentIntentId)

/** The sale in `tx` by any of the payment's ids: its charge, then its payment intent, then its invoice. */
export async function saleOfPayment(tx: StorageTransaction, workspaceId: string, ids: PaymentIds): Promise<SaleRecord | null> {
  for (const field of ['chargeId', 'paymentIntentId', 'invoiceId'] as const) {
    const value = ids[field]
    if (!value) continue
    const [sale] = await tx.find('sales', { where: { workspaceId, [field]: value }, limit: 1 })
    if (sale) return sale
  }
  return null
}

/**
 * Gives the sale (and its commission) the charge and payment intent it lacks from `ids`; one it
 * holds already is kept (an invoice paid in two payments keeps the first). Answers the sale as now stored.
 */
export async function linkSale(tx: EventTransaction, clock: Clock, sale: SaleRecord, ids: PaymentIds): Promise<SaleRecord> {
  const patch: Partial<Pick<SaleRecord, 'chargeId' | 'paymentIntentId'>> = {}
  if (ids.chargeId && sale.chargeId === null) patch.chargeId = ids.chargeId
  if (ids.paymentIntentId && sale.paymentIntentId === null) patch.paymentIntentId = ids.paymentIntentId
  if (Object.keys(patch).length === 0) return sale
  const now = isoAt(clock)
  const linked = (await tx.update('sales', sale.id, { ...patch, updatedAt: now }))!
  const commission = sale.commissionId === null ? null : await tx.get('commissions', sale.commissionId)
  if (commission) {
    const carried: Partial<CommissionRecord> = {}
    if (patch.chargeId && commission.chargeId === null) carried.chargeId = patch.chargeId
    if (patch.paymentIntentId && commission.paymentIntentId === null) carried.paymentIntentId = patch.paymentIntentId
    if (Object.keys(carried).length > 0) {
      await announce(
        tx,
        clock,
        'commission.updated',
        toCommission((await tx.update('commissions', commission.id, { ...carried, updatedAt: now }))!),
      )
    }
  }
  return linked
}

/**
 * How much of a sale `amountRefundedMinor` of its charge refunds. Stripe refunds what it charged,
 * tax included, while the sale holds the amount without tax (`total_excluding_tax`): a refund is
 * the same share of the sale as of the charge (rounded down), and a charge refunded in full
 * refunds the whole sale. Without the charge's amount, the refund is taken as it is, up to the sale.
 */
export function refundedOfSale(saleMinor: number, chargedMinor: number, amountRefundedMinor: number): number {
  if (chargedMinor <= 0) return Math.min(amountRefundedMinor, saleMinor)
  if (amountRefundedMinor >= chargedMinor) return saleMinor
  return Number((BigInt(amountRefundedMinor) * BigInt(saleMinor)) / BigInt(chargedMinor))
}

type Outcome = Pick<ProviderEventRecord, 'status' | 'reason' | 'commissionId'>

/**
 * What a recorded event of the sale's payment says now, when it waited on the sale or found no
 * commission for it; null when it stays as it is. A refund (`refundedMinor` > 0): applied to the
 * commission, or `no_commission`; the sale's own invoice not attributed: the commission made when
 * it was attributed since, or why it made none; an invoice's payment that waited: linked.
 */
function refreshed(sale: SaleRecord, event: ProviderEventRecord, skipped: string | null): Outcome | null {
  const open =
    event.status === 'waiting' || (event.status === 'ignored' && (event.reason === 'no_commission' || event.reason === 'not_attributed'))
  if (!open) return null
  const made = sale.commissionId
  if (event.refundedMinor > 0)
    return made
      ? { status: 'processed', reason: null, commissionId: made }
      : { status: 'ignored', reason: 'no_commission', commissionId: null }
  if (event.reason === 'not_attributed') {
    if (event.invoiceId !== sale.invoiceId) return null
    if (made) return { status: 'processed', reason: null, commissionId: made }
    return skipped && skipped !== 'not_attributed' ? { status: 'ignored', reason: skipped, commissionId: null } : null
  }
  return event.status === 'waiting' ? { status: 'processed', reason: null, commissionId: made } : null
}

/**
 * Applies to `sale` what the recorded events of its payment say, in `tx`: the ids they link to it
 * (a refund naming the payment intent an invoice's payment named), the refunds of its charge (the
 * largest `amount_refunded` seen, as a share of the sale, less what was refunded already: so a
 * refund counts once however often and in whatever order it comes), and the records of those
 * events that waited on the sale or found no commission (see `refreshed`). `skipped`: why the sale
 * made no commission, when it was attributed and made none. Answers the sale as now stored.
 */
export async function settlePayment(tx: EventTransaction, clock: Clock, sale: SaleRecord, skipped: string | null): Promise<SaleRecord> {
  let events = await eventsNaming(tx, sale.workspaceId, sale)
  // An id linked may name more events (and they more ids): until nothing new is linked.
  for (let round = 0; round < ID_FIELDS.length; round++) {
    const ids: PaymentIds = {}
    for (const event of events) {
      if (!isOf(sale, event)) continue
      ids.chargeId ??= event.chargeId
      ids.paymentIntentId ??= event.paymentIntentId
    }
    const linked = await linkSale(tx, clock, sale, ids)
    if (linked === sale) break
    sale = linked
    events = await eventsNaming(tx, sale.workspaceId, sale)
  }
  let best: { minor: number; eventId: string } | null = null
  for (const event of events) {
    if (event.refundedMinor <= 0 || !isOf(sale, event)) continue
    const minor = refundedOfSale(sale.amountMinor, event.chargedMinor, event.refundedMinor)
    if (best === null || minor > best.minor) best = { minor, eventId: event.eventId }
  }
  if (best !== null && best.minor > sale.refundedMinor) {
    const commission = sale.commissionId === null ? null : await tx.get('commissions', sale.commissionId)
    if (commission) await refundSaleIn(tx, clock, sale, commission, best.minor - sale.refundedMinor, best.eventId)
    // A sale that made no commission keeps what was refunded of it: a commission made later (the
    // customer bound since) is taken back by as much at once.
    else await tx.update('sales', sale.id, { refundedMinor: best.minor, updatedAt: isoAt(clock) })
    sale = (await tx.get('sales', sale.id))!
  }
  for (const event of events) {
    if (!isOf(sale, event)) continue
    const next = refreshed(sale, event, skipped)
    if (next && (next.status !== event.status || next.reason !== event.reason || next.commissionId !== event.commissionId)) {
      await tx.update('providerEvents', event.id, { ...next, updatedAt: isoAt(clock) })
    }
  }
  return sale
}
