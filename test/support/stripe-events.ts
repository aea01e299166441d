import { readFileSync } from 'node:fs'
import Stripe from 'stripe'

// Stripe events built from Stripe's own example objects (test/fixtures/stripe, copied from its
// OpenAPI fixtures: see the README there), in the shape every account on API version 2025-03-31
// or later receives, or in the older shape; signed as Stripe signs them, with the SDK's own
// `generateTestHeaderString`.

type StripeObject = Record<string, any>

const fixture = (name: string): StripeObject =>
  JSON.parse(readFileSync(new URL(`../fixtures/stripe/${name}.json`, import.meta.url), 'utf8')) as StripeObject

/** `2025`: API version 2025-03-31 and later (the default); `older`: before it. */
export type Shape = '2025' | 'older'

export const API_VERSION: Record<Shape, string> = { '2025': '2025-03-31.basil', older: '2024-06-20' }

/** One paid invoice and its one payment: ids, and money in minor units. */
export interface Payment {
  invoiceId: string
  chargeId: string
  paymentIntentId: string
  /** The Stripe customer (`cus_…`). */
  customer: string
  subscriptionId: string
  /** What the charge took, tax included. */
  amountMinor: number
  /** The tax in it: the invoice's `total_excluding_tax` is the amount less this. */
  taxMinor: number
  currency: string
  /** When the invoice was paid, Unix seconds. */
  paidAt: number
}

/** A payment named by `n`: `in_n`, `ch_n`, `pi_n`, `sub_n`, of `customer`. */
export const payment = (n: string | number, customer: string, overrides: Partial<Payment> = {}): Payment => ({
  invoiceId: `in_${n}`,
  chargeId: `ch_${n}`,
  paymentIntentId: `pi_${n}`,
  customer,
  subscriptionId: `sub_${n}`,
  amountMinor: 50_00,
  taxMinor: 0,
  currency: 'usd',
  paidAt: Date.UTC(2026, 0, 2) / 1000,
  ...overrides,
})

/** The paid invoice of `p`: Stripe's fixture invoice with the payment's ids and amounts. */
export function invoiceObject(p: Payment, shape: Shape = '2025'): StripeObject {
  const invoice = fixture('invoice')
  Object.assign(invoice, {
    id: p.invoiceId,
    customer: p.customer,
    currency: p.currency,
    status: 'paid',
    amount_due: p.amountMinor,
    amount_paid: p.amountMinor,
    amount_remaining: 0,
    total: p.amountMinor,
    subtotal: p.amountMinor - p.taxMinor,
    subtotal_excluding_tax: p.amountMinor - p.taxMinor,
    total_excluding_tax: p.amountMinor - p.taxMinor,
    billing_reason: 'subscription_cycle',
    status_transitions: { ...invoice.status_transitions, finalized_at: p.paidAt, paid_at: p.paidAt },
  })
  if (shape === '2025') {
    invoice.parent = {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: null, subscription: p.subscriptionId },
    }
  } else {
    delete invoice.parent
    Object.assign(invoice, { subscription: p.subscriptionId, charge: p.chargeId, payment_intent: p.paymentIntentId })
  }
  return invoice
}

/** The invoice's payment (`invoice_payment.paid`, 2025-03-31 on): ties the invoice to its payment intent. */
export function invoicePaymentObject(p: Payment): StripeObject {
  const invoicePayment = fixture('invoice-payment')
  return Object.assign(invoicePayment, {
    id: `inpay_${p.invoiceId.slice(3)}`,
    invoice: p.invoiceId,
    amount_paid: p.amountMinor,
    amount_requested: p.amountMinor,
    currency: p.currency,
    livemode: false,
    status: 'paid',
    payment: { type: 'payment_intent', payment_intent: p.paymentIntentId },
    status_transitions: { canceled_at: null, paid_at: p.paidAt },
  })
}

/** The charge of `p` with `refundedMinor` of it refunded (`charge.refunded`); the older shape names its invoice. */
export function chargeObject(p: Payment, refundedMinor: number, shape: Shape = '2025'): StripeObject {
  const charge = fixture('charge')
  Object.assign(charge, {
    id: p.chargeId,
    amount: p.amountMinor,
    amount_captured: p.amountMinor,
    amount_refunded: refundedMinor,
    captured: true,
    refunded: refundedMinor >= p.amountMinor,
    customer: p.customer,
    currency: p.currency,
    payment_intent: p.paymentIntentId,
  })
  if (shape === 'older') charge.invoice = p.invoiceId
  return charge
}

/** A completed checkout of Stripe customer `customer` (null: a guest), naming what the host put in it. */
export function checkoutSessionObject(
  customer: string | null,
  options: {
    clientReferenceId?: string
    metadata?: Record<string, string>
    email?: string
    created?: number
    mode?: 'subscription' | 'payment'
  } = {},
): StripeObject {
  const session = fixture('checkout-session')
  return Object.assign(session, {
    id: `cs_test_${customer ?? 'guest'}_${options.clientReferenceId ?? 'none'}`,
    customer,
    client_reference_id: options.clientReferenceId ?? null,
    metadata: options.metadata ?? {},
    mode: options.mode ?? 'subscription',
    status: 'complete',
    payment_status: 'paid',
    created: options.created ?? session.created,
    customer_details: { ...session.customer_details, email: options.email ?? 'buyer@example.com' },
  })
}

/** A Stripe customer (`customer.created`, `customer.updated`). */
export function customerObject(
  id: string,
  options: { email?: string; metadata?: Record<string, string>; created?: number } = {},
): StripeObject {
  const customer = fixture('customer')
  return Object.assign(customer, {
    id,
    email: options.email ?? 'buyer@example.com',
    metadata: options.metadata ?? {},
    created: options.created ?? customer.created,
  })
}

/** The event Stripe sends of `object`: its fixture envelope with this id, type and object. */
export function stripeEvent(type: string, object: StripeObject, id: string, shape: Shape = '2025'): StripeObject {
  const envelope = fixture('event')
  return { ...envelope, id, type, api_version: API_VERSION[shape], livemode: object.livemode ?? false, data: { object } }
}

/** `event` as Stripe posts it: the raw body, and its `Stripe-Signature` header made with `secret` at `timestamp` (Unix seconds). */
export function signedEvent(event: unknown, secret: string, timestamp: number): { payload: string; header: string } {
  const payload = JSON.stringify(event)
  return { payload, header: Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }) }
}

/** Posts `event`, signed, to an integration's endpoint through `fetch`; answers the status and body. */
export async function deliver(
  fetch: (request: Request) => Promise<Response>,
  endpointPath: string,
  event: unknown,
  secret: string,
  timestamp: number,
): Promise<{ status: number; text: string }> {
  const { payload, header } = signedEvent(event, secret, timestamp)
  const response = await fetch(
    new Request(`http://stripe.test${endpointPath}`, {
      method: 'POST',
      headers: { 'stripe-signature': header, 'content-type': 'application/json' },
      body: payload,
    }),
  )
  return { status: response.status, text: await response.text() }
}

/** The three events of one payment of a subscription in 2025+: `invoice.paid`, `invoice_payment.paid` and a `charge.refunded`. */
export function paymentEvents(p: Payment, refundedMinor: number, shape: Shape = '2025', tag = p.invoiceId) {
  return {
    paid: stripeEvent('invoice.paid', invoiceObject(p, shape), `evt_paid_${tag}`, shape),
    linked: stripeEvent('invoice_payment.paid', invoicePaymentObject(p), `evt_link_${tag}`, shape),
    refunded: stripeEvent('charge.refunded', chargeObject(p, refundedMinor, shape), `evt_refund_${tag}_${refundedMinor}`, shape),
  }
}
