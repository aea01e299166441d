import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { memoryLimiterStore, type RateLimitRule } from '../../src/index.js'

const T0 = 1_000_000

const ruleArb = fc.record({
  capacity: fc.integer({ min: 1, max: 10 }),
  refillPerSecond: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constantFrom(0.5, 0.3, 2.5, 7.5)),
  maxInFlight: fc.constant(Infinity),
})
/** Gaps between requests in ms; many zeros make bursts. */
const scheduleArb = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 2_000 })), {
  minLength: 1,
  maxLength: 120,
})

/** Runs a schedule against `store`; answers the time of each request and whether it was admitted. */
async function admissions(rule: RateLimitRule, gaps: number[], store = memoryLimiterStore()) {
  const out: { at: number; allowed: boolean }[] = []
  let now = T0
  for (const gap of gaps) {
    now += gap
    const { allowed } = await store.consume('k', rule, now)
    if (allowed) await store.release('k')
    out.push({ at: now, allowed })
  }
  return out
}

describe('token bucket properties (fast-check)', () => {
  it('admits in any window [t1, t2] at most capacity + (t2 - t1) × rate requests', async () => {
    await fc.assert(
      fc.asyncProperty(ruleArb, scheduleArb, async (rule, gaps) => {
        const admitted = (await admissions(rule, gaps)).filter((r) => r.allowed).map((r) => r.at)
        for (let i = 0; i < admitted.length; i++) {
          for (let j = i; j < admitted.length; j++) {
            const count = j - i + 1
            const window = admitted[j]! - admitted[i]!
            // In thousandths of a token, so that the check itself is exact.
            expect(count * 1000).toBeLessThanOrEqual(rule.capacity * 1000 + window * rule.refillPerSecond + 1e-6)
          }
        }
      }),
      { numRuns: 300 },
    )
  })

  it('admits whenever the bucket allows: an idle key takes its whole burst', async () => {
    await fc.assert(
      fc.asyncProperty(ruleArb, scheduleArb, async (rule, gaps) => {
        const store = memoryLimiterStore()
        const last = (await admissions(rule, gaps, store)).at(-1)!.at
        // After a pause long enough to refill completely, the next `capacity` requests at one instant all pass.
        const later = last + Math.ceil((rule.capacity * 1000) / rule.refillPerSecond)
        for (let i = 0; i < rule.capacity; i++) expect((await store.consume('k', rule, later)).allowed).toBe(true)
        expect((await store.consume('k', rule, later)).allowed).toBe(false)
      }),
      { numRuns: 150 },
    )
  })

  it('a refused request consumes nothing: dropping the refused requests admits exactly the same ones', async () => {
    await fc.assert(
      fc.asyncProperty(ruleArb, scheduleArb, async (rule, gaps) => {
        const first = await admissions(rule, gaps)
        const keptTimes = first.filter((r) => r.allowed).map((r) => r.at)
        const keptGaps = keptTimes.map((at, i) => at - (i === 0 ? T0 : keptTimes[i - 1]!))
        if (keptGaps.length === 0) return
        const second = await admissions(rule, keptGaps)
        expect(second.every((r) => r.allowed)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  it('never has more than maxInFlight requests of a key admitted and unreleased', async () => {
    const step = fc.oneof(fc.constant({ kind: 'consume' as const }), fc.constant({ kind: 'release' as const }))
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 200 }), async (maxInFlight, steps) => {
        const rule: RateLimitRule = { capacity: 1000, refillPerSecond: 1000, maxInFlight }
        const store = memoryLimiterStore()
        let held = 0
        for (const s of steps) {
          if (s.kind === 'consume') {
            const { allowed } = await store.consume('k', rule, T0)
            expect(allowed).toBe(held < maxInFlight)
            if (allowed) held++
          } else if (held > 0) {
            await store.release('k')
            held--
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})
