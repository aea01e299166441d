import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import type { IntegrationRecord, ProviderEventRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import { trusted } from '../api/access.js'
import type { createOperations } from '../api/index.js'
import { UniqueViolationError, type Storage } from '../storage/types.js'

// The Stripe events endpoint (SPEC wave 3, "Payment provider integrations (Stripe)"). The `stripe`
// package is imported here only, and lazily: a host that never receives a Stripe event loads none of it.

type Operations = ReturnType<typeof createOperations>

/** The one answer to a bad or missing signature, a stale timestamp and an unknown integration. */
export const invalidSignature = () => new AffiliateError(400, 'Invalid signature: the event is not signed by this integration', { code: 'invalid_signature' })

/** Stripe's tolerance for a signature's timestamp, in seconds. */
export const TOLERANCE_SECONDS = 300

type StripeModule = typeof import('stripe')
let loaded: Promise<StripeModule> | undefined
const stripeModule = () => (loaded ??= import('stripe'))

/** A verified Stripe event: only the fields the mapping reads. */
export interface StripeEvent {
  id: string
  type: string
  livemode: boolean
  data: { object: Record<string, any> }
}

/** Verifies `rawBody` with Stripe's SDK (`constructEventAsync`, Web Crypto: every runtime); a failure is the one 400. */
export async function verifyStripeEvent(rawBody: string, signature: string | null, secret: string, nowMs: number): Promise<StripeEvent> {
  if (!signature) throw invalidSignature()
  const { default: Stripe } = await stripeModule()
  try {
    const event = await Stripe.webhooks.constructEventAsync(rawBody, signature, secret, TOLERANCE_SECONDS, Stripe.createSubtleCryptoProvider(), nowMs)
    return event as unknown as StripeEvent
  } catch {
    throw invalidSignature()
  }
}

type Outcome = Pick<ProviderEventRecord, 'status' | 'reason' | 'commissionId'>

const ignored = (reason: string): Outcome => ({ status: 'ignored', reason, commissionId: null })
const processed = (commissionId: string | null = null): Outcome => ({ status: 'processed', reason: null, commissionId })

/** Thrown when an event cannot be handled yet (a refund before its sale): recorded `failed`, answered 500 once. */
class NotYet extends Error {}

const idOf = (value: unknown): string | null => (typeof value === 'string' ? value : value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string' ? (value as { id: string }).id : null)

/** An invoice's subscription, in the older (`subscription`) or the 2025+ (`parent.subscription_details`) shape. */
export const subscriptionOf = (invoice: Record<string, any>): string | null =>
  idOf(invoice.subscription) ?? idOf(invoice.parent?.subscription_details?.subscription)

/** An invoice's charge: `charge` (older), or the first payment's charge (2025+ `payments`). */
export const chargeOf = (invoice: Record<string, any>): string | null =>
  idOf(invoice.charge) ?? idOf(invoice.payments?.data?.[0]?.payment?.charge)

/** Major units as the API's decimal string, from Stripe's minor units. */
const decimal = (minor: number): string => (minor / 100).toFixed(2)

/** Maps one verified event to the conversions operations: what the event log records. */
async function handle(ops: Operations, storage: Storage, integration: IntegrationRecord, event: StripeEvent): Promise<Outcome> {
  const object = event.data.object
  const workspaceId = integration.workspaceId
  const referralLead = async (customerId: string | null, referral: string | undefined, email: string | null, externalId: string | null) => {
    if (!customerId || !referral) return ignored('not_attributed')
    if (!email) return ignored('missing_email')
    const by = /^[0-9a-f-]{36}$/i.test(referral) ? { clickId: referral } : { referralCode: referral }
    await ops.conversions.lead(trusted, { workspaceId, externalId: externalId ?? customerId, email, stripeCustomerId: customerId, ...by })
    return processed()
  }
  switch (event.type) {
    case 'checkout.session.completed':
      return referralLead(
        idOf(object.customer),
        object.client_reference_id ?? object.metadata?.clickId ?? object.metadata?.referral,
        object.customer_details?.email ?? null,
        object.metadata?.externalId ?? null,
      )
    case 'customer.created':
    case 'customer.updated':
      return referralLead(idOf(object.id), object.metadata?.referral, object.email ?? null, object.metadata?.externalId ?? null)
    case 'invoice.paid': {
      const amount = object.amount_paid === object.total ? object.total_excluding_tax ?? object.amount_paid : object.amount_paid
      if (!amount) return ignored('zero_amount')
      const stripeCustomerId = idOf(object.customer)
      const customer = stripeCustomerId
        ? (await storage.transaction((tx) => tx.find('customers', { where: { workspaceId, stripeCustomerId }, limit: 1 }), { readOnly: true }))[0]
        : undefined
      if (!customer) return ignored('not_attributed')
      const result = await ops.conversions.sale(trusted, {
        workspaceId,
        externalId: customer.externalId,
        amount: decimal(amount),
        currency: String(object.currency).toUpperCase(),
        invoiceId: object.id,
        ...(chargeOf(object) ? { chargeId: chargeOf(object) } : {}),
        ...(subscriptionOf(object) ? { subscriptionId: subscriptionOf(object) } : {}),
        ...(object.status_transitions?.paid_at ? { paidAt: new Date(object.status_transitions.paid_at * 1000).toISOString() } : {}),
      })
      return result.commission ? processed(result.commission.commissionId) : ignored(result.skipped ?? 'not_attributed')
    }
    case 'charge.refunded': {
      const chargeId = object.id as string
      const invoiceId = idOf(object.invoice)
      const where = invoiceId ? { workspaceId, invoiceId } : { workspaceId, chargeId }
      const [sale] = await storage.transaction((tx) => tx.find('sales', { where, limit: 1 }), { readOnly: true })
      if (!sale) throw new NotYet('charge.refunded before its invoice.paid')
      if (!sale.commissionId) return ignored('no_commission')
      const grown = Number(object.amount_refunded ?? 0) - sale.refundedMinor
      if (grown <= 0) return ignored('nothing_refunded')
      await ops.conversions.refund(trusted, { workspaceId, invoiceId: sale.invoiceId, amount: decimal(grown), refundId: `${event.id}` })
      return processed(sale.commissionId)
    }
    default:
      return ignored('unhandled_type')
  }
}

export interface StripeEndpointDeps {
  storage: Storage
  clock: Clock
  operations: Operations
}

/**
 * Receives one Stripe event for an integration: verifies it, then records it once (a redelivery
 * answers 200 and changes nothing) with what it made. Answers the HTTP status to send.
 */
export async function receiveStripeEvent(deps: StripeEndpointDeps, integrationId: string, rawBody: string, signature: string | null): Promise<number> {
  const { storage, clock, operations } = deps
  const integration = /^[0-9a-f-]{36}$/i.test(integrationId)
    ? await storage.transaction((tx) => tx.get('integrations', integrationId.toLowerCase()), { readOnly: true })
    : null
  if (!integration) {
    // The same work as a known one, so the answer says nothing about whether the id exists.
    await verifyStripeEvent(rawBody, signature, 'whsec_unknown', clock.now()).catch(() => undefined)
    throw invalidSignature()
  }
  const event = await verifyStripeEvent(rawBody, signature, integration.signingSecret, clock.now())
  const [seen] = await storage.transaction((tx) => tx.find('providerEvents', { where: { integrationId: integration.id, eventId: event.id }, limit: 1 }), { readOnly: true })
  if (seen && seen.status !== 'failed') return 200
  let outcome: Outcome
  let status = 200
  try {
    outcome = event.livemode !== integration.livemode ? ignored('livemode_mismatch') : await handle(operations, storage, integration, event)
  } catch (error) {
    if (!(error instanceof NotYet) || seen) throw error
    outcome = { status: 'failed', reason: error.message, commissionId: null }
    status = 500
  }
  const now = isoAt(clock)
  try {
    await storage.transaction(async (tx) => {
      if (seen) {
        await tx.update('providerEvents', seen.id, { ...outcome, updatedAt: now })
        return
      }
      await tx.insert('providerEvents', {
        id: newId(), workspaceId: integration.workspaceId, integrationId: integration.id, eventId: event.id, type: event.type,
        ...outcome, receivedAt: now, createdAt: now, updatedAt: now,
      })
    })
  } catch (error) {
    // Another instance recorded it first: its effects are the ones (the operations are idempotent on invoice and refund ids).
    if (!(error instanceof UniqueViolationError)) throw error
  }
  return status
}
