import {
  customAttribution,
  currencyOf,
  guarded,
  hmacKey,
  ignore,
  invalidSignature,
  isObject,
  malformed,
  MAX_MINOR,
  minor,
  optionalIsoTime,
  optionalObject,
  optionalText,
  text,
  verifyHmac,
  type IntegrationView,
  type PaymentProvider,
  type ProviderPlan,
  type VerifiedEvent,
} from './contract.js'

// Lemon Squeezy on the provider contract (SPEC wave 4, "Payment providers beyond Stripe: one
// contract"): `X-Signature` is the hex HMAC-SHA256 of the raw body under the webhook's signing
// secret, checked in constant time by Web Crypto (Lemon Squeezy's SDK offers no verifier). Its
// webhooks carry no event id and no time in the signature: an event is known again by its name,
// its object's id and the object's `updated_at`, which a redelivery repeats.

/** A verified Lemon Squeezy webhook: the fields the mapping reads (a signed one may still lack them). */
export interface LemonSqueezyEvent extends VerifiedEvent {
  meta: Record<string, any>
  data: unknown
}

/** Verifies `X-Signature` over the raw body; every failure is the one 400. */
export async function verifyLemonSqueezyEvent(rawBody: string, signature: string | null, secret: string): Promise<LemonSqueezyEvent> {
  if (signature === null || !(await verifyHmac(await hmacKey(secret), signature.trim(), rawBody))) throw invalidSignature()
  let body: unknown
  try {
    body = JSON.parse(rawBody)
  } catch {
    throw invalidSignature()
  }
  const event = isObject(body) ? body : {}
  const meta = isObject(event.meta) ? event.meta : {}
  const data = isObject(event.data) ? event.data : {}
  const attributes = isObject(data.attributes) ? data.attributes : {}
  const type = typeof meta.event_name === 'string' ? meta.event_name : ''
  const parts = [type, data.id, attributes.updated_at]
  return {
    // No event id exists: the event's name, its object's id and the object's `updated_at` (SPEC); '' when one is missing (then `malformed`).
    id: parts.every((part) => typeof part === 'string' && part !== '') ? parts.join(':') : '',
    type,
    meta,
    data: event.data,
  }
}

/** The event types the mapping reads (docs/lemonsqueezy.md lists them for the webhook). */
export const LEMON_SQUEEZY_EVENT_TYPES = [
  'order_created',
  'order_refunded',
  'subscription_payment_success',
  'subscription_payment_refunded',
] as const

/** The object type each handled event carries. */
const OBJECT_OF: Record<(typeof LEMON_SQUEEZY_EVENT_TYPES)[number], string> = {
  order_created: 'orders',
  order_refunded: 'orders',
  subscription_payment_success: 'subscription-invoices',
  subscription_payment_refunded: 'subscription-invoices',
}

/** Lemon Squeezy's ids are numbers per kind, so a sale's invoice id and a customer's id say which kind. */
export const orderInvoiceId = (id: string): string => `lsq_order_${id}`
export const subscriptionInvoiceId = (id: string): string => `lsq_invoice_${id}`
export const customerKey = (id: number | string): string => `lsq_customer_${id}`

/** What a paid order or subscription invoice asks: the sale, tax left out, after discounts. */
function saleOf(event: LemonSqueezyEvent, attributes: Record<string, any>, invoiceId: string, subscriptionId: string | null): ProviderPlan {
  const total = minor(attributes.total)
  const tax = minor(attributes.tax)
  if (tax > total || total - tax > MAX_MINOR) malformed()
  const currency = currencyOf(attributes.currency)
  if (total - tax === 0) return ignore('zero_amount')
  const custom = customAttribution(event.meta.custom_data)
  const lsCustomer =
    attributes.customer_id === undefined || attributes.customer_id === null ? null : customerKey(minor(attributes.customer_id))
  const knownAs = [custom.externalId, lsCustomer].filter((key): key is string => key !== null)
  return {
    kind: 'sale',
    buyer: {
      by: 'custom_data',
      knownAs,
      externalId: knownAs[0] ?? invoiceId,
      email: optionalText(attributes.user_email),
      referral: custom.referral,
    },
    sale: {
      amountMinor: total - tax,
      currency,
      invoiceId,
      chargeId: null,
      paymentIntentId: null,
      subscriptionId,
      paidAt: optionalIsoTime(attributes.created_at),
    },
  }
}

/** A refund told by how much of the order or invoice is refunded so far: the largest seen counts. */
function refundOf(attributes: Record<string, any>, invoiceId: string): ProviderPlan {
  return {
    kind: 'refund',
    chargeId: null,
    paymentIntentId: null,
    invoiceId,
    stripeCustomerId: null,
    // Every paid order (and renewal) makes its sale: a refund that comes first waits for it.
    waitsFor: 'sale',
    chargedMinor: minor(attributes.total),
    amountRefundedMinor: minor(attributes.refunded_amount),
  }
}

function planOf(event: LemonSqueezyEvent, data: Record<string, any>): ProviderPlan {
  const id = text(data.id)
  const attributes = optionalObject(data.attributes)
  switch (event.type) {
    case 'order_created':
      if (attributes.status !== 'paid') return ignore('not_paid')
      return saleOf(event, attributes, orderInvoiceId(id), null)
    case 'order_refunded':
      return refundOf(attributes, orderInvoiceId(id))
    case 'subscription_payment_success': {
      // The first payment of a subscription is its order too (order_created): that is the sale.
      if (attributes.billing_reason === 'initial') return ignore('initial_payment')
      if (attributes.status !== 'paid') return ignore('not_paid')
      return saleOf(event, attributes, subscriptionInvoiceId(id), String(minor(attributes.subscription_id)))
    }
    case 'subscription_payment_refunded':
      // The first payment's sale is its order's: the order's own refund (order_refunded) takes it back.
      if (attributes.billing_reason === 'initial') return ignore('initial_payment')
      return refundOf(attributes, subscriptionInvoiceId(id))
    default:
      return ignore('unhandled_type')
  }
}

/**
 * Reads a verified webhook into what it asks for. A webhook of the other mode than the
 * integration's (`meta.test_mode`, else the object's `test_mode`) is ignored.
 */
export function planLemonSqueezyEvent(event: LemonSqueezyEvent, integration: IntegrationView): ProviderPlan {
  const expected = OBJECT_OF[event.type as keyof typeof OBJECT_OF]
  if (expected === undefined) return ignore('unhandled_type')
  const data = event.data
  if (event.id === '' || !isObject(data) || data.type !== expected) return ignore('malformed')
  const testMode =
    typeof event.meta.test_mode === 'boolean' ? event.meta.test_mode : isObject(data.attributes) ? data.attributes.test_mode : undefined
  if (typeof testMode === 'boolean' && testMode === integration.livemode) return ignore('livemode_mismatch')
  return guarded(() => planOf(event, data))
}

export const lemonSqueezyProvider: PaymentProvider<LemonSqueezyEvent> = {
  signatureHeader: 'x-signature',
  verify: (rawBody, headers, secret) => verifyLemonSqueezyEvent(rawBody, headers.get('x-signature'), secret),
  plan: planLemonSqueezyEvent,
}
