import { describe, expect, it } from 'vitest'
import {
  addCalendarMonths,
  afterSale,
  countsInHistory,
  percentageOf,
  refundShare,
  reward,
  type RewardRule,
  type SaleCustomer,
} from '../../src/domain/reward.js'

// The reward rules as the pure function every sale goes through (src/domain/reward.ts).

const rule = (overrides: Partial<RewardRule> = {}): RewardRule => ({
  commissionType: 'percentage',
  amountMinor: 20_00,
  currency: 'USD',
  recurringMonths: null,
  maxCommissionsPerCustomer: null,
  ...overrides,
})
const earner = { isBanned: false, isActive: true }
const ATTRIBUTED = '2026-01-01T00:00:00.000Z'
const none: SaleCustomer = { attributedAt: ATTRIBUTED, firstSaleAt: null, salesCount: 0, commissionCount: 0 }
const sale = (amountMinor: number, paidAt = '2026-01-31T10:00:00.000Z', currency = 'USD') => ({ amountMinor, currency, paidAt })

describe('reward', () => {
  it('rounds a percentage half away from zero to the cent and caps a fixed amount at the sale', () => {
    expect(percentageOf(4, 12_50)).toBe(1) // 0.005
    expect(percentageOf(3, 12_50)).toBe(0) // 0.00375
    expect(percentageOf(9_999, 20_00)).toBe(2_000) // 19.998
    expect(percentageOf(100_000_000_000, 33_33)).toBe(33_330_000_000)
    expect(reward(rule(), earner, none, sale(49_99))).toEqual({ type: 'commission', commissionMinor: 10_00, adminEarnedMinor: 39_99 })
    expect(reward(rule({ commissionType: 'fixed', amountMinor: 25_00 }), earner, none, sale(10_00))).toEqual({
      type: 'commission',
      commissionMinor: 10_00,
      adminEarnedMinor: 0,
    })
  })

  it('checks the skip reasons in order', () => {
    expect(reward(null, null, null, sale(100))).toEqual({ type: 'skipped', reason: 'not_attributed' })
    // Paid a millisecond before the customer was attributed: no referred customer's sale, whatever else holds.
    const early = reward(rule(), { isBanned: true, isActive: false }, none, sale(100, '2025-12-31T23:59:59.999Z', 'EUR'))
    expect(early).toEqual({ type: 'skipped', reason: 'before_attribution' })
    expect(countsInHistory(early)).toBe(false)
    expect(reward(rule(), earner, none, sale(100, ATTRIBUTED)).type).toBe('commission')
    expect(reward(rule(), { isBanned: true, isActive: false }, none, sale(100, undefined, 'EUR'))).toEqual({
      type: 'skipped',
      reason: 'currency_mismatch',
    })
    expect(countsInHistory({ type: 'skipped', reason: 'currency_mismatch' })).toBe(true)
    expect(reward(rule(), { isBanned: true, isActive: false }, none, sale(100))).toEqual({ type: 'skipped', reason: 'affiliate_banned' })
    expect(reward(rule(), { isBanned: false, isActive: false }, none, sale(100))).toEqual({ type: 'skipped', reason: 'affiliate_inactive' })
    const one = { ...afterSale(none, '2026-01-31T10:00:00.000Z', true), attributedAt: ATTRIBUTED }
    expect(reward(rule({ recurringMonths: 0, maxCommissionsPerCustomer: 1 }), earner, one, sale(100))).toEqual({
      type: 'skipped',
      reason: 'outside_recurring_window',
    })
    expect(reward(rule({ maxCommissionsPerCustomer: 1 }), earner, one, sale(1))).toEqual({
      type: 'skipped',
      reason: 'max_commissions_reached',
    })
    expect(reward(rule(), earner, one, sale(1))).toEqual({ type: 'skipped', reason: 'zero_amount' })
  })

  it('counts the recurring window in calendar months (UTC) from the earliest paid sale', () => {
    expect(new Date(addCalendarMonths('2024-01-31T10:00:00.000Z', 1)).toISOString()).toBe('2024-02-29T10:00:00.000Z')
    expect(new Date(addCalendarMonths('2023-01-31T10:00:00.000Z', 1)).toISOString()).toBe('2023-02-28T10:00:00.000Z')
    expect(new Date(addCalendarMonths('2026-12-15T00:00:00.000Z', 1)).toISOString()).toBe('2027-01-15T00:00:00.000Z')
    expect(new Date(addCalendarMonths('2026-03-31T23:59:59.999Z', 120)).toISOString()).toBe('2036-03-31T23:59:59.999Z')
    const history = { ...afterSale(none, '2026-03-10T00:00:00.000Z', true), attributedAt: ATTRIBUTED }
    const at = (paidAt: string) => reward(rule({ recurringMonths: 2 }), earner, history, sale(100, paidAt)).type
    expect(at('2026-05-09T23:59:59.999Z')).toBe('commission')
    expect(at('2026-05-10T00:00:00.000Z')).toBe('skipped')
    // A sale reported late, paid before the first one known, is the first paid sale.
    expect(afterSale(history, '2026-02-01T00:00:00.000Z', false)).toEqual({
      firstSaleAt: '2026-02-01T00:00:00.000Z',
      salesCount: 2,
      commissionCount: 1,
    })
  })

  it("takes a refund's share of the commission on the running total, the last refund what is left", () => {
    let state = { amountMinor: 100_00, refundedMinor: 0, commissionMinor: 33_33, commissionRefundedMinor: 0 }
    const taken: number[] = []
    for (const part of [33_33, 33_33, 33_34]) {
      const share = refundShare(state, part)
      taken.push(share)
      state = { ...state, refundedMinor: state.refundedMinor + part, commissionRefundedMinor: state.commissionRefundedMinor + share }
    }
    expect(taken).toEqual([11_11, 11_11, 11_11])
    expect(taken.reduce((a, b) => a + b)).toBe(33_33)
    expect(refundShare({ amountMinor: 3, refundedMinor: 0, commissionMinor: 1, commissionRefundedMinor: 0 }, 1)).toBe(0)
    expect(refundShare({ amountMinor: 3, refundedMinor: 1, commissionMinor: 1, commissionRefundedMinor: 0 }, 2)).toBe(1)
  })
})
