import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { balanceOf, dueAt, earningsOf, type Balance } from '../../src/domain/due.js'
import { isDue, planPayoutRun, type RunAffiliate, type RunCampaign } from '../../src/domain/payout-run.js'
import {
  commissionEffect,
  payoutAfterRemoval,
  payoutMoveError,
  PAYOUT_STATUSES,
  type PayoutStatus,
} from '../../src/domain/payout-status.js'
import type { CommissionStatus } from '../../src/domain/records.js'
import { planRefund, refundableMinor, type CommissionKind } from '../../src/domain/refund.js'
import { AffiliateError } from '../../src/errors.js'

// Money conservation through the pure payout rules. A model applies random sales, refunds, payout
// runs, payout moves and the passing of time exactly as the service is meant to (through the plans
// the domain answers), and after every step:
// - every commission's minor units sit in exactly one of held, due, in payout or paid out (a
//   commission refunded to zero outside any payout holds none), and per affiliate those sums equal
//   `balanceOf`, which reads payouts rather than commissions;
// - what was sold equals held + due + in payout + paid out + refunded, and the four buckets equal
//   `earningsOf` (clawbacks net out refunds of paid commissions);
// - a live payout's amount is the sum of its commissions and no commission is in two live payouts;
// and every run takes only due commissions, at most once, each payout's sum being the due net it took.

const DAY = 86_400_000
const T0 = Date.parse('2024-02-20T09:00:00.000Z')

interface ModelCommission {
  id: string
  affiliateId: string
  campaignId: string
  kind: CommissionKind
  status: CommissionStatus
  amountMinor: number
  refundedMinor: number
  payoutId: string | null
  dueAt: string
  reversesCommissionId: string | null
}

interface ModelPayout {
  id: string
  affiliateId: string
  campaignId: string
  status: PayoutStatus
  amountMinor: number
  commissionIds: string[]
}

type Step =
  | { type: 'sale'; affiliate: number; cents: number; term: number }
  | { type: 'refund'; commission: number; paidOnly: boolean; mode: 'all' | 'part' | 'almost' | 'raw'; k: number; raw: number }
  | { type: 'run'; aheadDays: number }
  | { type: 'move'; payout: number; liveOnly: boolean; to: PayoutStatus }
  | { type: 'tick'; days: number }

const cents = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 999 }), fc.integer({ min: 1, max: 1_000_000 }))
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ type: fc.constant('sale' as const), affiliate: fc.nat(5), cents, term: fc.constantFrom(0, 1, 7, 30) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('refund' as const),
      commission: fc.nat(60),
      paidOnly: fc.boolean(),
      mode: fc.constantFrom('all' as const, 'part' as const, 'almost' as const, 'raw' as const),
      k: fc.integer({ min: 0, max: 4 }),
      raw: fc.integer({ min: -10, max: 1_200_000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('run' as const), aheadDays: fc.constantFrom(0, 0, 3, 40) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('move' as const),
      payout: fc.nat(8),
      liveOnly: fc.boolean(),
      to: fc.oneof(fc.constantFrom(...PAYOUT_STATUSES), fc.constantFrom('processing' as const, 'paid' as const)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('tick' as const), days: fc.integer({ min: 0, max: 10 }) }) },
)

const affiliateConfig = fc.record({
  isBanned: fc.constantFrom(false, false, false, true),
  hasDetails: fc.constantFrom(true, true, false),
})

class Model {
  now = T0
  commissions: ModelCommission[] = []
  payouts: ModelPayout[] = []
  sold = new Map<string, number>()
  refunded = new Map<string, number>()
  private nextId = 0

  constructor(
    readonly affiliates: RunAffiliate[],
    readonly campaigns: RunCampaign[],
    readonly campaignOf: (affiliateId: string) => string,
  ) {}

  id(prefix: string): string {
    return `${prefix}${String(++this.nextId).padStart(4, '0')}`
  }

  iso(ms = this.now): string {
    return new Date(ms).toISOString()
  }

  add(map: Map<string, number>, key: string, minor: number): void {
    map.set(key, (map.get(key) ?? 0) + minor)
  }

  apply(s: Step): void {
    switch (s.type) {
      case 'sale': {
        const affiliate = this.affiliates[s.affiliate % this.affiliates.length]!
        this.commissions.push({
          id: this.id('c'),
          affiliateId: affiliate.id,
          campaignId: this.campaignOf(affiliate.id),
          kind: 'sale',
          status: 'pending',
          amountMinor: s.cents,
          refundedMinor: 0,
          payoutId: null,
          dueAt: dueAt(this.iso(), s.term),
          reversesCommissionId: null,
        })
        this.add(this.sold, affiliate.id, s.cents)
        return
      }
      case 'tick':
        this.now += s.days * DAY
        return
      case 'refund':
        this.refund(s)
        return
      case 'run':
        this.run(this.iso(this.now + s.aheadDays * DAY))
        return
      case 'move':
        this.move(s)
        return
    }
  }

  refund(s: Extract<Step, { type: 'refund' }>): void {
    // Half the refunds aim at paid commissions, which are rarer, so clawbacks are common enough.
    const paid = this.commissions.filter((c) => c.status === 'paid')
    const pool = s.paidOnly && paid.length > 0 ? paid : this.commissions
    if (pool.length === 0) return
    const c = pool[s.commission % pool.length]!
    const left = refundableMinor(c)
    const amount = s.mode === 'all' ? undefined : s.mode === 'part' ? Math.floor((left * s.k) / 4) : s.mode === 'almost' ? left - 1 : s.raw
    const before = JSON.stringify([this.commissions, this.payouts])
    const payoutStatus = c.payoutId === null ? null : this.payouts.find((p) => p.id === c.payoutId)!.status
    const plan = planRefund({ ...c, payoutStatus }, amount, this.iso())
    const shouldRefuse = c.kind === 'clawback' || c.status === 'refunded' || (amount ?? left) <= 0 || (amount ?? left) > left
    if (plan instanceof AffiliateError) {
      expect(shouldRefuse).toBe(true)
      expect(plan.status).toBe(422)
      expect(JSON.stringify([this.commissions, this.payouts])).toBe(before)
      return
    }
    expect(shouldRefuse).toBe(false)
    expect(plan.refundMinor).toBe(amount ?? left)
    this.add(this.refunded, c.affiliateId, plan.refundMinor)
    if (plan.type === 'paid') {
      // After payment: paid, in a frozen payout, or refunded after payment before.
      expect(c.status === 'paid' || (payoutStatus !== null && payoutStatus !== 'pending') || c.refundedMinor > 0).toBe(true)
      c.refundedMinor = plan.refundedMinor
      c.status = plan.status
      this.commissions.push({
        ...plan.clawback,
        id: this.id('k'),
        affiliateId: c.affiliateId,
        campaignId: c.campaignId,
      })
      return
    }
    const leaving = plan.leavesPayoutId
    c.amountMinor = plan.amountMinor
    c.status = plan.status
    c.payoutId = plan.payoutId
    if (leaving === null) return
    const payout = this.payouts.find((p) => p.id === leaving)!
    expect(payout.status).toBe('pending')
    const minimum = this.campaigns.find((x) => x.id === payout.campaignId)!.minimumPayoutMinor
    const after = payoutAfterRemoval({ ...payout, commissionCount: payout.commissionIds.length }, plan.removedFromPayoutMinor, minimum)
    payout.commissionIds = payout.commissionIds.filter((id) => id !== c.id)
    payout.amountMinor = after.amountMinor
    if (after.status !== payout.status) this.setStatus(payout, after.status)
  }

  run(asOf: string): void {
    const asOfMs = Date.parse(asOf)
    const dueBefore = this.dueNet(asOfMs)
    const plan = planPayoutRun({ commissions: this.commissions, affiliates: this.affiliates, campaigns: this.campaigns, asOf })
    const taken = new Set<string>()
    const paidPerGroup = new Map<string, number>()
    for (const p of plan.payouts) {
      let sum = 0
      for (const id of p.commissionIds) {
        expect(taken.has(id)).toBe(false)
        taken.add(id)
        const c = this.commissions.find((x) => x.id === id)!
        expect(isDue(c, asOfMs)).toBe(true)
        expect([c.affiliateId, c.campaignId]).toEqual([p.affiliateId, p.campaignId])
        sum += c.amountMinor
      }
      expect(p.amountMinor).toBe(sum)
      expect(p.amountMinor).toBeGreaterThan(0)
      const affiliate = this.affiliates.find((a) => a.id === p.affiliateId)!
      expect(affiliate.isBanned).toBe(false)
      expect(p.amountMinor).toBeGreaterThanOrEqual(this.campaigns.find((x) => x.id === p.campaignId)!.minimumPayoutMinor)
      paidPerGroup.set(p.affiliateId, p.amountMinor)
      const payout: ModelPayout = {
        id: this.id('p'),
        affiliateId: p.affiliateId,
        campaignId: p.campaignId,
        status: 'pending',
        amountMinor: p.amountMinor,
        commissionIds: [...p.commissionIds],
      }
      this.payouts.push(payout)
      const effect = commissionEffect('enter')
      for (const id of p.commissionIds) {
        const c = this.commissions.find((x) => x.id === id)!
        c.status = effect.status!
        c.payoutId = payout.id
      }
    }
    for (const s of plan.skipped) {
      expect(paidPerGroup.has(s.affiliateId)).toBe(false)
      expect(s.amountMinor).toBe(dueBefore.get(s.affiliateId))
    }
    // Every due commission either went into a payout or stays due; the due net moved, unchanged, into payouts.
    const dueAfter = this.dueNet(asOfMs)
    for (const [affiliateId, net] of dueBefore) {
      expect((dueAfter.get(affiliateId) ?? 0) + (paidPerGroup.get(affiliateId) ?? 0)).toBe(net)
      if (paidPerGroup.has(affiliateId)) expect(dueAfter.has(affiliateId)).toBe(false)
    }
    expect(plan.payouts.length + plan.skipped.length).toBe(dueBefore.size)
  }

  move(s: Extract<Step, { type: 'move' }>): void {
    // Half the moves aim at payouts still moving, so many reach paid; the rest also try final ones.
    const moving = this.payouts.filter((p) => p.status === 'pending' || p.status === 'processing')
    const pool = s.liveOnly && moving.length > 0 ? moving : this.payouts
    if (pool.length === 0) return
    const payout = pool[s.payout % pool.length]!
    const error = payoutMoveError(payout.status, s.to)
    if (error) {
      expect(error.status).toBe(422)
      return
    }
    if (s.to !== payout.status) this.setStatus(payout, s.to)
  }

  setStatus(payout: ModelPayout, to: PayoutStatus): void {
    const effect = commissionEffect(to)
    for (const c of this.commissions) {
      if (c.payoutId !== payout.id) continue
      // Refunded in full while its payout was frozen: paid, nothing of it is left.
      if (effect.status)
        c.status = effect.status === 'paid' && c.refundedMinor > 0 && c.refundedMinor === c.amountMinor ? 'refunded' : effect.status
      if (effect.payoutId === 'clear') c.payoutId = null
    }
    payout.status = to
  }

  /** Per affiliate with something due at `asOfMs`: the net of its due commissions. */
  dueNet(asOfMs: number): Map<string, number> {
    const net = new Map<string, number>()
    for (const c of this.commissions) if (isDue(c, asOfMs)) this.add(net, c.affiliateId, c.amountMinor)
    return net
  }

  check(): void {
    const live = new Map(this.payouts.filter((p) => ['pending', 'processing', 'paid'].includes(p.status)).map((p) => [p.id, p]))
    const inPayouts = new Map<string, string>()
    for (const p of live.values()) {
      for (const id of p.commissionIds) {
        expect(inPayouts.has(id)).toBe(false)
        inPayouts.set(id, p.id)
      }
    }
    const buckets = new Map<string, Balance>()
    for (const a of this.affiliates) buckets.set(a.id, { held: 0, due: 0, inPayout: 0, paidOut: 0, paidOutside: 0 })
    for (const c of this.commissions) {
      const b = buckets.get(c.affiliateId)!
      expect(inPayouts.get(c.id) ?? null).toBe(c.payoutId)
      if (c.payoutId !== null) {
        const p = live.get(c.payoutId)!
        expect(p).toBeDefined()
        if (p.status === 'paid') {
          expect(['paid', 'refunded']).toContain(c.status)
          b.paidOut += c.amountMinor
        } else {
          expect(c.status).toBe('processing')
          b.inPayout += c.amountMinor
        }
      } else if (c.status === 'pending') {
        if (Date.parse(c.dueAt) <= this.now) b.due += c.amountMinor
        else b.held += c.amountMinor
      } else {
        // Refunded to zero before it was ever paid: it holds nothing.
        expect(c.status).toBe('refunded')
        expect(c.amountMinor).toBe(0)
      }
      if (c.kind === 'sale') {
        const clawedBack = this.commissions.filter((k) => k.reversesCommissionId === c.id).reduce((sum, k) => sum + k.amountMinor, 0)
        expect(0 - clawedBack).toBe(c.refundedMinor)
        expect(c.refundedMinor).toBeLessThanOrEqual(c.amountMinor)
        // Refunded after payment: paid (refunded when nothing is left), or still in its frozen payout,
        // or back from it when it failed.
        if (c.refundedMinor > 0 && (c.status === 'paid' || c.status === 'refunded'))
          expect(c.status).toBe(c.refundedMinor === c.amountMinor ? 'refunded' : 'paid')
        else if (c.refundedMinor > 0) expect(c.status).toBe(c.payoutId === null ? 'pending' : 'processing')
      } else {
        expect(c.amountMinor).toBeLessThan(0)
      }
    }
    for (const p of live.values()) {
      const sum = this.commissions.filter((c) => c.payoutId === p.id).reduce((s, c) => s + c.amountMinor, 0)
      expect(p.amountMinor).toBe(sum)
      if (p.status !== 'paid') expect(p.amountMinor).toBeGreaterThan(0)
    }
    for (const a of this.affiliates) {
      const mine = this.commissions.filter((c) => c.affiliateId === a.id)
      const b = buckets.get(a.id)!
      expect(
        balanceOf(
          mine,
          this.payouts.filter((p) => p.affiliateId === a.id),
          this.iso(),
        ),
      ).toEqual(b)
      const held = b.held + b.due + b.inPayout + b.paidOut
      expect(held + (this.refunded.get(a.id) ?? 0)).toBe(this.sold.get(a.id) ?? 0)
      expect(earningsOf(mine)).toBe(held)
    }
  }
}

describe('payout domain, property', () => {
  it('conserves money through sales, refunds, runs and payout moves', () => {
    fc.assert(
      fc.property(
        fc.array(affiliateConfig, { minLength: 6, maxLength: 6 }),
        fc.constantFrom(0, 1, 5000),
        fc.array(step, { minLength: 1, maxLength: 80, size: 'max' }),
        (configs, minimum, steps) => {
          const campaigns: RunCampaign[] = [
            { id: 'camp-a', minimumPayoutMinor: 0, currency: 'EUR' },
            { id: 'camp-b', minimumPayoutMinor: minimum },
          ]
          const affiliates: RunAffiliate[] = configs.map((c, i) => ({
            id: `aff${i}`,
            isBanned: c.isBanned,
            payoutMethod: c.hasDetails ? 'PAYPAL' : null,
            payoutEmail: c.hasDetails ? `aff${i}@example.com` : '',
          }))
          const model = new Model(affiliates, campaigns, (id) => (Number(id.slice(3)) % 2 === 0 ? 'camp-a' : 'camp-b'))
          for (const s of steps) {
            model.apply(s)
            model.check()
          }
        },
      ),
      { numRuns: 100 },
    )
  })
})

describe('dueAt and planPayoutRun, properties', () => {
  const day = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 11, 31) }).map((ms) => new Date(ms).toISOString())

  it('adds calendar days in UTC, keeping the time of day, and composes', () => {
    fc.assert(
      fc.property(day, fc.integer({ min: 0, max: 3650 }), fc.integer({ min: 0, max: 400 }), (date, n, m) => {
        const d = new Date(date)
        const calendar = new Date(
          Date.UTC(
            d.getUTCFullYear(),
            d.getUTCMonth(),
            d.getUTCDate() + n,
            d.getUTCHours(),
            d.getUTCMinutes(),
            d.getUTCSeconds(),
            d.getUTCMilliseconds(),
          ),
        )
        expect(dueAt(date, n)).toBe(calendar.toISOString())
        expect(dueAt(dueAt(date, n), m)).toBe(dueAt(date, n + m))
      }),
    )
  })

  it('answers the same plan whatever the order of its input', () => {
    const commission = fc.record({
      affiliate: fc.nat(4),
      amountMinor: fc.integer({ min: -5000, max: 20_000 }),
      status: fc.constantFrom<CommissionStatus>('pending', 'pending', 'processing', 'paid', 'refunded'),
      dueDay: fc.integer({ min: 0, max: 40 }),
      inPayout: fc.boolean(),
    })
    fc.assert(
      fc.property(
        fc.array(commission, { maxLength: 30 }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        fc.nat(),
        (specs, banned, seed) => {
          const affiliates: RunAffiliate[] = banned.map((isBanned, i) => ({
            id: `aff${i}`,
            isBanned,
            payoutMethod: i === 3 ? null : 'WISE',
            payoutEmail: `aff${i}@example.com`,
          }))
          const campaigns: RunCampaign[] = [
            { id: 'camp-a', minimumPayoutMinor: 0 },
            { id: 'camp-b', minimumPayoutMinor: 10_000 },
          ]
          const commissions = specs.map((s, i) => ({
            id: `c${String(i).padStart(3, '0')}`,
            affiliateId: `aff${s.affiliate}`,
            campaignId: s.affiliate % 2 === 0 ? 'camp-a' : 'camp-b',
            kind: (s.amountMinor < 0 ? 'clawback' : 'sale') as CommissionKind,
            status: s.status,
            amountMinor: s.amountMinor,
            dueAt: new Date(T0 + s.dueDay * DAY).toISOString(),
            payoutId: s.inPayout ? 'p-old' : null,
          }))
          const asOf = new Date(T0 + 20 * DAY).toISOString()
          const shuffle = <T>(items: readonly T[]): T[] =>
            items
              .map((item, i) => ({ item, key: (i * 7919 + seed) % 104_729 }))
              .sort((a, b) => a.key - b.key)
              .map((x) => x.item)
          const plan = planPayoutRun({ commissions, affiliates, campaigns, asOf })
          expect(
            planPayoutRun({ commissions: shuffle(commissions), affiliates: shuffle(affiliates), campaigns: shuffle(campaigns), asOf }),
          ).toEqual(plan)
          const ids = plan.payouts.flatMap((p) => p.commissionIds)
          expect(new Set(ids).size).toBe(ids.length)
          const due = commissions.filter((c) => isDue(c, Date.parse(asOf)))
          expect(plan.payouts.reduce((s, p) => s + p.amountMinor, 0) + plan.skipped.reduce((s, p) => s + p.amountMinor, 0)).toBe(
            due.reduce((s, c) => s + c.amountMinor, 0),
          )
        },
      ),
    )
  })
})
