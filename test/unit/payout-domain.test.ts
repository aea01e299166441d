import { describe, expect, it } from 'vitest'
import { balanceOf, dueAt, earningsOf } from '../../src/domain/due.js'
import {
  canMovePayout,
  commissionEffect,
  PAYOUT_STATUSES,
  payoutAfterRemoval,
  payoutMoveError,
  type PayoutStatus,
} from '../../src/domain/payout-status.js'
import { planRefund, type RefundableCommission } from '../../src/domain/refund.js'
import { AffiliateError } from '../../src/errors.js'

// The pure payout and refund rules of SPEC "Commissions: kinds, due dates, refunds" and "Payouts".

const ALLOWED: ReadonlySet<string> = new Set([
  'pending>processing',
  'pending>failed',
  'pending>canceled',
  'processing>paid',
  'processing>failed',
])

describe('payout state machine', () => {
  const pairs = PAYOUT_STATUSES.flatMap((from) => PAYOUT_STATUSES.map((to) => [from, to] as const))

  it('covers all 25 pairs', () => {
    expect(pairs).toHaveLength(25)
  })

  it.each(pairs)('%s → %s', (from, to) => {
    const allowed = from === to || ALLOWED.has(`${from}>${to}`)
    expect(canMovePayout(from, to)).toBe(allowed)
    const error = payoutMoveError(from, to)
    if (allowed) {
      expect(error).toBeUndefined()
    } else {
      expect(error).toBeInstanceOf(AffiliateError)
      expect(error!.status).toBe(422)
      expect(error!.message).toContain(`from ${from} to ${to}`)
    }
  })

  it('says what is allowed instead, or that the status is final', () => {
    expect(payoutMoveError('processing', 'canceled')!.message).toBe(
      'Cannot change payout status from processing to canceled: from processing it may move to paid or failed',
    )
    expect(payoutMoveError('paid', 'failed')!.message).toBe('Cannot change payout status from paid to failed: a paid payout is final')
  })

  it('describes what each move does to the commissions, as data', () => {
    expect(commissionEffect('enter')).toEqual({ status: 'processing', payoutId: 'set' })
    expect(commissionEffect('pending')).toEqual({ status: null, payoutId: 'keep' })
    expect(commissionEffect('processing')).toEqual({ status: null, payoutId: 'keep' })
    expect(commissionEffect('paid')).toEqual({ status: 'paid', payoutId: 'keep' })
    expect(commissionEffect('failed')).toEqual({ status: 'pending', payoutId: 'clear' })
    expect(commissionEffect('canceled')).toEqual({ status: 'pending', payoutId: 'clear' })
  })

  it('recomputes a pending payout a commission left; one left at zero or less, or below the minimum, is canceled, keeping its amount and count', () => {
    expect(payoutAfterRemoval({ status: 'pending', amountMinor: 1000, commissionCount: 3 }, 300)).toEqual({
      status: 'pending',
      amountMinor: 700,
      commissionCount: 2,
    })
    expect(payoutAfterRemoval({ status: 'pending', amountMinor: 1000, commissionCount: 1 }, 1000)).toEqual({
      status: 'canceled',
      amountMinor: 1000,
      commissionCount: 1,
    })
    expect(payoutAfterRemoval({ status: 'pending', amountMinor: 500, commissionCount: 2 }, 800)).toEqual({
      status: 'canceled',
      amountMinor: 500,
      commissionCount: 2,
    })
    // The minimum: 700 left is still at least 700, 699 is below it.
    expect(payoutAfterRemoval({ status: 'pending', amountMinor: 1000, commissionCount: 3 }, 300, 700)).toEqual({
      status: 'pending',
      amountMinor: 700,
      commissionCount: 2,
    })
    expect(payoutAfterRemoval({ status: 'pending', amountMinor: 1000, commissionCount: 3 }, 301, 700)).toEqual({
      status: 'canceled',
      amountMinor: 1000,
      commissionCount: 3,
    })
  })

  it('never takes a commission out of a payout from processing on: it is frozen', () => {
    for (const status of ['processing', 'paid', 'failed', 'canceled'] as PayoutStatus[]) {
      expect(() => payoutAfterRemoval({ status, amountMinor: 1000, commissionCount: 1 }, 1)).toThrow(TypeError)
    }
  })
})

const NOW = '2026-11-23T12:00:00.000Z'
const sale = (over: Partial<RefundableCommission> = {}): RefundableCommission => ({
  id: 'c1',
  status: 'pending',
  kind: 'sale',
  amountMinor: 1000,
  refundedMinor: 0,
  payoutId: null,
  payoutStatus: null,
  ...over,
})
const refused = (result: unknown, message: RegExp): void => {
  expect(result).toBeInstanceOf(AffiliateError)
  expect((result as AffiliateError).status).toBe(422)
  expect((result as AffiliateError).message).toMatch(message)
}

describe('planRefund', () => {
  it('lowers a pending commission, keeping it pending', () => {
    expect(planRefund(sale(), 300, NOW)).toEqual({
      type: 'unpaid',
      refundMinor: 300,
      amountMinor: 700,
      status: 'pending',
      payoutId: null,
      leavesPayoutId: null,
      removedFromPayoutMinor: 0,
    })
  })

  it('makes a pending commission refunded at zero, by default refunding all of it', () => {
    expect(planRefund(sale(), undefined, NOW)).toMatchObject({ type: 'unpaid', refundMinor: 1000, amountMinor: 0, status: 'refunded' })
    expect(planRefund(sale(), 1000, NOW)).toMatchObject({ amountMinor: 0, status: 'refunded' })
  })

  it('keeps a processing commission outside any payout processing on a partial refund', () => {
    expect(planRefund(sale({ status: 'processing' }), 400, NOW)).toMatchObject({
      amountMinor: 600,
      status: 'processing',
      leavesPayoutId: null,
      removedFromPayoutMinor: 0,
    })
  })

  it('takes a commission out of its pending payout on any refund, back to pending when something is left', () => {
    const inPayout = sale({ status: 'processing', payoutId: 'p1', payoutStatus: 'pending' })
    expect(planRefund(inPayout, 400, NOW)).toEqual({
      type: 'unpaid',
      refundMinor: 400,
      amountMinor: 600,
      status: 'pending',
      payoutId: null,
      leavesPayoutId: 'p1',
      removedFromPayoutMinor: 1000,
    })
    expect(planRefund(inPayout, undefined, NOW)).toMatchObject({
      amountMinor: 0,
      status: 'refunded',
      payoutId: null,
      leavesPayoutId: 'p1',
      removedFromPayoutMinor: 1000,
    })
  })

  it('refunds a commission in a processing payout as after payment: it stays in the frozen payout, a clawback takes the refund back', () => {
    const frozen = sale({ status: 'processing', payoutId: 'p1', payoutStatus: 'processing' })
    expect(planRefund(frozen, 400, NOW)).toEqual({
      type: 'paid',
      refundMinor: 400,
      refundedMinor: 400,
      status: 'processing',
      clawback: {
        kind: 'clawback',
        amountMinor: -400,
        status: 'pending',
        dueAt: NOW,
        reversesCommissionId: 'c1',
        payoutId: null,
        refundedMinor: 0,
      },
    })
    // All of it: it stays processing (its payout makes it refunded when paid).
    expect(planRefund(frozen, undefined, NOW)).toMatchObject({ type: 'paid', refundMinor: 1000, refundedMinor: 1000, status: 'processing' })
    expect(planRefund({ ...frozen, refundedMinor: 400 }, 601, NOW)).toBeInstanceOf(AffiliateError)
  })

  it('refunds a commission that was refunded after payment before (back from a failed payout) through clawbacks too', () => {
    const back = sale({ status: 'pending', refundedMinor: 400 })
    expect(planRefund(back, undefined, NOW)).toMatchObject({
      type: 'paid',
      refundMinor: 600,
      refundedMinor: 1000,
      status: 'pending',
      clawback: { amountMinor: -600 },
    })
    refused(planRefund(back, 601, NOW), /more than what is left.*600/)
  })

  it('raises refundedAmount of a paid commission and creates a clawback due now', () => {
    const paid = sale({ status: 'paid', payoutId: 'p1', payoutStatus: 'paid', refundedMinor: 200 })
    expect(planRefund(paid, 300, NOW)).toEqual({
      type: 'paid',
      refundMinor: 300,
      refundedMinor: 500,
      status: 'paid',
      clawback: {
        kind: 'clawback',
        amountMinor: -300,
        status: 'pending',
        dueAt: NOW,
        reversesCommissionId: 'c1',
        payoutId: null,
        refundedMinor: 0,
      },
    })
  })

  it('makes a paid commission refunded when nothing is left, by default refunding what is left', () => {
    const paid = sale({ status: 'paid', payoutId: 'p1', payoutStatus: 'paid', refundedMinor: 200 })
    expect(planRefund(paid, undefined, NOW)).toMatchObject({
      refundMinor: 800,
      refundedMinor: 1000,
      status: 'refunded',
      clawback: { amountMinor: -800 },
    })
    expect(planRefund(paid, 800, NOW)).toMatchObject({ status: 'refunded' })
    expect(planRefund(paid, 799, NOW)).toMatchObject({ refundedMinor: 999, status: 'paid', clawback: { amountMinor: -799 } })
  })

  it('refuses more than what is left', () => {
    refused(planRefund(sale(), 1001, NOW), /more than what is left.*1000/)
    refused(planRefund(sale({ status: 'paid', refundedMinor: 600 }), 401, NOW), /more than what is left.*400/)
  })

  it('refuses a clawback, whatever its status', () => {
    for (const status of ['pending', 'processing', 'paid'] as const) {
      refused(planRefund(sale({ kind: 'clawback', amountMinor: -300, status }), undefined, NOW), /clawback cannot be refunded/)
    }
  })

  it('refuses a refunded commission', () => {
    refused(planRefund(sale({ status: 'refunded', amountMinor: 0 }), undefined, NOW), /already refunded/)
    refused(planRefund(sale({ status: 'refunded', refundedMinor: 1000 }), 1, NOW), /already refunded/)
  })

  it.each([0, -1, -1000, 0.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses an amount of %s', (amount) => {
    refused(planRefund(sale(), amount, NOW), /greater than zero/)
  })

  it('refuses a default refund when nothing is left', () => {
    refused(planRefund(sale({ amountMinor: 0 }), undefined, NOW), /Nothing is left/)
  })
})

describe('dueAt', () => {
  it.each([
    ['2026-01-01T00:00:00.000Z', 0, '2026-01-01T00:00:00.000Z'],
    ['2026-01-31T10:30:00.000Z', 1, '2026-02-01T10:30:00.000Z'],
    ['2026-01-31T00:00:00.000Z', 28, '2026-02-28T00:00:00.000Z'],
    ['2026-01-31T00:00:00.000Z', 29, '2026-03-01T00:00:00.000Z'],
    ['2024-01-31T00:00:00.000Z', 29, '2024-02-29T00:00:00.000Z'],
    ['2024-02-28T23:59:59.999Z', 1, '2024-02-29T23:59:59.999Z'],
    ['2024-02-29T12:00:00.000Z', 1, '2024-03-01T12:00:00.000Z'],
    ['2024-02-29T12:00:00.000Z', 365, '2025-02-28T12:00:00.000Z'],
    ['2023-02-28T12:00:00.000Z', 1, '2023-03-01T12:00:00.000Z'],
    ['2100-02-28T00:00:00.000Z', 1, '2100-03-01T00:00:00.000Z'],
    ['2000-02-28T00:00:00.000Z', 1, '2000-02-29T00:00:00.000Z'],
    ['2026-12-31T23:00:00.000Z', 1, '2027-01-01T23:00:00.000Z'],
    ['2026-04-30T00:00:00.000Z', 31, '2026-05-31T00:00:00.000Z'],
    ['2026-03-28T12:00:00.000Z', 2, '2026-03-30T12:00:00.000Z'],
    ['2026-10-24T12:00:00.000Z', 2, '2026-10-26T12:00:00.000Z'],
    ['2026-01-01T00:00:00+02:00', 1, '2026-01-01T22:00:00.000Z'],
    ['2026-06-15', 30, '2026-07-15T00:00:00.000Z'],
  ])('%s + %i days is %s', (date, days, expected) => {
    expect(dueAt(date, days)).toBe(expected)
  })

  it('refuses a bad date or term', () => {
    for (const bad of [
      'not a date',
      '2026-01-01T00:00:00',
      'Nov 23 2026',
      '2026-02-29T00:00:00Z',
      '2026-02-30',
      '2026-13-01',
      '2026-1-1',
      '',
    ]) {
      expect(() => dueAt(bad, 1), bad).toThrow(/commissionDate is not a valid timestamp/)
    }
    expect(() => dueAt('2026-01-01T00:00:00Z', -1)).toThrow(TypeError)
    expect(() => dueAt('2026-01-01T00:00:00Z', 1.5)).toThrow(TypeError)
    expect(() => dueAt('2026-01-01T00:00:00Z', 1e9)).toThrow(/out of the timestamp range/)
  })
})

describe('earningsOf', () => {
  it('sums sales not refunded, less what was refunded, and never counts clawbacks', () => {
    expect(earningsOf([])).toBe(0)
    expect(
      earningsOf([
        { kind: 'sale', status: 'pending', amountMinor: 1000, refundedMinor: 0 },
        { kind: 'sale', status: 'processing', amountMinor: 500, refundedMinor: 0 },
        { kind: 'sale', status: 'paid', amountMinor: 2000, refundedMinor: 300 },
        { kind: 'sale', status: 'refunded', amountMinor: 700, refundedMinor: 700 },
        { kind: 'sale', status: 'refunded', amountMinor: 0, refundedMinor: 0 },
        { kind: 'clawback', status: 'pending', amountMinor: -300, refundedMinor: 0 },
        { kind: 'clawback', status: 'paid', amountMinor: -700, refundedMinor: 0 },
      ]),
    ).toBe(1000 + 500 + 1700)
  })
})

describe('balanceOf', () => {
  it('splits pending commissions by due date, payouts by status, and counts commissions paid outside payouts', () => {
    const asOf = '2026-11-23T00:00:00.000Z'
    const old = '2026-10-01T00:00:00.000Z'
    expect(
      balanceOf(
        [
          { status: 'pending', amountMinor: 1000, refundedMinor: 0, dueAt: '2026-11-23T00:00:00.001Z', payoutId: null },
          { status: 'pending', amountMinor: 400, refundedMinor: 0, dueAt: asOf, payoutId: null },
          { status: 'pending', amountMinor: -600, refundedMinor: 0, dueAt: '2026-11-01T00:00:00.000Z', payoutId: null },
          { status: 'processing', amountMinor: 2500, refundedMinor: 0, dueAt: old, payoutId: 'p1' },
          { status: 'paid', amountMinor: 900, refundedMinor: 0, dueAt: old, payoutId: 'p2' },
          { status: 'refunded', amountMinor: 0, refundedMinor: 0, dueAt: old, payoutId: null },
          // Outside payouts: set processing or paid by hand, or refunded after such a payment.
          { status: 'processing', amountMinor: 30, refundedMinor: 0, dueAt: old, payoutId: null },
          { status: 'paid', amountMinor: 40, refundedMinor: 10, dueAt: old, payoutId: null },
          { status: 'refunded', amountMinor: 50, refundedMinor: 50, dueAt: old, payoutId: null },
          // Refunded before payment: it counts nowhere.
          { status: 'refunded', amountMinor: 70, refundedMinor: 0, dueAt: old, payoutId: null },
        ],
        [
          { status: 'pending', amountMinor: 2000 },
          { status: 'processing', amountMinor: 500 },
          { status: 'paid', amountMinor: 900 },
          { status: 'failed', amountMinor: 111 },
          { status: 'canceled', amountMinor: 222 },
        ],
        asOf,
      ),
    ).toEqual({ held: 1000, due: -200, inPayout: 2500, paidOut: 900, paidOutside: 120 })
  })

  it('is all zero for nothing', () => {
    expect(balanceOf([], [], NOW)).toEqual({ held: 0, due: 0, inPayout: 0, paidOut: 0, paidOutside: 0 })
  })
})
