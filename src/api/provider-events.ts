import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import type { IntegrationRecord, ProviderEventRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import { invalidSignature, decimal, planStripeEvent, verifyStripeEvent, type StripeEvent, type StripePlan } from '../integrations/stripe.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { trusted } from './access.js'
import { conversionSteps, parseLead, parseRefund, parseSale } from './conversions.js'
import { duplicateOf, readOnly, type Deps } from './shared.js'

// The events endpoint of an integration (SPEC wave 3, "Payment provider integrations (Stripe)"):
// each event is recorded once per integration in the same transaction as its effects.

type Outcome = Pick<ProviderEventRecord, 'status' | 'reason' | 'commissionId'>

const ignored = (reason: string, commissionId: string | null = null): Outcome => ({ status: 'ignored', reason, commissionId })
const processed = (commissionId: string | null = null): Outcome => ({ status: 'processed', reason: null, commissionId })
/** An event that cannot be handled yet (a refund before its sale): answered 500, so Stripe delivers it again. */
const failed = (reason: string): Outcome => ({ status: 'failed', reason, commissionId: null })

/**
 * How many times an event's transaction is tried when it breaks a unique constraint: the same
 * event at another instance, or its invoice in another event, committed first. The next try finds
 * that record or sale.
 */
const ATTEMPTS = 3

type Steps = ReturnType<typeof conversionSteps>

/** Carries out `plan` in `tx` through the conversions' own steps: what the event log records. */
async function effectsIn(tx: StorageTransaction, steps: Steps, workspaceId: string, event: StripeEvent, plan: StripePlan): Promise<Outcome> {
  switch (plan.kind) {
    case 'ignore':
      return ignored(plan.reason)
    case 'lead': {
      const { stripeCustomerId, externalId, email, by } = plan
      await steps.leadIn(tx, trusted, parseLead({ workspaceId, externalId, email, stripeCustomerId, ...by }))
      return processed()
    }
    case 'sale': {
      // The invoice again, in another event: recorded, pointing at what the first made, and no second sale.
      const [first] = await tx.find('sales', { where: { workspaceId, invoiceId: plan.sale.invoiceId }, limit: 1 })
      if (first) return ignored('duplicate_invoice', first.commissionId)
      const stripeCustomerId = plan.stripeCustomerId
      const [customer] = stripeCustomerId ? await tx.find('customers', { where: { workspaceId, stripeCustomerId }, limit: 1 }) : []
      if (!customer) return ignored('not_attributed')
      const result = await steps.saleIn(tx, trusted, parseSale({ workspaceId, externalId: customer.externalId, ...plan.sale }))
      return result.commission ? processed(result.commission.commissionId) : ignored(result.skipped ?? 'not_attributed')
    }
    case 'refund': {
      const where = plan.invoiceId ? { workspaceId, invoiceId: plan.invoiceId } : { workspaceId, chargeId: plan.chargeId }
      const [sale] = await tx.find('sales', { where, limit: 1 })
      if (!sale) return failed('charge.refunded before its invoice.paid')
      if (!sale.commissionId) return ignored('no_commission')
      const grown = refundedOfSale(sale.amountMinor, plan.chargedMinor, plan.amountRefundedMinor) - sale.refundedMinor
      if (grown <= 0) return ignored('nothing_refunded')
      await steps.refundIn(tx, trusted, parseRefund({ workspaceId, invoiceId: sale.invoiceId, amount: decimal(grown), refundId: event.id }))
      return processed(sale.commissionId)
    }
  }
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

/**
 * Runs `effects` and records the event with what they answer, in one transaction: an event already
 * recorded (and not `failed`) answers 200 and changes nothing. A collision rolls it all back and
 * it is tried again, up to `ATTEMPTS` times; then it is the operations' 422 (`duplicate`).
 */
async function recordOnce(deps: Deps, integration: IntegrationRecord, event: StripeEvent, effects: (tx: StorageTransaction) => Promise<Outcome>): Promise<number> {
  const { storage, clock } = deps
  for (let attempt = 1; ; attempt++) {
    try {
      return await storage.transaction(async (tx) => {
        const [seen] = await tx.find('providerEvents', { where: { integrationId: integration.id, eventId: event.id }, limit: 1 })
        if (seen && seen.status !== 'failed') return 200
        const now = isoAt(clock)
        const id = seen?.id ?? newId()
        // Written before the effects (its outcome after them): another instance given this event collides here.
        if (!seen) {
          await tx.insert('providerEvents', {
            id, workspaceId: integration.workspaceId, integrationId: integration.id, eventId: event.id, type: event.type,
            ...failed('unfinished'), receivedAt: now, createdAt: now, updatedAt: now,
          })
        }
        const outcome = await effects(tx)
        await tx.update('providerEvents', id, { ...outcome, updatedAt: now })
        return outcome.status === 'failed' ? 500 : 200
      })
    } catch (error) {
      if (!(error instanceof UniqueViolationError)) throw error
      if (attempt >= ATTEMPTS) throw duplicateOf(error)
    }
  }
}

/**
 * Receives one Stripe event for an integration: verifies it, then records it once with its effects
 * (see `recordOnce`). Answers the HTTP status to send: 200, or 500 when Stripe should deliver it again.
 */
export async function receiveStripeEvent(deps: Deps, integrationId: string, rawBody: string, signature: string | null): Promise<number> {
  const { storage, clock } = deps
  const integration = isUuid(integrationId)
    ? await storage.transaction((tx) => tx.get('integrations', integrationId.toLowerCase()), readOnly)
    : null
  if (!integration) {
    // The same work as a known one, so the answer says nothing about whether the id exists.
    await verifyStripeEvent(rawBody, signature, 'whsec_unknown', clock.now()).catch(() => undefined)
    throw invalidSignature()
  }
  const event = await verifyStripeEvent(rawBody, signature, integration.signingSecret, clock.now())
  const plan = planStripeEvent(event, integration.livemode)
  // A click the redirect answered may still wait in its batch: the lead waits for it, outside the transaction.
  if (plan.kind === 'lead' && 'clickId' in plan.by) await deps.clickWritten?.(plan.by.clickId.toLowerCase())
  const steps = conversionSteps(deps)
  try {
    return await recordOnce(deps, integration, event, (tx) => effectsIn(tx, steps, integration.workspaceId, event, plan))
  } catch (error) {
    // A refusal of ours (a click outside its window, an unknown code) would be refused again on each
    // of Stripe's retries: its work is rolled back, and the event recorded ignored with the refusal's code.
    if (error instanceof AffiliateError && error.status < 500) return recordOnce(deps, integration, event, async () => ignored(error.code))
    throw error
  }
}
