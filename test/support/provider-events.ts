import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'

// Paddle Billing and Lemon Squeezy events built from the providers' own examples
// (test/fixtures/paddle, test/fixtures/lemonsqueezy: see the README in each), setting only the
// ids, amounts, times and custom data a scenario needs; signed as each provider signs (Paddle:
// `Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "<ts>:<body>">`, several h1 during a secret
// rotation; Lemon Squeezy: `X-Signature: <hex HMAC-SHA256 of the body>`), with node:crypto here so
// the service's Web Crypto verifier is checked against an independent signer.

type Json = Record<string, any>

const fixture = (dir: 'paddle' | 'lemonsqueezy', name: string): Json =>
  JSON.parse(readFileSync(new URL(`../fixtures/${dir}/${name}.json`, import.meta.url), 'utf8')) as Json

const hmacHex = (secret: string, message: string) => createHmac('sha256', secret).update(message).digest('hex')

/** Posts `body` with `headers` to an integration's endpoint through `fetch`; answers the status and body. */
export async function post(
  fetch: (request: Request) => Promise<Response>,
  endpointPath: string,
  body: string,
  headers: Record<string, string>,
) {
  const response = await fetch(
    new Request(`http://provider.test${endpointPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    }),
  )
  return { status: response.status, text: await response.text() }
}

// Paddle Billing

/** The `Paddle-Signature` header of `body` at `ts` (Unix seconds), one `h1` per secret (two during a rotation). */
export const paddleSignature = (body: string, ts: number, ...secrets: string[]): string =>
  [`ts=${ts}`, ...secrets.map((secret) => `h1=${hmacHex(secret, `${ts}:${body}`)}`)].join(';')

/** A Paddle notification: the SDK's mock of `type` with this event id and `data` changed by `change`. */
export function paddleEvent(
  type: 'transaction-completed' | 'adjustment-created' | 'adjustment-updated' | 'customer-created' | 'customer-updated',
  eventId: string,
  change: (data: Json) => void = () => {},
): Json {
  const event = fixture('paddle', type)
  event.event_id = eventId
  change(event.data)
  return event
}

/**
 * A completed transaction of `amountMinor` before tax (and `taxMinor` of tax) in `currency`:
 * the mock's totals replaced as Paddle writes them (minor units as strings).
 */
export function paddleTransaction(
  eventId: string,
  options: {
    id: string
    customerId?: string
    amountMinor: number
    taxMinor?: number
    currency?: string
    customData?: Json | null
    subscriptionId?: string | null
    billedAt?: string
    origin?: string
  },
): Json {
  return paddleEvent('transaction-completed', eventId, (data) => {
    const tax = options.taxMinor ?? 0
    const currency = options.currency ?? 'USD'
    const totals = {
      subtotal: options.amountMinor,
      discount: 0,
      tax,
      total: options.amountMinor + tax,
      grand_total: options.amountMinor + tax,
      grand_total_tax: tax,
    }
    Object.assign(data.details.totals, Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, String(v)])), {
      currency_code: currency,
    })
    Object.assign(data, {
      id: options.id,
      customer_id: options.customerId ?? 'ctm_01h8e18bxp9hby49dnm8ewf0m0',
      currency_code: currency,
      custom_data: options.customData ?? null,
      subscription_id: options.subscriptionId ?? null,
      origin: options.origin ?? (options.subscriptionId ? 'subscription_recurring' : 'web'),
      billed_at: options.billedAt ?? data.billed_at,
    })
  })
}

/** An approved refund adjustment of `amountMinor` (before tax) of transaction `transactionId`. */
export function paddleRefund(
  eventId: string,
  options: {
    id: string
    transactionId: string
    amountMinor: number
    taxMinor?: number
    status?: string
    action?: string
    type?: 'adjustment-created' | 'adjustment-updated'
  },
): Json {
  return paddleEvent(options.type ?? 'adjustment-updated', eventId, (data) => {
    const tax = options.taxMinor ?? 0
    Object.assign(data.totals, { subtotal: String(options.amountMinor), tax: String(tax), total: String(options.amountMinor + tax) })
    Object.assign(data, {
      id: options.id,
      transaction_id: options.transactionId,
      status: options.status ?? 'approved',
      action: options.action ?? 'refund',
    })
  })
}

// Lemon Squeezy

/** The `X-Signature` header of `body`. */
export const lemonSqueezySignature = (body: string, secret: string): string => hmacHex(secret, body)

/** A Lemon Squeezy webhook: the documented envelope (`meta.event_name`, `meta.custom_data`) around `data`. */
export function lemonSqueezyEvent(eventName: string, data: Json, customData: Json | null = null, testMode = false): Json {
  const envelope = fixture('lemonsqueezy', 'event')
  envelope.meta = { event_name: eventName, test_mode: testMode, ...(customData === null ? {} : { custom_data: customData }) }
  envelope.data = data
  return envelope
}

/** The documented order object with this id, customer, amounts (minor units) and refund so far. */
export function lemonSqueezyOrder(options: {
  id: string
  customerId?: number
  subtotal: number
  tax?: number
  currency?: string
  refunded?: number
  updatedAt?: string
  email?: string
  status?: string
}): Json {
  const order = fixture('lemonsqueezy', 'order')
  const tax = options.tax ?? 0
  const refunded = options.refunded ?? 0
  Object.assign(order.attributes, {
    customer_id: options.customerId ?? 1,
    user_email: options.email ?? 'buyer@example.com',
    currency: options.currency ?? 'USD',
    subtotal: options.subtotal,
    setup_fee: 0,
    discount_total: 0,
    tax,
    total: options.subtotal + tax,
    refunded_amount: refunded,
    refunded: refunded >= options.subtotal + tax,
    status: options.status ?? (refunded >= options.subtotal + tax ? 'refunded' : 'paid'),
    updated_at: options.updatedAt ?? order.attributes.updated_at,
  })
  order.id = options.id
  return order
}

/** The documented subscription invoice with this id, subscription, billing reason and amounts. */
export function lemonSqueezyInvoice(options: {
  id: string
  subscriptionId: number
  customerId?: number
  billingReason?: 'initial' | 'renewal' | 'updated'
  subtotal: number
  tax?: number
  refunded?: number
  updatedAt?: string
}): Json {
  const invoice = fixture('lemonsqueezy', 'subscription-invoice')
  const tax = options.tax ?? 0
  Object.assign(invoice.attributes, {
    subscription_id: options.subscriptionId,
    customer_id: options.customerId ?? 1,
    billing_reason: options.billingReason ?? 'renewal',
    subtotal: options.subtotal,
    tax,
    total: options.subtotal + tax,
    refunded_amount: options.refunded ?? 0,
    updated_at: options.updatedAt ?? invoice.attributes.updated_at,
  })
  invoice.id = options.id
  return invoice
}
