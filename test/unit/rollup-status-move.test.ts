import { describe, expect, it } from 'vitest'
import { COMMISSION_STATUSES } from '../../src/domain/commission-status.js'
import type { CommissionKind } from '../../src/domain/records.js'
import { commissionEntries, statusMoveFigures } from '../../src/reports/rollup.js'
import { commission } from '../../src/storage/sample-records.js'

// A status move of many commissions (a payout run, a payout paid or failed) adds one entry per
// commission; it must be what taking the record's figures out and putting the moved record's in adds up to.
describe('statusMoveFigures', () => {
  const sum = (entries: { deltas: Record<string, number | undefined> }[]) => {
    const out: Record<string, number> = {}
    for (const { deltas } of entries) for (const [counter, value] of Object.entries(deltas)) out[counter] = (out[counter] ?? 0) + value!
    return Object.fromEntries(Object.entries(out).filter(([, value]) => value !== 0))
  }
  for (const kind of ['sale', 'clawback'] as CommissionKind[])
    for (const from of COMMISSION_STATUSES)
      for (const to of COMMISSION_STATUSES)
        it(`a ${kind} moving from ${from} to ${to}`, () => {
          const record = commission({
            kind,
            status: from,
            amountMinor: kind === 'clawback' ? -700 : 1250,
            refundedMinor: kind === 'sale' ? 300 : 0,
          })
          const expected = sum(commissionEntries(record, { ...record, status: to }))
          expect(statusMoveFigures(record, to) ?? {}).toEqual(expected)
        })
})
