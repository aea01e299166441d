import fc from 'fast-check'
import { expect } from 'vitest'
import type { AffiliateApi } from '../../src/index.js'
import { centsOf } from './helpers.js'
import {
  chargeObject,
  checkoutSessionObject,
  deliver,
  invoiceObject,
  invoicePaymentObject,
  payment,
  stripeEvent,
  type Payment,
  type Shape,
} from './stripe-events.js'

// Random programs of Stripe events, delivered as Stripe does (every event at least once, some
// twice, in any order, several at a time, to any instance), checked against an oracle that works
// out each invoice's commission from the same events without the service: nothing applied twice,
// no 500 but for the storage failures a test injects, every event logged once and none left waiting.

/** How a customer comes: never referred; a checkout through a code; a signup (a lead via the API) then a checkout naming it; or two checkouts through two codes (the first processed wins). */
type CustomerKind = 'stranger' | 'code' | 'signup' | 'contested'

interface InvoiceSpec {
  amountMinor: number
  taxMinor: number
  /** Paid before the customer's attribution (earns nothing) or after it. */
  before: boolean
  shape: Shape
  /** Each `charge.refunded` of it: `amount_refunded` as a share (0..1] of the charge. */
  refunds: number[]
  /** Also sent as a second `invoice.paid` event under another id. */
  twice: boolean
  /** Its `invoice_payment.paid` is sent (always in the 2025 shape: without it a 2025 refund has no sale). */
  linked: boolean
}

interface CustomerSpec {
  kind: CustomerKind
  /** Which affiliate's code: 0 or 1 (for `contested`, the first checkout's; the second is the other). */
  affiliate: 0 | 1
  invoices: InvoiceSpec[]
}

export interface Program {
  customers: CustomerSpec[]
}

const invoiceSpec: fc.Arbitrary<InvoiceSpec> = fc
  .record({
    amountMinor: fc.integer({ min: 1, max: 200_000 }),
    taxShare: fc.constantFrom(0, 0, 0.1, 0.2),
    before: fc.constantFrom(false, false, false, true),
    shape: fc.constantFrom<Shape>('2025', '2025', 'older'),
    refunds: fc.array(fc.double({ min: 0.01, max: 1, noNaN: true }), { maxLength: 2 }),
    twice: fc.boolean(),
    linkedOlder: fc.boolean(),
  })
  .map(({ amountMinor, taxShare, shape, linkedOlder, ...rest }) => ({
    ...rest,
    amountMinor,
    taxMinor: Math.floor(amountMinor * taxShare),
    shape,
    linked: shape === '2025' || linkedOlder,
  }))

export const programs: fc.Arbitrary<Program> = fc.record({
  customers: fc.array(
    fc.record({
      kind: fc.constantFrom<CustomerKind>('stranger', 'code', 'signup', 'contested'),
      affiliate: fc.constantFrom<0 | 1>(0, 1),
      invoices: fc.array(invoiceSpec, { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
})

/** Where the events go: two affiliates with codes on one campaign paying `percent`% of each sale. */
export interface World {
  api: AffiliateApi
  workspaceId: string
  percent: number
  affiliates: { id: string; code: string }[]
  endpointPath: string
  secret: string
  /** The instances to deliver to (one on memory, two on PostgreSQL). */
  targets: ((request: Request) => Promise<Response>)[]
  /** The service clock, Unix seconds. */
  now: () => number
  /** Storage failures injected so far (a test's storage wrapper counts them). */
  injected: () => number
  /** Starts injecting failures, once the program's leads are made (called before the first delivery). */
  arm?: () => void
}

interface Built {
  events: Record<string, unknown>[]
  /** Per invoice: what the oracle needs. */
  invoices: { id: string; customer: number; payment: Payment; refunded: number[]; spec: InvoiceSpec }[]
  /** Per customer: its Stripe id, and the checkout events naming each affiliate. */
  customers: { stripeId: string; spec: CustomerSpec; checkouts: { eventId: string; affiliate: number }[] }[]
}

/** The events of `program` (each once) and what the oracle reads; leads of `signup` customers are made through the API first. */
async function build(world: World, program: Program, tag: string): Promise<Built> {
  const t = world.now()
  const opened = t - 3600
  const events: Record<string, unknown>[] = []
  const built: Built = { events, invoices: [], customers: [] }
  for (const [c, spec] of program.customers.entries()) {
    const stripeId = `cus_${tag}_${c}`
    const checkouts: { eventId: string; affiliate: number }[] = []
    const checkout = (affiliate: number, reference: string, n: number) => {
      const eventId = `evt_${tag}_checkout_${c}_${n}`
      events.push(
        stripeEvent(
          'checkout.session.completed',
          checkoutSessionObject(stripeId, { clientReferenceId: reference, created: opened }),
          eventId,
        ),
      )
      checkouts.push({ eventId, affiliate })
    }
    if (spec.kind === 'code') checkout(spec.affiliate, world.affiliates[spec.affiliate]!.code, 0)
    if (spec.kind === 'contested') {
      checkout(spec.affiliate, world.affiliates[spec.affiliate]!.code, 0)
      checkout(1 - spec.affiliate, world.affiliates[1 - spec.affiliate]!.code, 1)
    }
    if (spec.kind === 'signup') {
      await world.api.conversions.lead({
        workspaceId: world.workspaceId,
        externalId: `user-${tag}-${c}`,
        email: `user${c}@example.com`,
        referralCode: world.affiliates[spec.affiliate]!.code,
      })
      checkout(spec.affiliate, `user-${tag}-${c}`, 0)
    }
    built.customers.push({ stripeId, spec, checkouts })
    for (const [i, invoice] of spec.invoices.entries()) {
      // A signup is attributed when its lead was made (now); a checkout when it was opened.
      const attributedAt = spec.kind === 'signup' ? t + 1 : opened
      const p = payment(`${tag}_${c}_${i}`, stripeId, {
        amountMinor: invoice.amountMinor,
        taxMinor: invoice.taxMinor,
        paidAt: invoice.before ? opened - 3600 : attributedAt + 600,
      })
      events.push(stripeEvent('invoice.paid', invoiceObject(p, invoice.shape), `evt_${tag}_${p.invoiceId}_paid`, invoice.shape))
      if (invoice.twice)
        events.push(stripeEvent('invoice.paid', invoiceObject(p, invoice.shape), `evt_${tag}_${p.invoiceId}_paid_again`, invoice.shape))
      if (invoice.linked)
        events.push(stripeEvent('invoice_payment.paid', invoicePaymentObject(p), `evt_${tag}_${p.invoiceId}_linked`, invoice.shape))
      const refunded = invoice.refunds.map((share) => Math.max(1, Math.round(share * invoice.amountMinor)))
      for (const [r, amount] of refunded.entries()) {
        events.push(
          stripeEvent('charge.refunded', chargeObject(p, amount, invoice.shape), `evt_${tag}_${p.invoiceId}_refund_${r}`, invoice.shape),
        )
      }
      built.invoices.push({ id: p.invoiceId, customer: c, payment: p, refunded, spec: invoice })
    }
  }
  return built
}

/** `numerator / denominator` rounded half up, for non-negative integers: the oracle's own arithmetic. */
const roundedShare = (value: number, numerator: number, denominator: number) =>
  Math.floor((value * numerator * 2 + denominator) / (denominator * 2))

/**
 * The oracle: each invoice's commission (affiliate, amount left, status) from the events alone, or
 * none. `winners` names each customer's affiliate where two checkouts raced (the log says which
 * was processed: the first attribution wins, and which was first is the storage's commit order).
 */
function oracle(world: World, built: Built, winners: Map<number, number>) {
  const expected = new Map<string, { affiliateId: string; amount: number; status: string }>()
  for (const invoice of built.invoices) {
    const customer = built.customers[invoice.customer]!
    if (customer.spec.kind === 'stranger' || invoice.spec.before) continue
    const affiliate = customer.spec.kind === 'contested' ? winners.get(invoice.customer)! : customer.spec.affiliate
    const sale = invoice.payment.amountMinor - invoice.payment.taxMinor
    const commission = roundedShare(sale, world.percent, 100)
    if (commission === 0) continue
    const largest = Math.max(0, ...invoice.refunded)
    const refundedSale = largest >= invoice.payment.amountMinor ? sale : Math.floor((largest * sale) / invoice.payment.amountMinor)
    const taken = refundedSale >= sale ? commission : roundedShare(commission, refundedSale, sale)
    const left = commission - taken
    expected.set(invoice.id, { affiliateId: world.affiliates[affiliate]!.id, amount: left, status: left === 0 ? 'refunded' : 'pending' })
  }
  return expected
}

/** How many events `build` makes of `program`. */
export const eventCount = (program: Program): number =>
  program.customers.reduce(
    (sum, c) =>
      sum +
      (c.kind === 'contested' ? 2 : c.kind === 'stranger' ? 0 : 1) +
      c.invoices.reduce((n, i) => n + 1 + Number(i.twice) + Number(i.linked) + i.refunds.length, 0),
    0,
  )

/** A delivery plan over `count` events: every event once or twice, in any order, in concurrent batches, each to an instance. */
export const plans = (count: number, instances: number) =>
  fc.record({
    order: fc.shuffledSubarray([...Array(count).keys(), ...Array(count).keys()], { minLength: count, maxLength: 2 * count }),
    batches: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 20 }),
    instances: fc.array(fc.nat(instances - 1), { minLength: 1, maxLength: 20 }),
  })

export type Plan = { order: number[]; batches: number[]; instances: number[] }

/**
 * Builds `program`, delivers its events by `plan` (an event the plan left out goes at the end, so
 * each is delivered at least once), delivers again each that was answered 500 (as Stripe retries),
 * and checks the end state against the oracle. `tag` keeps the ids of one run apart from another's.
 */
export async function runProgram(world: World, program: Program, plan: Plan, tag: string): Promise<void> {
  const built = await build(world, program, tag)
  const count = built.events.length
  expect(count).toBe(eventCount(program))
  world.arm?.()
  const order = plan.order.filter((i) => i < count)
  for (let i = 0; i < count; i++) if (!order.includes(i)) order.push(i)
  const statuses: number[] = []
  const failed = new Set<number>()
  const send = async (index: number, n: number) => {
    const target = world.targets[plan.instances[n % plan.instances.length]! % world.targets.length]!
    const answer = await deliver(target, world.endpointPath, built.events[index], world.secret, world.now())
    statuses.push(answer.status)
    if (answer.status === 500) failed.add(index)
    else failed.delete(index)
    expect([200, 500], answer.text).toContain(answer.status)
  }
  let n = 0
  for (let b = 0; n < order.length; b++) {
    const size = plan.batches[b % plan.batches.length]!
    const batch = order.slice(n, n + size)
    await Promise.all(batch.map((index, k) => send(index, n + k)))
    n += size
  }
  for (let round = 0; failed.size > 0; round++) {
    expect(round, 'events still answered 500 after 20 redeliveries').toBeLessThan(20)
    for (const index of [...failed]) await send(index, round)
  }
  // No 500 but for an injected storage failure (each fails one delivery at most).
  expect(statuses.filter((status) => status === 500).length).toBeLessThanOrEqual(world.injected())

  const log = (await listAll((page) => world.api.integrations.events({ workspaceId: world.workspaceId, page, limit: 100 }))).filter((e) =>
    e.eventId.startsWith(`evt_${tag}`),
  )
  // Every event recorded once, none waiting or failed once every event of each payment has come.
  expect(log.map((e) => e.eventId).sort()).toEqual(built.events.map((e) => e.id as string).sort())
  expect(log.filter((e) => e.status === 'waiting' || e.status === 'failed')).toEqual([])
  const winners = new Map<number, number>()
  for (const [c, customer] of built.customers.entries()) {
    if (customer.spec.kind !== 'contested') continue
    const processed = customer.checkouts.filter((checkout) => log.find((e) => e.eventId === checkout.eventId)?.status === 'processed')
    expect(processed, `one checkout of ${customer.stripeId} wins`).toHaveLength(1)
    expect(log.find((e) => e.eventId !== processed[0]!.eventId && customer.checkouts.some((k) => k.eventId === e.eventId))).toMatchObject({
      reason: 'already_attributed',
    })
    winners.set(c, processed[0]!.affiliate)
  }
  const expected = oracle(world, built, winners)
  const made = (await listAll((page) => world.api.commissions.list({ workspaceId: world.workspaceId, page, limit: 100 }))).filter((c) =>
    c.invoiceId?.startsWith(`in_${tag}_`),
  )
  // Nothing applied twice: one commission per invoice that earns, none for the others, no clawbacks (nothing was paid out).
  expect(made.map((c) => c.invoiceId).sort()).toEqual([...expected.keys()].sort())
  for (const commission of made) {
    const want = expected.get(commission.invoiceId!)!
    expect({
      invoiceId: commission.invoiceId,
      affiliateId: commission.affiliateId,
      amount: centsOf(commission.amount),
      status: commission.status,
    }).toEqual({ invoiceId: commission.invoiceId, ...want })
  }
}

async function listAll<T>(read: (page: number) => Promise<{ items: T[]; pagination: { totalPages: number } }>): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const { items, pagination } = await read(page)
    out.push(...items)
    if (page >= pagination.totalPages) return out
  }
}
