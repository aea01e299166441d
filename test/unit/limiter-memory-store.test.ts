import { describe, expect, it } from 'vitest'
import { memoryLimiterStore } from '../../src/index.js'
import type { RateLimitRule } from '../../src/index.js'

const rule: RateLimitRule = { capacity: 5, refillPerSecond: 5, maxInFlight: 5 }
const T0 = 1_000_000

/** Consumes `n` times at `now` and releases each admission at once; answers how many were admitted. */
async function burst(store: ReturnType<typeof memoryLimiterStore>, key: string, n: number, now: number) {
  let admitted = 0
  for (let i = 0; i < n; i++) {
    if ((await store.consume(key, rule, now)).allowed) {
      admitted++
      await store.release(key)
    }
  }
  return admitted
}

describe('memoryLimiterStore', () => {
  it('keeps one bucket per key', async () => {
    const store = memoryLimiterStore()
    expect(await burst(store, 'a', 7, T0)).toBe(5)
    expect(await burst(store, 'b', 7, T0)).toBe(5)
    expect(await burst(store, 'a', 7, T0 + 200)).toBe(1)
  })

  it('caps requests in flight per key and frees a slot on release', async () => {
    const store = memoryLimiterStore()
    const wide: RateLimitRule = { capacity: 100, refillPerSecond: 100, maxInFlight: 5 }
    const decisions = []
    for (let i = 0; i < 6; i++) decisions.push(await store.consume('a', wide, T0))
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
    // The refused one took no token: 100 - 5 admitted.
    expect(decisions[5]!.remaining).toBe(95)
    expect((await store.consume('b', wide, T0)).allowed).toBe(true)
    await store.release('a')
    expect((await store.consume('a', wide, T0)).allowed).toBe(true)
    expect((await store.consume('a', wide, T0)).allowed).toBe(false)
  })

  it('never lets a stray release open more than the cap', async () => {
    const store = memoryLimiterStore()
    const wide: RateLimitRule = { capacity: 100, refillPerSecond: 100, maxInFlight: 2 }
    await store.release('a')
    await store.release('a')
    const admitted = []
    for (let i = 0; i < 4; i++) admitted.push((await store.consume('a', wide, T0)).allowed)
    expect(admitted).toEqual([true, true, false, false])
  })

  it('holds at most maxKeys buckets (default 10,000) under 100,000 distinct keys, and a dropped key starts full', async () => {
    const store = memoryLimiterStore()
    for (let i = 0; i < 5; i++) await store.consume('first', rule, T0)
    expect((await store.consume('first', rule, T0)).allowed).toBe(false)
    for (let i = 0; i < 100_000; i++) {
      await store.consume(`key-${i}`, rule, T0)
      await store.release(`key-${i}`)
    }
    expect(store.size).toBe(10_000)
    // 'first' was least recently used, so it was dropped: it starts again with five tokens.
    for (let i = 0; i < 5; i++) await store.release('first')
    expect((await store.consume('first', rule, T0)).remaining).toBe(4)
    // The most recent keys are still held, spent.
    expect((await store.consume('key-99999', rule, T0)).remaining).toBe(3)
  })

  it('takes maxKeys as an option and keeps recently used keys over idle ones', async () => {
    const store = memoryLimiterStore({ maxKeys: 3 })
    await store.consume('a', rule, T0)
    await store.consume('b', rule, T0)
    await store.consume('c', rule, T0)
    await store.consume('a', rule, T0)
    await store.consume('d', rule, T0)
    expect(store.size).toBe(3)
    expect((await store.consume('a', rule, T0)).remaining).toBe(2)
    expect((await store.consume('b', rule, T0)).remaining).toBe(4)
  })

  it('evicting a bucket does not forget requests still in flight', async () => {
    const store = memoryLimiterStore({ maxKeys: 2 })
    for (let i = 0; i < 5; i++) expect((await store.consume('busy', rule, T0)).allowed).toBe(true)
    await store.consume('x', rule, T0)
    await store.consume('y', rule, T0)
    expect(store.size).toBe(2)
    // A fresh, full bucket, but five of its requests are still running.
    const refused = await store.consume('busy', rule, T0)
    expect(refused).toMatchObject({ allowed: false, remaining: 5 })
    await store.release('busy')
    expect((await store.consume('busy', rule, T0)).allowed).toBe(true)
  })

  it('refuses a bad maxKeys', () => {
    expect(() => memoryLimiterStore({ maxKeys: 0 })).toThrow(RangeError)
    expect(() => memoryLimiterStore({ maxKeys: 1.5 })).toThrow(RangeError)
  })
})
