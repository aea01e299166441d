import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Affiliate, Commission, CommissionStatus as AnyStatus } from '../../src/index.js'
/** The statuses a request may set (hold and voided come from the fraud rules and review only). */
type CommissionStatus = Exclude<AnyStatus, 'hold' | 'voided'>
import { formatMoney } from '../../src/domain/money.js'
import { centsOf, outcome, setup, WS_A } from '../support/helpers.js'

// Money history through the typed API on memory storage: after any sequence of creates, payments,
// refunds, bans, unbans, deletes and edits of amount or status (refused ones included),
//  - no paid amount disappears: a commission seen `paid` is still there afterwards with the same
//    amount (and one refunded after payment cannot be deleted either: its clawback reverses it), and leaves `paid` only by a refund of that very commission in that step, so the sum of
//    paid amounts never goes down but by such a refund;
//  - a banned affiliate earns nothing: while it stays banned its totalEarnings never rise, none of its
//    commissions gets a larger amount or newly becomes `processing` or `paid`, and it gets none new.
// The invariants read only what the service answers. A model kept here also predicts each step's
// outcome, so a service that refused everything could not pass.

const STATUSES: readonly CommissionStatus[] = ['pending', 'processing', 'paid', 'refunded']
const MOVES: Record<CommissionStatus, readonly CommissionStatus[]> = {
  pending: ['processing', 'paid', 'refunded'],
  processing: ['paid', 'refunded', 'pending'],
  paid: ['refunded'],
  refunded: [],
}

type Via = 'commissions' | 'referredUsers'
type Step =
  | { type: 'create'; affiliate: number; cents: number; status: CommissionStatus | null }
  | { type: 'pay'; via: Via; record: number }
  | { type: 'refund'; via: Via; record: number }
  | { type: 'edit'; via: Via; record: number; status: CommissionStatus | null; cents: number | null }
  | { type: 'delete'; via: Via; record: number }
  | { type: 'ban'; affiliate: number }
  | { type: 'unban'; affiliate: number }

const cents = fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 100_000_000 }))
const via = fc.constantFrom<Via>('commissions', 'referredUsers')
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant('create' as const),
      affiliate: fc.nat(),
      cents,
      status: fc.option(fc.constantFrom(...STATUSES), { nil: null, freq: 2 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('pay' as const), via, record: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('refund' as const), via, record: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc
      .record({
        type: fc.constant('edit' as const),
        via,
        record: fc.nat(),
        status: fc.option(fc.constantFrom(...STATUSES), { nil: null }),
        cents: fc.option(cents, { nil: null }),
      })
      .filter((s) => s.status !== null || s.cents !== null),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('delete' as const), via, record: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('ban' as const), affiliate: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('unban' as const), affiliate: fc.nat() }) },
)

const money = formatMoney

interface ModelRecord {
  affiliate: number
  cents: number
  status: CommissionStatus
}

/** What the service answers: every commission by id, and each affiliate as read back. */
interface Observed {
  /** Sales: what the steps made. */
  commissions: Map<string, Commission>
  /** Clawbacks the service made for refunds after payment, by the sale they reverse. */
  clawbacks: Map<string, Commission>
  affiliates: Affiliate[]
}

async function scenario(steps: Step[]) {
  const { api } = setup()
  const campaign = await api.campaigns.create({
    campaignName: 'History',
    workspaceId: WS_A,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://shop.example.com/',
  })
  const affiliates: Affiliate[] = []
  for (let i = 0; i < 3; i++) affiliates.push(await api.affiliates.create({ email: `aff${i}@example.com`, campaignId: campaign.id }))
  const banned = affiliates.map(() => false)
  const model = new Map<string, ModelRecord>()
  /** Every id ever made, deleted ones included, so steps on gone records happen too. */
  const ids: string[] = []
  /** Sales refunded after payment, and the amount each clawback must take back. */
  const clawedBack = new Map<string, number>()

  async function observe(): Promise<Observed> {
    const commissions = new Map<string, Commission>()
    const clawbacks = new Map<string, Commission>()
    for (let page = 1; ; page++) {
      const { items, pagination } = await api.commissions.list({ page, limit: 100 })
      for (const c of items) {
        if (c.kind === 'clawback') clawbacks.set(c.reversesCommissionId!, c)
        else commissions.set(c.commissionId, c)
      }
      if (page >= pagination.totalPages) break
    }
    return { commissions, clawbacks, affiliates: await Promise.all(affiliates.map((a) => api.affiliates.get(a.id))) }
  }

  const paidSum = (o: Observed) => [...o.commissions.values()].reduce((sum, c) => sum + (c.status === 'paid' ? centsOf(c.amount) : 0), 0)

  /** The invariants between two observations around one step. */
  function compare(before: Observed, after: Observed, s: Step, target: string | null, context: string) {
    // The one commission this step may have refunded, and only if the step asked for it.
    const refunding = target !== null && (s.type === 'refund' || (s.type === 'edit' && s.status === 'refunded')) ? target : null
    let refunded = 0
    for (const [id, was] of before.commissions) {
      if (was.status !== 'paid') continue
      const now = after.commissions.get(id)
      expect(now, `${context}: paid commission ${id} vanished`).toBeDefined()
      expect(now!.amount, `${context}: paid amount changed`).toBe(was.amount)
      if (now!.status !== 'paid') {
        expect(now!.status, context).toBe('refunded')
        expect(id, `${context}: left paid without a refund of it`).toBe(refunding)
        refunded += centsOf(was.amount)
      }
    }
    expect(paidSum(after), `${context}: sum of paid amounts`).toBeGreaterThanOrEqual(paidSum(before) - refunded)

    for (const [i, affiliate] of before.affiliates.entries()) {
      // Banned throughout the step: banned before it and after it.
      if (!affiliate.isBanned || !after.affiliates[i]!.isBanned) continue
      expect(after.affiliates[i]!.totalEarnings, `${context}: banned affiliate ${i} earned`).toBeLessThanOrEqual(affiliate.totalEarnings)
      for (const [id, now] of after.commissions) {
        if (now.affiliateId !== affiliate.id) continue
        const was = before.commissions.get(id)
        expect(was, `${context}: banned affiliate ${i} got a new commission`).toBeDefined()
        expect(centsOf(now.amount), `${context}: banned affiliate ${i} amount raised`).toBeLessThanOrEqual(centsOf(was!.amount))
        if (now.status === 'processing' || now.status === 'paid')
          expect(now.status, `${context}: banned affiliate ${i} moved on`).toBe(was!.status)
      }
    }
  }

  let before = await observe()
  for (const [n, s] of steps.entries()) {
    const context = `step ${n}: ${JSON.stringify(s)}`
    let target: string | null = null
    if (s.type === 'create') {
      const a = s.affiliate % affiliates.length
      let made: string | null = null
      const status = await outcome(async () => {
        const body = {
          campaignId: campaign.id,
          affiliateId: affiliates[a]!.id,
          referredUser: `buyer${n}@example.com`,
          amount: money(s.cents),
          ...(s.status === null ? {} : { status: s.status }),
        }
        made = (await api.commissions.create(body)).commissionId
      })
      expect(status, context).toBe(banned[a] ? 422 : 200)
      if (made !== null) {
        ids.push(made)
        model.set(made, { affiliate: a, cents: s.cents, status: s.status ?? 'pending' })
      }
    } else if (s.type === 'ban' || s.type === 'unban') {
      const a = s.affiliate % affiliates.length
      await api.affiliates.update(affiliates[a]!.id, { isBanned: s.type === 'ban' })
      banned[a] = s.type === 'ban'
    } else {
      if (ids.length === 0) continue
      const id = ids[s.record % ids.length]!
      target = id
      const current = model.get(id)
      const api_ = s.via === 'commissions' ? api.commissions : api.referredUsers
      if (s.type === 'delete') {
        const status = await outcome(() => api_.delete(id))
        // A sale refunded after payment keeps its history (its clawback reverses it): 422 like a paid one.
        expect(status, context).toBe(!current ? 404 : current.status === 'paid' || clawedBack.has(id) ? 422 : 200)
        if (status === 200) model.delete(id)
      } else {
        const to = s.type === 'pay' ? 'paid' : s.type === 'refund' ? 'refunded' : s.status
        const newCents = s.type === 'edit' ? s.cents : null
        const changes = { ...(to === null ? {} : { status: to }), ...(newCents === null ? {} : { amount: money(newCents) }) }
        const status = await outcome(() => api_.update(id, changes))
        let expected = 200
        if (!current) expected = 404
        else {
          const next = to ?? current.status
          const amount = newCents ?? current.cents
          const moveRefused = !(next === current.status || MOVES[current.status].includes(next))
          const amountLocked = amount !== current.cents && current.status !== 'pending' && current.status !== 'processing'
          const bannedRefused =
            banned[current.affiliate]! &&
            ((next !== current.status && (next === 'processing' || next === 'paid')) || amount > current.cents)
          if (moveRefused || amountLocked || bannedRefused) expected = 422
          if (expected === 200) {
            model.set(id, { ...current, status: next, cents: amount })
            // Refunding a paid commission is a refund after payment: a clawback takes the amount back
            // (a zero amount has nothing to take back: it only moves to `refunded`).
            if (current.status === 'paid' && next === 'refunded' && current.cents > 0) clawedBack.set(id, current.cents)
          }
        }
        expect(status, context).toBe(expected)
      }
    }
    const after = await observe()
    // The model and the service agree on every record.
    expect([...after.commissions.values()].map((c) => [c.commissionId, centsOf(c.amount), c.status]).sort(), context).toEqual(
      [...model.entries()].map(([id, r]) => [id, r.cents, r.status]).sort(),
    )
    // One pending clawback of minus the amount for each refund after payment, and no other.
    expect([...after.clawbacks.entries()].map(([id, c]) => [id, c.amount, c.status, c.payoutId]).sort(), context).toEqual(
      [...clawedBack.entries()].map(([id, cents]) => [id, `-${money(cents)}`, 'pending', null]).sort(),
    )
    compare(before, after, s, target, context)
    before = after
  }
}

describe('money history', () => {
  it('keeps every paid amount, and a banned affiliate earns nothing, over any sequence of operations', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), scenario), { numRuns: 150 })
  }, 60_000)

  it('holds over a fixed walk: pay, ban, refused raises and moves, refund while banned, unban, delete', async () => {
    await scenario([
      { type: 'create', affiliate: 0, cents: 1000, status: null },
      { type: 'create', affiliate: 0, cents: 500, status: 'processing' },
      { type: 'create', affiliate: 1, cents: 700, status: 'paid' },
      { type: 'pay', via: 'commissions', record: 0 },
      { type: 'delete', via: 'commissions', record: 0 },
      { type: 'delete', via: 'referredUsers', record: 2 },
      { type: 'ban', affiliate: 0 },
      { type: 'create', affiliate: 0, cents: 1, status: null },
      { type: 'pay', via: 'referredUsers', record: 1 },
      { type: 'edit', via: 'commissions', record: 1, status: null, cents: 501 },
      { type: 'edit', via: 'commissions', record: 1, status: 'pending', cents: 400 },
      { type: 'edit', via: 'commissions', record: 1, status: 'processing', cents: null },
      { type: 'refund', via: 'commissions', record: 0 },
      { type: 'delete', via: 'commissions', record: 0 },
      { type: 'unban', affiliate: 0 },
      { type: 'pay', via: 'commissions', record: 1 },
      { type: 'edit', via: 'referredUsers', record: 2, status: 'refunded', cents: null },
      { type: 'delete', via: 'commissions', record: 2 },
    ])
  })
})
