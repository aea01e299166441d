import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SeenFilter } from '../../src/tracking/seen-filter.js'
import { portableRuntime } from '../../src/runtime.js'
import { VisitorHasher } from '../../src/tracking/visitor.js'

// The tracker's filter of visitors with a click in the dedupe window: never a false "no".
const HOUR = 3_600_000
const hasher = new VisitorHasher('a test secret of thirty-two chars')
const visitor = (n: number) => hasher.visitor(portableRuntime, 20_000, 'click', 'link', '203.0.113.7', `agent ${n}`)

describe('SeenFilter', () => {
  it('says "maybe" for every visitor noted within the window before now, whatever the times', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(500), fc.nat(10 * HOUR)), { maxLength: 60 }), fc.nat(12 * HOUR), (notes, now) => {
        const filter = new SeenFilter(HOUR)
        const sorted = notes.map(([n, at]) => [n, at] as const).sort((a, b) => a[1] - b[1])
        for (const [n, at] of sorted) if (at <= now) filter.add(visitor(n), at)
        for (const [n, at] of sorted) if (at <= now && at > now - HOUR) expect(filter.mayHave(visitor(n), now)).toBe(true)
      }),
      { numRuns: 200 },
    )
  })

  it('forgets a visitor two windows on, and says "no" to one never noted (unless its bit is shared)', () => {
    const filter = new SeenFilter(HOUR)
    filter.add(visitor(1), 10 * HOUR + 5)
    expect(filter.mayHave(visitor(1), 10 * HOUR + 6)).toBe(true)
    expect(filter.mayHave(visitor(1), 11 * HOUR + 4)).toBe(true)
    expect(filter.mayHave(visitor(1), 12 * HOUR)).toBe(false)
    const noes = Array.from({ length: 1000 }, (_, n) => filter.mayHave(visitor(n + 2), 10 * HOUR + 6)).filter((may) => !may)
    expect(noes.length).toBeGreaterThan(990)
  })

  it('says "maybe" to everything when the clock went back behind what it noted', () => {
    const filter = new SeenFilter(HOUR)
    filter.add(visitor(1), 10 * HOUR)
    expect(filter.mayHave(visitor(2), 8 * HOUR)).toBe(true)
  })
})
