import { AffiliateError } from '../errors.js'
import {
  guarded,
  ignore,
  invalidSignature,
  isObject,
  malformed,
  MAX_MINOR,
  minor,
  optionalMinor,
  optionalObject,
  optionalText,
  referralOf,
  text,
  type PaymentProvider,
  type ProviderPlan,
} from './contract.js'

// Stripe events (SPEC wave 3, "Payment provider integrations (Stripe)", as corrected by wave 4,
// "Stripe as it sends events today"): verified, then read into what they ask of the conversions, in
// the shapes of every API version (2025-03-31 on: an invoice names no charge, payment intent or
// subscription, a charge no invoice; `invoice_payment.paid` ties a payment to its invoice).
// `src/api/provider-events.ts` records each with its effects.
// The `stripe` package is an optional peer dependency, imported here only, and lazily: a host that
// never receives a Stripe event needs none of it and loads none of it.

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
  new AffiliateError(
    503,
    `Stripe events need the stripe package, which could not be loaded: run \`${STRIPE_INSTALL}\` in the host (an optional peer dependency of affiliate-service). Stripe delivers this event again.`,
    {
      code: 'provider_unavailable',
      cause,
    },
  )

type StripeModule = typeof import('stripe')
let loaded: Promise<StripeModule> | undefined
// A failed import is not kept: once the host installs the package, the next delivery loads it.
export const stripeModule = () =>
  (loaded ??= import('stripe').catch((error: unknown) => {
    loaded = undefined
    throw stripeMissing(error)
  }))

/** A verified Stripe event: only the fields the mapping reads (a signed event may still lack them: see `planStripeEvent`). */
export interface StripeEvent {
  id: string
  type: string
  livemode: boolean
  /** When the event happened, Unix seconds. */
  created?: number
  data?: { object?: unknown }
}

/** Verifies `rawBody` with Stripe's SDK (`constructEventAsync`, Web Crypto: every runtime); a failure is the one 400. */
export async function verifyStripeEvent(rawBody: string, signature: string | null, secret: string, nowMs: number): Promise<StripeEvent> {
  if (!signature) throw invalidSignature()
  const { default: Stripe } = await stripeModule()
  try {
    const event = await Stripe.webhooks.constructEventAsync(
      rawBody,
      signature,
      secret,
      TOLERANCE_SECONDS,
      Stripe.createSubtleCryptoProvider(),
      nowMs,
    )
    return event
  } catch {
    throw invalidSignature()
  }
}

/** A reference to another object: its id, or the expanded object's `id`; null when absent. */
const reference = (value: unknown): string | null =>
  value === undefined || value === null
    ? null
    : typeof value === 'string'
      ? value
      : isObject(value) && typeof value.id === 'string'
        ? value.id
        : malformed()
/** A Unix time in seconds as ISO 8601, or null. */
const optionalTime = (value: unknown): string | null => {
  const seconds = optionalMinor(value)
  return seconds === null ? null : new Date(seconds * 1000).toISOString()
}

/** An invoice's subscription, in the older (`subscription`) or the 2025+ (`parent.subscription_details`) shape. */
export const subscriptionOf = (invoice: Record<string, any>): string | null =>
  reference(invoice.subscription) ?? reference(optionalObject(optionalObject(invoice.parent).subscription_details).subscription)

/** An invoice's payment as far as the invoice names it: `charge` and `payment_intent` (older), or its first payment when `payments` was expanded. */
function paymentOfInvoice(invoice: Record<string, any>): { chargeId: string | null; paymentIntentId: string | null } {
  const first =
    isObject(invoice.payments) && Array.isArray(invoice.payments.data) && isObject(invoice.payments.data[0])
      ? optionalObject(invoice.payments.data[0].payment)
      : {}
  return {
    chargeId: reference(invoice.charge) ?? reference(first.charge),
    paymentIntentId: reference(invoice.payment_intent) ?? reference(first.payment_intent),
  }
}

/** The object type each handled event type carries. */
const OBJECT_OF: Record<string, string> = {
  'checkout.session.completed': 'checkout.session',
  'customer.created': 'customer',
  'customer.updated': 'customer',
  'invoice.paid': 'invoice',
  'invoice_payment.paid': 'invoice_payment',
  'charge.refunded': 'charge',
}

/** The event types the mapping handles (docs/stripe.md lists them for the endpoint's subscription). */
export const HANDLED_EVENT_TYPES = Object.keys(OBJECT_OF)

/** The promotion codes of discounts (each `promotion_code` an id or the expanded object); a discount given only by its id (`di_…`) names none. */
const promotionCodesOf = (discounts: unknown[]): string[] => [
  ...new Set(
    discounts
      .flatMap((discount) => (isObject(discount) ? [reference(discount.promotion_code)] : []))
      .filter((id): id is string => id !== null),
  ),
]

/** A list, or nothing (null, absent); anything else is malformed. */
const optionalList = (value: unknown): unknown[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value : malformed()

function attribution(
  object: Record<string, any>,
  stripeCustomerId: string | null,
  clientReference: string | null,
  email: string | null,
  at: string | null,
  promotionCodes: string[],
): ProviderPlan {
  const metadata = optionalObject(object.metadata)
  const externalId = optionalText(metadata.externalId)
  const knownAs = [...new Set([clientReference, externalId].filter((id): id is string => id !== null))]
  const fromMetadata = referralOf(optionalText(metadata.clickId) ?? optionalText(metadata.referral), 'metadata')
  return {
    kind: 'attribute',
    stripeCustomerId,
    knownAs,
    referral: fromMetadata ?? referralOf(clientReference, 'client_reference_id'),
    externalId: externalId ?? stripeCustomerId,
    email,
    at,
    promotionCodes,
  }
}

function planOf(event: StripeEvent, object: Record<string, any>): ProviderPlan {
  switch (event.type) {
    case 'checkout.session.completed': {
      const email = optionalText(optionalObject(object.customer_details).email) ?? optionalText(object.customer_email)
      // The lead's time is when the checkout was opened: its invoice is paid (and may be delivered) before it completes.
      return attribution(
        object,
        reference(object.customer),
        optionalText(object.client_reference_id),
        email,
        optionalTime(object.created),
        promotionCodesOf(optionalList(object.discounts)),
      )
    }
    case 'customer.created':
      return attribution(
        object,
        text(object.id),
        null,
        optionalText(object.email),
        optionalTime(object.created),
        promotionCodesOf([object.discount]),
      )
    // A referral added to a customer made long ago dates from the update, not from the customer.
    case 'customer.updated':
      return attribution(
        object,
        text(object.id),
        null,
        optionalText(object.email),
        optionalTime(event.created),
        promotionCodesOf([object.discount]),
      )
    case 'invoice.paid': {
      const total = minor(object.total)
      const amountPaid = minor(object.amount_paid)
      const amountMinor = amountPaid === total ? (optionalMinor(object.total_excluding_tax) ?? amountPaid) : amountPaid
      const currency = text(object.currency).toUpperCase()
      if (!/^[A-Z]{3}$/.test(currency) || amountMinor > MAX_MINOR) malformed()
      const invoiceId = text(object.id)
      if (amountMinor === 0) return ignore('zero_amount')
      return {
        kind: 'sale',
        buyer: {
          by: 'stripe_customer',
          stripeCustomerId: reference(object.customer),
          promotionCodes: promotionCodesOf(optionalList(object.discounts)),
          email: optionalText(object.customer_email),
        },
        sale: {
          amountMinor,
          currency,
          invoiceId,
          ...paymentOfInvoice(object),
          subscriptionId: subscriptionOf(object),
          paidAt: optionalTime(optionalObject(object.status_transitions).paid_at),
        },
      }
    }
    case 'invoice_payment.paid': {
      const invoiceId = reference(object.invoice) ?? malformed()
      const payment = isObject(object.payment) ? object.payment : malformed()
      const chargeId = reference(payment.charge)
      const paymentIntentId = reference(payment.payment_intent)
      // A payment recorded outside Stripe (`payment_record`) names no charge a refund could name.
      if (chargeId === null && paymentIntentId === null) return ignore('no_charge')
      return { kind: 'payment', invoiceId, chargeId, paymentIntentId }
    }
    case 'charge.refunded':
      return {
        kind: 'refund',
        chargeId: text(object.id),
        paymentIntentId: reference(object.payment_intent),
        invoiceId: reference(object.invoice),
        stripeCustomerId: reference(object.customer),
        waitsFor: 'bound_customer',
        chargedMinor: minor(object.amount),
        amountRefundedMinor: minor(object.amount_refunded),
      }
    default:
      return ignore('unhandled_type')
  }
}

/**
 * Reads `event` into what it asks for; `livemode` is the integration's (an event of the other mode
 * is ignored). An event without `data.object`, with an object of another type than its type says,
 * or with a field of the wrong shape is `malformed`.
 */
export function planStripeEvent(event: StripeEvent, livemode: boolean): ProviderPlan {
  if (event.livemode !== livemode) return ignore('livemode_mismatch')
  const expected = OBJECT_OF[event.type]
  if (expected === undefined) return ignore('unhandled_type')
  const object: unknown = event.data?.object
  if (!isObject(object) || object.object !== expected) return ignore('malformed')
  return guarded(() => planOf(event, object))
}

/** Stripe on the provider contract: its SDK verifies, the mapping above reads. */
export const stripeProvider: PaymentProvider<StripeEvent> = {
  signatureHeader: 'stripe-signature',
  verify: (rawBody, headers, secret, nowMs) => verifyStripeEvent(rawBody, headers.get('stripe-signature'), secret, nowMs),
  plan: (event, integration) => planStripeEvent(event, integration.livemode),
}
