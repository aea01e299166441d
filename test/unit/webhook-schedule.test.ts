import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  classifyStatus,
  DEAD_DELIVERIES_TO_DISABLE,
  DEFAULT_RETENTION_DAYS,
  DELIVERY_TIMEOUT_MS,
  DISABLED_DEAD,
  DISABLED_GONE,
  isDue,
  MAX_ATTEMPTS,
  nominalAttemptTimes,
  planAfterAttempt,
  reenabled,
  RESPONSE_BODY_LIMIT_BYTES,
  retentionCutoff,
  RETRY_DELAYS_MS,
  RETRY_JITTER,
  retryDelayMs,
  retryNow,
  webhookAfterDelivery,
  type AttemptOutcome,
  type AttemptPlan,
  type WebhookHealth,
} from '../../src/webhooks/schedule.js'

const S = 1000
const M = 60 * S
const H = 60 * M
const t0 = Date.UTC(2026, 4, 1, 9, 0, 0)
const middle = () => 0.5
const iso = (ms: number) => new Date(ms).toISOString()

describe('the retry schedule (SPEC.md)', () => {
  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts in all', () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H])
    expect(MAX_ATTEMPTS).toBe(8)
    expect(RETRY_JITTER).toBe(0.1)
    expect(Object.isFrozen(RETRY_DELAYS_MS)).toBe(true)
  })

  it('places the nominal attempts at 0, 5 s, 5 min 5 s, 35 min 5 s, 2 h 35 min 5 s, 7 h 35 min 5 s, 17 h 35 min 5 s, 27 h 35 min 5 s', () => {
    expect(nominalAttemptTimes(t0).map((t) => t - t0)).toEqual([
      0,
      5 * S,
      5 * M + 5 * S,
      35 * M + 5 * S,
      2 * H + 35 * M + 5 * S,
      7 * H + 35 * M + 5 * S,
      17 * H + 35 * M + 5 * S,
      27 * H + 35 * M + 5 * S,
    ])
  })

  it('gives the nominal delay at random() = 0.5, −10% at 0 and almost +10% near 1', () => {
    RETRY_DELAYS_MS.forEach((nominal, i) => {
      expect(retryDelayMs(i + 1, middle)).toBe(nominal)
      expect(retryDelayMs(i + 1, () => 0)).toBe(Math.round(nominal * 0.9))
      expect(retryDelayMs(i + 1, () => 0.999999)).toBe(Math.round(nominal * (1 + 0.1 * (2 * 0.999999 - 1))))
    })
    expect(retryDelayMs(1, () => 0.25)).toBe(4750)
    expect(retryDelayMs(7, () => 0.75)).toBe(10.5 * H)
  })

  it('keeps every jittered delay within ±10% of the nominal one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
        const delay = retryDelayMs(attempt, () => r)!
        const nominal = RETRY_DELAYS_MS[attempt - 1]!
        return delay >= Math.round(nominal * 0.9) && delay <= Math.round(nominal * 1.1) && Number.isInteger(delay)
      }),
    )
  })

  it('has no delay after the eighth attempt', () => {
    expect(retryDelayMs(8, middle)).toBeUndefined()
    expect(retryDelayMs(9, middle)).toBeUndefined()
  })

  it('refuses a bad attempt number or random source', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => retryDelayMs(bad, middle)).toThrow(RangeError)
    for (const r of [1, -0.1, Number.NaN, 2]) expect(() => retryDelayMs(1, () => r)).toThrow(RangeError)
  })
})

// A delivery driven through attempts on an injected clock: each attempt runs exactly when the
// previous plan scheduled it.
function drive(outcomes: AttemptOutcome[], random = middle) {
  let now = t0
  const plans: AttemptPlan[] = []
  const attemptTimes: number[] = []
  for (const [i, outcome] of outcomes.entries()) {
    attemptTimes.push(now)
    const plan = planAfterAttempt(i + 1, outcome, now, random)
    plans.push(plan)
    if (plan.status !== 'failed') break
    now = Date.parse(plan.nextAttemptAt)
  }
  return { plans, attemptTimes }
}

describe('planAfterAttempt', () => {
  it('500, 500, then 200: three attempts, at 0, 5 s and 5 min 5 s, then succeeded', () => {
    const { plans, attemptTimes } = drive(['retryable', 'retryable', 'success'])
    expect(attemptTimes.map((t) => t - t0)).toEqual([0, 5 * S, 5 * M + 5 * S])
    expect(plans).toEqual([
      { status: 'failed', attempts: 1, nextAttemptAt: iso(t0 + 5 * S) },
      { status: 'failed', attempts: 2, nextAttemptAt: iso(t0 + 5 * M + 5 * S) },
      { status: 'succeeded', attempts: 3, nextAttemptAt: null },
    ])
  })

  it('dies after the eighth failed attempt, every attempt on the nominal schedule', () => {
    const { plans, attemptTimes } = drive(Array(12).fill('retryable'))
    expect(attemptTimes).toEqual(nominalAttemptTimes(t0))
    expect(plans).toHaveLength(8)
    expect(plans.slice(0, 7).every((p) => p.status === 'failed')).toBe(true)
    expect(plans[7]).toEqual({ status: 'dead', attempts: 8, nextAttemptAt: null, reason: 'attempts exhausted' })
  })

  it('succeeds at whichever attempt gets a 2xx', () => {
    for (let n = 1; n <= MAX_ATTEMPTS; n++) {
      const { plans } = drive([...Array(n - 1).fill('retryable'), 'success'])
      expect(plans).toHaveLength(n)
      expect(plans[n - 1]).toEqual({ status: 'succeeded', attempts: n, nextAttemptAt: null })
    }
  })

  it('is dead at once on a 410, at any attempt', () => {
    for (let n = 1; n <= MAX_ATTEMPTS; n++) {
      const { plans } = drive([...Array(n - 1).fill('retryable'), 'gone'])
      expect(plans[n - 1]).toEqual({ status: 'dead', attempts: n, nextAttemptAt: null, reason: 'gone' })
    }
  })

  it('applies the jitter to each retry', () => {
    const low = drive(Array(8).fill('retryable'), () => 0).attemptTimes
    const high = drive(Array(8).fill('retryable'), () => 0.999999999).attemptTimes
    const nominal = nominalAttemptTimes(t0)
    for (let i = 1; i < 8; i++) {
      const gap = nominal[i]! - nominal[i - 1]!
      expect(low[i]! - low[i - 1]!).toBe(Math.round(gap * 0.9))
      expect(Math.abs(high[i]! - high[i - 1]! - gap * 1.1)).toBeLessThanOrEqual(1)
    }
  })

  it('gives a dead delivery retried by hand one more attempt: dead again if it fails', () => {
    expect(planAfterAttempt(9, 'retryable', t0, middle)).toEqual({
      status: 'dead',
      attempts: 9,
      nextAttemptAt: null,
      reason: 'attempts exhausted',
    })
    expect(planAfterAttempt(9, 'success', t0, middle)).toEqual({ status: 'succeeded', attempts: 9, nextAttemptAt: null })
  })

  it('does not call random() for a success, a 410 or the last attempt', () => {
    const never = () => {
      throw new Error('random() was called')
    }
    expect(planAfterAttempt(1, 'success', t0, never).status).toBe('succeeded')
    expect(planAfterAttempt(1, 'gone', t0, never).status).toBe('dead')
    expect(planAfterAttempt(8, 'retryable', t0, never).status).toBe('dead')
  })

  it('refuses a bad attempt count or time', () => {
    expect(() => planAfterAttempt(0, 'retryable', t0)).toThrow(RangeError)
    expect(() => planAfterAttempt(1, 'retryable', Number.NaN)).toThrow(RangeError)
  })
})

describe('retryNow and isDue', () => {
  it('makes a delivery pending and due at once', () => {
    const retried = retryNow(t0)
    expect(retried).toEqual({ status: 'pending', nextAttemptAt: iso(t0) })
    expect(isDue(retried, t0)).toBe(true)
    expect(isDue(retried, t0 - 1)).toBe(false)
  })

  it('is due only when pending or failed and its time has come', () => {
    expect(isDue({ status: 'pending', nextAttemptAt: null }, t0)).toBe(true)
    expect(isDue({ status: 'failed', nextAttemptAt: iso(t0 + 5 * S) }, t0 + 5 * S - 1)).toBe(false)
    expect(isDue({ status: 'failed', nextAttemptAt: iso(t0 + 5 * S) }, t0 + 5 * S)).toBe(true)
    expect(isDue({ status: 'succeeded', nextAttemptAt: null }, t0)).toBe(false)
    expect(isDue({ status: 'dead', nextAttemptAt: null }, t0)).toBe(false)
    expect(isDue({ status: 'dead', nextAttemptAt: iso(t0) }, t0)).toBe(false)
  })
})

const healthy: WebhookHealth = { enabled: true, disabledReason: null, consecutiveDeadDeliveries: 0 }
const dead = planAfterAttempt(8, 'retryable', t0)
const gone = planAfterAttempt(1, 'gone', t0)
const succeeded = planAfterAttempt(1, 'success', t0)
const failed = planAfterAttempt(1, 'retryable', t0, middle)

describe('webhookAfterDelivery (auto-disable)', () => {
  it('disables on the fifth dead delivery in a row, not before', () => {
    expect(DEAD_DELIVERIES_TO_DISABLE).toBe(5)
    let health = healthy
    for (let n = 1; n <= 4; n++) {
      health = webhookAfterDelivery(health, dead)
      expect(health).toEqual({ enabled: true, disabledReason: null, consecutiveDeadDeliveries: n })
    }
    health = webhookAfterDelivery(health, dead)
    expect(health).toEqual({ enabled: false, disabledReason: DISABLED_DEAD, consecutiveDeadDeliveries: 5 })
    expect(DISABLED_DEAD).toBe('5 deliveries in a row were dead')
  })

  it('starts counting again after a success', () => {
    let health = healthy
    for (let n = 0; n < 4; n++) health = webhookAfterDelivery(health, dead)
    health = webhookAfterDelivery(health, succeeded)
    expect(health).toEqual(healthy)
    for (let n = 0; n < 4; n++) health = webhookAfterDelivery(health, dead)
    expect(health.enabled).toBe(true)
    expect(webhookAfterDelivery(health, dead).enabled).toBe(false)
  })

  it('disables at once on a 410', () => {
    expect(webhookAfterDelivery(healthy, gone)).toEqual({ enabled: false, disabledReason: DISABLED_GONE, consecutiveDeadDeliveries: 1 })
    expect(DISABLED_GONE).toBe('the endpoint answered 410 Gone')
  })

  it('is not moved by a failed attempt with a retry scheduled', () => {
    const some = { enabled: true, disabledReason: null, consecutiveDeadDeliveries: 3 }
    expect(webhookAfterDelivery(some, failed)).toBe(some)
    expect(webhookAfterDelivery(healthy, succeeded)).toBe(healthy)
  })

  it('keeps the first reason once disabled', () => {
    const off = webhookAfterDelivery(healthy, gone)
    const later = webhookAfterDelivery(webhookAfterDelivery(off, dead), gone)
    expect(later.enabled).toBe(false)
    expect(later.disabledReason).toBe(DISABLED_GONE)
  })

  it('starts the count again when re-enabled by hand', () => {
    let health = healthy
    for (let n = 0; n < 5; n++) health = webhookAfterDelivery(health, dead)
    expect(health.enabled).toBe(false)
    health = reenabled()
    expect(health).toEqual(healthy)
    expect(webhookAfterDelivery(health, dead).enabled).toBe(true)
  })

  it('matches a model of "N dead in a row" over any sequence of final outcomes', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('dead', 'succeeded', 'gone', 'failed'), { maxLength: 40 }), (seq) => {
        const planOf = { dead, succeeded, gone, failed } as const
        let health = healthy
        let run = 0
        let expectedReason: string | null = null
        for (const step of seq) {
          health = webhookAfterDelivery(health, planOf[step])
          if (step === 'succeeded') run = 0
          if (step === 'dead' || step === 'gone') run++
          if (expectedReason === null && step === 'gone') expectedReason = DISABLED_GONE
          if (expectedReason === null && run >= 5) expectedReason = DISABLED_DEAD
        }
        return (
          health.enabled === (expectedReason === null) &&
          health.disabledReason === expectedReason &&
          health.consecutiveDeadDeliveries === run
        )
      }),
    )
  })
})

describe('classifyStatus', () => {
  it('counts 2xx as success, 410 as gone and everything else as retryable, redirects included', () => {
    for (const s of [200, 201, 202, 204, 299]) expect(classifyStatus(s), String(s)).toBe('success')
    expect(classifyStatus(410)).toBe('gone')
    for (const s of [0, 100, 199, 300, 301, 302, 303, 307, 308, 400, 401, 403, 404, 408, 409, 411, 429, 500, 502, 503, 504, 599]) {
      expect(classifyStatus(s), String(s)).toBe('retryable')
    }
  })
})

describe('limits and retention', () => {
  it('times out after 15 s and keeps 1 KiB of a response', () => {
    expect(DELIVERY_TIMEOUT_MS).toBe(15_000)
    expect(RESPONSE_BODY_LIMIT_BYTES).toBe(1024)
  })

  it('keeps events and deliveries 30 days unless told otherwise', () => {
    expect(DEFAULT_RETENTION_DAYS).toBe(30)
    expect(retentionCutoff(t0)).toBe(iso(t0 - 30 * 24 * H))
    expect(retentionCutoff(t0, 7)).toBe(iso(t0 - 7 * 24 * H))
    for (const bad of [0, -1, Number.NaN]) expect(() => retentionCutoff(t0, bad)).toThrow(RangeError)
  })
})
