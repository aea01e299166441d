import { describe, expect, it } from 'vitest'
import { consumeToken, resetSeconds, retryAfterSeconds, type BucketState } from '../../src/limiter/token-bucket.js'
import type { RateLimitRule } from '../../src/limiter/types.js'

const rule: RateLimitRule = { capacity: 5, refillPerSecond: 5, maxInFlight: Infinity }
const T0 = 1_000_000

/** Runs consumeToken at each time in turn (nothing in flight), answering who was admitted and the last state. */
function run(times: number[], r: RateLimitRule = rule, start?: BucketState) {
  let bucket = start
  const results = times.map((now) => {
    const step = consumeToken(bucket, 0, r, now)
    bucket = step.bucket
    return step.decision
  })
  return { results, bucket }
}

describe('consumeToken (pure)', () => {
  it('starts full: five at one instant are admitted, the sixth is refused', () => {
    const { results } = run([T0, T0, T0, T0, T0, T0])
    expect(results.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
    expect(results.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0])
  })

  it('refills exactly one token per 200 ms: 199 ms is too early, 200 ms is on time', () => {
    const empty = run([T0, T0, T0, T0, T0]).bucket
    expect(consumeToken(empty, 0, rule, T0 + 199).decision.allowed).toBe(false)
    expect(consumeToken(empty, 0, rule, T0 + 200).decision.allowed).toBe(true)
    // Two tokens at 400 ms, not three.
    const at400 = run([T0 + 400, T0 + 400, T0 + 400], rule, empty).results
    expect(at400.map((d) => d.allowed)).toEqual([true, true, false])
  })

  it('refills in 1 ms steps without drift: the token is whole at exactly 200 ms', () => {
    let bucket = run([T0, T0, T0, T0, T0]).bucket
    for (let t = 1; t < 200; t++) {
      const step = consumeToken(bucket, 0, rule, T0 + t)
      expect(step.decision.allowed).toBe(false)
      bucket = step.bucket
    }
    expect(consumeToken(bucket, 0, rule, T0 + 200).decision.allowed).toBe(true)
  })

  it('caps the bucket at its capacity however long the key was idle', () => {
    const empty = run([T0, T0, T0, T0, T0]).bucket
    const later = T0 + 3_600_000
    const { results } = run([later, later, later, later, later, later], rule, empty)
    expect(results.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
  })

  it('a refusal takes nothing: refusing at 100 ms does not delay the token due at 200 ms', () => {
    const empty = run([T0, T0, T0, T0, T0]).bucket
    const refused = consumeToken(empty, 0, rule, T0 + 100)
    expect(refused.decision.allowed).toBe(false)
    expect(consumeToken(refused.bucket, 0, rule, T0 + 200).decision.allowed).toBe(true)
  })

  it('refuses when the in-flight cap is full, keeping the token, and admits once a slot is free', () => {
    const capped: RateLimitRule = { ...rule, maxInFlight: 5 }
    const refused = consumeToken(undefined, 5, capped, T0)
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 5, tokenWaitMs: 0 })
    expect(retryAfterSeconds(refused.decision)).toBe(1)
    expect(consumeToken(refused.bucket, 4, capped, T0).decision).toMatchObject({ allowed: true, remaining: 4 })
  })

  it('a clock that steps back refills nothing and counts no interval twice', () => {
    const empty = run([T0, T0, T0, T0, T0]).bucket
    const back = consumeToken(empty, 0, rule, T0 - 5_000)
    expect(back.decision.allowed).toBe(false)
    expect(back.bucket.at).toBe(T0)
    expect(consumeToken(back.bucket, 0, rule, T0 + 199).decision.allowed).toBe(false)
    expect(consumeToken(back.bucket, 0, rule, T0 + 200).decision.allowed).toBe(true)
  })
})

describe('Retry-After and RateLimit-Reset', () => {
  const emptyAt = (r: RateLimitRule, now: number) =>
    run(
      Array.from({ length: r.capacity }, () => now),
      r,
    ).bucket

  it('answers 1 second when the next token is 200 ms away', () => {
    const refused = consumeToken(emptyAt(rule, T0), 0, rule, T0).decision
    expect(refused.tokenWaitMs).toBe(200)
    expect(retryAfterSeconds(refused)).toBe(1)
  })

  it('rounds the wait for a slow refill up to whole seconds, and the client that waits that long is admitted', () => {
    for (const [refillPerSecond, elapsed, expected] of [
      [0.5, 0, 2],
      [0.5, 100, 2],
      [0.5, 1_000, 1],
      [0.3, 0, 4],
      [0.25, 0, 4],
      [0.25, 1, 4],
      [0.1, 9_999, 1],
    ] as const) {
      const r: RateLimitRule = { capacity: 2, refillPerSecond, maxInFlight: Infinity }
      const now = T0 + elapsed
      const refused = consumeToken(emptyAt(r, T0), 0, r, now)
      expect(refused.decision.allowed).toBe(false)
      const seconds = retryAfterSeconds(refused.decision)
      expect(seconds, `refill ${refillPerSecond}/s after ${elapsed} ms`).toBe(expected)
      expect(consumeToken(refused.bucket, 0, r, now + seconds * 1000).decision.allowed).toBe(true)
      // And the wait is tight: one millisecond before the token is due, it is not there.
      const dueIn = Math.ceil(refused.decision.tokenWaitMs)
      expect(consumeToken(refused.bucket, 0, r, now + dueIn - 1).decision.allowed).toBe(false)
    }
  })

  it('Retry-After is never 0', () => {
    const r: RateLimitRule = { capacity: 1, refillPerSecond: 1000, maxInFlight: Infinity }
    const refused = consumeToken(emptyAt(r, T0), 0, r, T0).decision
    expect(refused.tokenWaitMs).toBe(1)
    expect(retryAfterSeconds(refused)).toBe(1)
  })

  it('RateLimit-Reset is the whole seconds until the bucket is full again', () => {
    const slow: RateLimitRule = { capacity: 5, refillPerSecond: 1, maxInFlight: Infinity }
    const { results } = run([T0, T0, T0], slow)
    expect(results.map(resetSeconds)).toEqual([1, 2, 3])
    expect(results.map((d) => d.fullInMs)).toEqual([1000, 2000, 3000])
    // 5 per second: one token short is 200 ms, rounded up to 1 second; empty is exactly 1 second.
    expect(resetSeconds(run([T0]).results[0]!)).toBe(1)
    expect(resetSeconds(run([T0, T0, T0, T0, T0]).results[4]!)).toBe(1)
    // Full (a refusal by the in-flight cap on an idle key): 0.
    expect(resetSeconds(consumeToken(undefined, 1, { ...slow, maxInFlight: 1 }, T0).decision)).toBe(0)
  })
})
