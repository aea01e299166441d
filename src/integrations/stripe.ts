import { AffiliateError } from '../errors.js'
import { isUuid } from '../uuid.js'

// Stripe events (SPEC wave 3, "Payment provider integrations (Stripe)"): verified, then read into
// what they ask of the conversions. `src/api/provider-events.ts` records each with its effects.
// The `stripe` package is an optional peer dependency, imported here only, and lazily: a host that
// never receives a Stripe event needs none of it and loads none of it.

/** The one answer to a bad or missing signature, a stale timestamp and an unknown integration. */
export const invalidSignature = () => new AffiliateError(400, 'Invalid signature: the event is not signed by this integration', { code: 'invalid_signature' })

/** Stripe's tolerance for a signature's timestamp, in seconds. */
export const TOLERANCE_SECONDS = 300

/** The command that installs the SDK, as the errors below say it. */
export const STRIPE_INSTALL = 'npm install stripe'

/**
 * The `stripe` package could not be loaded (not installed, most likely). Answered 503
 * `provider_unavailable`, which Stripe retries for days, so no event is lost while the host
 * installs it; reported to `onError` (as every 5xx) with the cause.
 */
export const stripeMissing = (cause: unknown) =>
  new AffiliateError(503, `Stripe events need the stripe package, which could not be loaded: run \`${STRIPE_INSTALL}\` in the host (an optional peer dependency of affiliate-service). Stripe delivers this event again.`, {
    code: 'provider_unavailable',
    cause,
  })

type StripeModule = typeof import('stripe')
let loaded: Promise<StripeModule> | undefined
// A failed import is not kept: once the host installs the package, the next delivery loads it.
const stripeModule = () =>
  (loaded ??= import('stripe').catch((error: unknown) => {
    loaded = undefined
    throw stripeMissing(error)
  }))

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

const idOf = (value: unknown): string | null => (typeof value === 'string' ? value : value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string' ? (value as { id: string }).id : null)

/** An invoice's subscription, in the older (`subscription`) or the 2025+ (`parent.subscription_details`) shape. */
export const subscriptionOf = (invoice: Record<string, any>): string | null =>
  idOf(invoice.subscription) ?? idOf(invoice.parent?.subscription_details?.subscription)

/** An invoice's charge: `charge` (older), or the first payment's charge (2025+ `payments`). */
export const chargeOf = (invoice: Record<string, any>): string | null =>
  idOf(invoice.charge) ?? idOf(invoice.payments?.data?.[0]?.payment?.charge)

/** Major units as the API's decimal string, from Stripe's minor units. */
export const decimal = (minor: number): string => (minor / 100).toFixed(2)

/**
 * What one event asks of the conversions, read from the event alone (the records it needs are
 * looked up where it is carried out): a lead, a sale of a Stripe customer, a refund of a charge's
 * sale by `amount_refunded`, or nothing (with the reason the event log records).
 */
export type StripePlan =
  | { kind: 'ignore'; reason: string }
  | { kind: 'lead'; stripeCustomerId: string; externalId: string; email: string; by: { clickId: string } | { referralCode: string } }
  | {
      kind: 'sale'
      stripeCustomerId: string | null
      sale: { amount: string; currency: string; invoiceId: string; chargeId?: string; subscriptionId?: string; paidAt?: string }
    }
  | {
      kind: 'refund'
      chargeId: string
      invoiceId: string | null
      /** What the charge took (tax included) and how much of it is refunded so far, in minor units. */
      chargedMinor: number
      amountRefundedMinor: number
    }

const ignore = (reason: string): StripePlan => ({ kind: 'ignore', reason })

function referralLead(customerId: string | null, referral: unknown, email: unknown, externalId: unknown): StripePlan {
  if (!customerId || typeof referral !== 'string' || !referral) return ignore('not_attributed')
  if (typeof email !== 'string' || !email) return ignore('missing_email')
  const by = isUuid(referral) ? { clickId: referral } : { referralCode: referral }
  return { kind: 'lead', stripeCustomerId: customerId, externalId: typeof externalId === 'string' && externalId ? externalId : customerId, email, by }
}

/** Reads `event` into what it asks for; `livemode` is the integration's (an event of the other mode is ignored). */
export function planStripeEvent(event: StripeEvent, livemode: boolean): StripePlan {
  if (event.livemode !== livemode) return ignore('livemode_mismatch')
  const object = event.data.object
  switch (event.type) {
    case 'checkout.session.completed':
      return referralLead(
        idOf(object.customer),
        object.client_reference_id ?? object.metadata?.clickId ?? object.metadata?.referral,
        object.customer_details?.email,
        object.metadata?.externalId,
      )
    case 'customer.created':
    case 'customer.updated':
      return referralLead(idOf(object.id), object.metadata?.referral, object.email, object.metadata?.externalId)
    case 'invoice.paid': {
      const amount = object.amount_paid === object.total ? object.total_excluding_tax ?? object.amount_paid : object.amount_paid
      if (!amount) return ignore('zero_amount')
      const chargeId = chargeOf(object)
      const subscriptionId = subscriptionOf(object)
      const paidAt = object.status_transitions?.paid_at
      return {
        kind: 'sale',
        stripeCustomerId: idOf(object.customer),
        sale: {
          amount: decimal(amount),
          currency: String(object.currency).toUpperCase(),
          invoiceId: object.id,
          ...(chargeId ? { chargeId } : {}),
          ...(subscriptionId ? { subscriptionId } : {}),
          ...(paidAt ? { paidAt: new Date(paidAt * 1000).toISOString() } : {}),
        },
      }
    }
    case 'charge.refunded':
      return { kind: 'refund', chargeId: object.id, invoiceId: idOf(object.invoice), chargedMinor: Number(object.amount ?? 0), amountRefundedMinor: Number(object.amount_refunded ?? 0) }
    default:
      return ignore('unhandled_type')
  }
}
