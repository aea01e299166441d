import { AffiliateError } from '../errors.js'
import { isUuid } from '../uuid.js'

// The one contract every payment provider implements (SPEC wave 4, "Payment providers beyond
// Stripe: one contract"): verify the raw body (with the service's clock), then read one verified
// event into what it asks of the conversions (a lead, a sale, a refund, or nothing with a reason),
// and name the event's id for the event log's dedupe. `src/api/provider-events.ts` holds the rest,
// once for all: the endpoint, the event log, the answers, the transaction and the redelivery rules.
// A provider is one module (stripe.ts, paddle.ts, lemonsqueezy.ts) and one line in index.ts.

/** The one answer to a bad or missing signature, a stale timestamp and an unknown integration. */
export const invalidSignature = () =>
  new AffiliateError(400, 'Invalid signature: the event is not signed by this integration', { code: 'invalid_signature' })

/** A verified event: its id (unique per integration: a redelivery carries the same) and its type, as the event log keeps them. */
export interface VerifiedEvent {
  id: string
  type: string
}

/** Who a checkout, customer or sale names as having brought it, and where it said so. */
export interface Referral {
  by: { clickId: string } | { referralCode: string } | { promoCode: string }
  /** Stripe's `client_reference_id` may as well be the host's own id for its user: naming no click or code there is no refusal. */
  from: 'client_reference_id' | 'metadata' | 'custom_data' | 'discount'
}

/** A sale's facts, money in minor units (straight into the sales step, never through a decimal string). */
export interface SaleFacts {
  amountMinor: number
  /** ISO 4217, upper case. */
  currency: string
  invoiceId: string
  chargeId: string | null
  paymentIntentId: string | null
  subscriptionId: string | null
  /** ISO 8601; null: now. */
  paidAt: string | null
}

/**
 * Who bought, as a provider names its buyer: a Stripe customer (bound to a customer by a checkout
 * or a lead), or the ids and custom data a Paddle or Lemon Squeezy event carries.
 */
export type Buyer =
  | {
      by: 'stripe_customer'
      stripeCustomerId: string | null
      /** The Stripe promotion codes (`promo_…`) of the invoice's discounts given as objects: one of a promo code makes the lead of an unbound customer. */
      promotionCodes: string[]
      /** The invoice's `customer_email`: that lead's e-mail. */
      email: string | null
    }
  | {
      by: 'custom_data'
      /** The `externalId`s a known customer may have: the host's own (custom data), then the provider's customer id. */
      knownAs: string[]
      /** A new customer's `externalId`: the host's own id when the custom data names it, else the provider's customer id. */
      externalId: string
      email: string | null
      referral: Referral | null
    }

/**
 * What one event asks of the conversions, read from the event alone (the records it needs are
 * looked up where it is carried out). Money in minor units.
 */
export type ProviderPlan =
  | { kind: 'ignore'; reason: string }
  /** Stripe: a customer to attribute (bind a known one to the Stripe customer, or make a lead). */
  | {
      kind: 'attribute'
      stripeCustomerId: string | null
      /** The `externalId`s the event names (`client_reference_id`, `metadata.externalId`): a known customer among them is bound. */
      knownAs: string[]
      referral: Referral | null
      /** A new lead's `externalId`: `metadata.externalId`, else the Stripe customer id. */
      externalId: string | null
      email: string | null
      /** When the checkout was opened or the customer made (ISO): the lead's time, when before now. */
      at: string | null
      /** The Stripe promotion codes (`promo_…`) of the checkout's `discounts` or the customer's `discount`: one of a promo code makes the lead when nothing else names who brought it. */
      promotionCodes: string[]
    }
  /** A lead from a provider's customer and its custom data (Paddle's `customer.created|updated`). */
  | { kind: 'lead'; knownAs: string[]; externalId: string; email: string | null; referral: Referral | null; at: string | null }
  | { kind: 'sale'; buyer: Buyer; sale: SaleFacts }
  /** Stripe's `invoice_payment.paid`: the payment that settled an invoice. */
  | { kind: 'payment'; invoiceId: string; chargeId: string | null; paymentIntentId: string | null }
  /**
   * A refund told as how much of a payment is refunded so far (Stripe's `amount_refunded`, Lemon
   * Squeezy's `refunded_amount`): the largest seen counts, so the events may come in any order.
   */
  | {
      kind: 'refund'
      chargeId: string | null
      paymentIntentId: string | null
      invoiceId: string | null
      /** Stripe: a refund of no known sale waits only while its Stripe customer is bound (its sale may still come). */
      stripeCustomerId: string | null
      /** `sale`: the payment's sale always comes (every paid order makes one): a refund before it waits for it. */
      waitsFor: 'bound_customer' | 'sale'
      /** What the payment took (tax included) and how much of it is refunded so far, in minor units. */
      chargedMinor: number
      amountRefundedMinor: number
    }
  /** A refund told as one part of its own (Paddle's approved refund adjustment): counted once by `refundId`. */
  | { kind: 'refund_part'; invoiceId: string; refundId: string; amountMinor: number }

/** The payment an event's plan concerns, as its record in the event log keeps it (nothing for the others). */
export interface PaymentFacts {
  invoiceId: string | null
  chargeId: string | null
  paymentIntentId: string | null
  chargedMinor: number
  refundedMinor: number
}

export function paymentOf(plan: ProviderPlan): PaymentFacts {
  const none = { invoiceId: null, chargeId: null, paymentIntentId: null, chargedMinor: 0, refundedMinor: 0 }
  switch (plan.kind) {
    case 'sale':
      return { ...none, invoiceId: plan.sale.invoiceId, chargeId: plan.sale.chargeId, paymentIntentId: plan.sale.paymentIntentId }
    case 'payment':
      return { ...none, invoiceId: plan.invoiceId, chargeId: plan.chargeId, paymentIntentId: plan.paymentIntentId }
    case 'refund':
      return {
        invoiceId: plan.invoiceId,
        chargeId: plan.chargeId,
        paymentIntentId: plan.paymentIntentId,
        chargedMinor: plan.chargedMinor,
        refundedMinor: plan.amountRefundedMinor,
      }
    default:
      // A refund part is applied at once or not at all: its record names no payment a later sale would apply it from.
      return none
  }
}

/** The integration as a provider's mapping reads it. */
export interface IntegrationView {
  livemode: boolean
}

/** A payment provider: one module implementing this, listed in `PROVIDERS` (index.ts). */
export interface PaymentProvider<E extends VerifiedEvent = VerifiedEvent> {
  /** The request header carrying the signature: the endpoint picks the provider doing the same work for an unknown integration by it. */
  readonly signatureHeader: string
  /**
   * Verifies `rawBody` with the integration's `secret` at the service clock's `nowMs`: the event,
   * or the one `invalidSignature()` for every bad case (missing, malformed, stale, wrong, tampered).
   */
  verify(rawBody: string, headers: Headers, secret: string, nowMs: number): Promise<E>
  /** Reads a verified event into its plan; a signed event of the wrong shape is `ignore`, `malformed`. */
  plan(event: E, integration: IntegrationView): ProviderPlan
}

// Reading a signed event's fields: a field of the wrong shape makes the event `malformed`.

/** A signed event whose object is not the shape its type says: recorded `malformed`, a retry cannot help. */
export class Malformed extends Error {}
export const malformed = (): never => {
  throw new Malformed('malformed')
}
export const ignore = (reason: string): ProviderPlan => ({ kind: 'ignore', reason })

/** Runs a mapping, answering `malformed` for a field of the wrong shape. */
export function guarded(read: () => ProviderPlan): ProviderPlan {
  try {
    return read()
  } catch (error) {
    if (error instanceof Malformed) return ignore('malformed')
    throw error
  }
}

export const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
/** A non-empty string, or malformed. */
export const text = (value: unknown): string => (typeof value === 'string' && value !== '' ? value : malformed())
/** A string or nothing (null, absent, empty). */
export const optionalText = (value: unknown): string | null =>
  value === undefined || value === null || value === '' ? null : typeof value === 'string' ? value : malformed()
/** Minor units: a whole number, zero or more. */
export const minor = (value: unknown): number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : malformed()
export const optionalMinor = (value: unknown): number | null => (value === undefined || value === null ? null : minor(value))
/** Minor units written as a string of digits (Paddle's totals). */
export const minorString = (value: unknown): number => (typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : malformed())
export const optionalObject = (value: unknown): Record<string, any> =>
  value === undefined || value === null ? {} : isObject(value) ? value : malformed()
/** An RFC 3339 time as ISO 8601 (UTC), or null. */
export const optionalIsoTime = (value: unknown): string | null => {
  const written = optionalText(value)
  if (written === null) return null
  const ms = Date.parse(written)
  return Number.isNaN(ms) ? malformed() : new Date(ms).toISOString()
}
/** An ISO 4217 code, upper-cased. */
export const currencyOf = (value: unknown): string => {
  const currency = text(value).toUpperCase()
  return /^[A-Z]{3}$/.test(currency) ? currency : malformed()
}

/** What an amount is at most: Stripe's own limit on one (a billion), in cents; any provider's above it is malformed. */
export const MAX_MINOR = 100_000_000_000

const REFERRAL_CODE = /^[A-Za-z0-9_-]{3,64}$/
/** A promo code as the customer may type it (any case; stored upper-case). */
const PROMO_CODE = /^[A-Za-z0-9_-]{3,40}$/

/** A value naming a click (a UUID) or a referral code; null when it can be neither. */
export const referralOf = (value: string | null, from: Referral['from']): Referral | null =>
  value === null
    ? null
    : isUuid(value)
      ? { by: { clickId: value }, from }
      : REFERRAL_CODE.test(value)
        ? { by: { referralCode: value }, from }
        : null

/**
 * The attribution a provider's custom data carries (Paddle's `custom_data`, Lemon Squeezy's
 * `meta.custom_data`): `clickId`, or `referral` (a clickId or referral code), or `promoCode` (the
 * discount code the customer used: neither provider's payload names the code itself), and the
 * host's own `externalId` of its user. Values of another type than a string are left out, not refused: the
 * custom data is the host's, and holds whatever else it keeps there.
 */
export function customAttribution(customData: unknown): { externalId: string | null; referral: Referral | null } {
  const data = isObject(customData) ? customData : {}
  const textOf = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null)
  const externalId = textOf(data.externalId)
  const promoCode = textOf(data.promoCode)
  return {
    externalId: externalId !== null && externalId.length <= 255 ? externalId : null,
    referral:
      referralOf(textOf(data.clickId) ?? textOf(data.referral), 'custom_data') ??
      (promoCode !== null && PROMO_CODE.test(promoCode) ? { by: { promoCode }, from: 'custom_data' } : null),
  }
}

// Verifying an HMAC-SHA256 signature with Web Crypto (every runtime): `crypto.subtle.verify`
// compares in constant time, inside the platform's own implementation.

const encoder = new TextEncoder()

/** Lower- or upper-case hex as bytes; null when it is not hex of `length` bytes. */
export function hexBytes(hex: string, length: number): Uint8Array<ArrayBuffer> | null {
  if (hex.length !== length * 2 || !/^[0-9a-fA-F]+$/.test(hex)) return null
  const bytes = new Uint8Array(length)
  for (let i = 0; i < length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return bytes
}

/** The HMAC-SHA256 key of `secret` (its UTF-8 bytes), for `verifyHmac`. */
export const hmacKey = (secret: string): Promise<CryptoKey> =>
  crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])

/** Whether `signatureHex` is the HMAC-SHA256 of `message` under `key`: constant time (Web Crypto's `verify`). */
export async function verifyHmac(key: CryptoKey, signatureHex: string, message: string): Promise<boolean> {
  const signature = hexBytes(signatureHex, 32)
  if (signature === null) return false
  return crypto.subtle.verify('HMAC', key, signature, encoder.encode(message))
}

/** A verified event with its mapping bound: what the endpoint works with, whichever the provider. */
export interface OpenedEvent {
  event: VerifiedEvent
  plan(integration: IntegrationView): ProviderPlan
}

/** A provider as the endpoint holds it: its event type hidden behind `open` (verify, then the mapping bound to the event). */
export interface ConnectedProvider {
  readonly signatureHeader: string
  open(rawBody: string, headers: Headers, secret: string, nowMs: number): Promise<OpenedEvent>
}

export const connect = <E extends VerifiedEvent>(provider: PaymentProvider<E>): ConnectedProvider => ({
  signatureHeader: provider.signatureHeader,
  async open(rawBody, headers, secret, nowMs) {
    const event = await provider.verify(rawBody, headers, secret, nowMs)
    return { event, plan: (integration) => provider.plan(event, integration) }
  },
})
