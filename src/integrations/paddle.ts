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
  minorString,
  optionalIsoTime,
  optionalObject,
  optionalText,
  text,
  verifyHmac,
  type PaymentProvider,
  type ProviderPlan,
  type VerifiedEvent,
} from './contract.js'

// Paddle Billing on the provider contract (SPEC wave 4, "Payment providers beyond Stripe: one
// contract"). Verified here with Web Crypto rather than the SDK's `webhooks.unmarshal`, which keeps
// only the last `h1` of the header (a secret rotation's other signature fails), measures its 5 s
// tolerance by the machine's clock (not the service's), and compares with `===` (docs/decisions.md).

/** Paddle's tolerance for the signature's `ts`, in seconds, either way of the service clock. */
export const PADDLE_TOLERANCE_SECONDS = 300

/** At most this many `h1` signatures are tried: Paddle sends two during a rotation; a header with dozens is no Paddle's. */
const MAX_SIGNATURES = 8

/** A verified Paddle notification: the fields the mapping reads (a signed one may still lack them). */
export interface PaddleEvent extends VerifiedEvent {
  data: unknown
  /** When the event happened (RFC 3339), as Paddle's `occurred_at` says. */
  occurredAt: unknown
}

/** `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>…]`: its time and signatures; null when it is not of that form. */
export function parsePaddleSignature(header: string): { ts: number; h1: string[] } | null {
  let ts: number | null = null
  const h1: string[] = []
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at < 0) return null
    const name = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    if (name === 'ts') {
      if (ts !== null || !/^\d{1,12}$/.test(value)) return null
      ts = Number(value)
    } else if (name === 'h1') h1.push(value)
  }
  return ts === null || h1.length === 0 || h1.length > MAX_SIGNATURES ? null : { ts, h1 }
}

/**
 * Verifies a Paddle notification: HMAC-SHA256 of `<ts>:<raw body>` under the notification secret,
 * any of the header's `h1` (several during a secret rotation), each compared in constant time by
 * Web Crypto; `ts` within 300 s of the service clock's `nowMs`. Every failure is the one 400.
 */
export async function verifyPaddleEvent(rawBody: string, header: string | null, secret: string, nowMs: number): Promise<PaddleEvent> {
  const signature = header === null ? null : parsePaddleSignature(header)
  if (signature === null || Math.abs(nowMs / 1000 - signature.ts) > PADDLE_TOLERANCE_SECONDS) throw invalidSignature()
  const key = await hmacKey(secret)
  const message = `${signature.ts}:${rawBody}`
  // Every signature is checked (no early exit): the work does not depend on which one matched.
  const matches = await Promise.all(signature.h1.map((h1) => verifyHmac(key, h1, message)))
  if (!matches.includes(true)) throw invalidSignature()
  let body: unknown
  try {
    body = JSON.parse(rawBody)
  } catch {
    throw invalidSignature()
  }
  const event = isObject(body) ? body : {}
  return {
    id: typeof event.event_id === 'string' ? event.event_id : '',
    type: typeof event.event_type === 'string' ? event.event_type : '',
    data: event.data,
    occurredAt: event.occurred_at,
  }
}

/** The event types the mapping reads (docs/paddle.md lists them for the notification destination). */
export const PADDLE_EVENT_TYPES = [
  'transaction.completed',
  'adjustment.created',
  'adjustment.updated',
  'customer.created',
  'customer.updated',
] as const

/** The ids a known customer may have, the host's own first; the new customer's `externalId`. */
function customerIds(hostId: string | null, paddleCustomerId: string | null, fallback: string): { knownAs: string[]; externalId: string } {
  const knownAs = [hostId, paddleCustomerId].filter((id): id is string => id !== null)
  return { knownAs, externalId: knownAs[0] ?? fallback }
}

function planOf(event: PaddleEvent, data: Record<string, any>): ProviderPlan {
  switch (event.type) {
    case 'transaction.completed': {
      const invoiceId = text(data.id)
      const totals = optionalObject(optionalObject(data.details).totals)
      // Paddle's totals are minor units written as strings: the sale is what was paid after discounts, without tax.
      const total = minorString(totals.total)
      const tax = minorString(totals.tax)
      if (tax > total || total - tax > MAX_MINOR) malformed()
      const currency = currencyOf(data.currency_code)
      if (total - tax === 0) return ignore('zero_amount')
      const custom = customAttribution(data.custom_data)
      return {
        kind: 'sale',
        buyer: {
          by: 'custom_data',
          ...customerIds(custom.externalId, optionalText(data.customer_id), invoiceId),
          email: null,
          referral: custom.referral,
        },
        sale: {
          amountMinor: total - tax,
          currency,
          invoiceId,
          chargeId: null,
          paymentIntentId: null,
          subscriptionId: optionalText(data.subscription_id),
          paidAt: optionalIsoTime(data.billed_at) ?? optionalIsoTime(event.occurredAt),
        },
      }
    }
    case 'adjustment.created':
    case 'adjustment.updated': {
      // Credits and chargebacks are adjustments too; only an approved refund takes money back.
      if (data.action !== 'refund') return ignore('not_a_refund')
      if (data.status !== 'approved') return ignore('not_approved')
      const totals = optionalObject(data.totals)
      const total = minorString(totals.total)
      const tax = minorString(totals.tax)
      if (tax > total) malformed()
      if (total - tax === 0) return ignore('zero_amount')
      return { kind: 'refund_part', invoiceId: text(data.transaction_id), refundId: text(data.id), amountMinor: total - tax }
    }
    case 'customer.created':
    case 'customer.updated': {
      const paddleCustomerId = text(data.id)
      const custom = customAttribution(data.custom_data)
      // A referral added to a customer made long ago dates from the update, not from the customer.
      const at = event.type === 'customer.created' ? optionalIsoTime(data.created_at) : optionalIsoTime(event.occurredAt)
      return {
        kind: 'lead',
        ...customerIds(custom.externalId, paddleCustomerId, paddleCustomerId),
        email: optionalText(data.email),
        referral: custom.referral,
        at,
      }
    }
    default:
      return ignore('unhandled_type')
  }
}

/**
 * Reads a verified notification into what it asks for. Paddle's sandbox and live accounts are
 * separate (each with its own secret and endpoint), and a notification names neither: the
 * integration's `livemode` does not apply.
 */
export function planPaddleEvent(event: PaddleEvent): ProviderPlan {
  if (!(PADDLE_EVENT_TYPES as readonly string[]).includes(event.type)) return ignore('unhandled_type')
  if (event.id === '' || !isObject(event.data)) return ignore('malformed')
  const data = event.data
  return guarded(() => planOf(event, data))
}

export const paddleProvider: PaymentProvider<PaddleEvent> = {
  signatureHeader: 'paddle-signature',
  verify: (rawBody, headers, secret, nowMs) => verifyPaddleEvent(rawBody, headers.get('paddle-signature'), secret, nowMs),
  plan: (event) => planPaddleEvent(event),
}
