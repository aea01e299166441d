// When a webhook delivery is tried again, when it is dead, and when a webhook disables itself
// (SPEC.md "Events and signed webhooks"), as pure functions over an injected time and random source.

/** A delivery: `pending` (not tried yet, or retried by hand), `failed` (a retry is scheduled), `succeeded`, `dead`. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead'

/** What one attempt came to: a 2xx, a 410 Gone, or anything else (other statuses, refusals, timeouts, network errors). */
export type AttemptOutcome = 'success' | 'gone' | 'retryable'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** The waits before the 2nd to 8th attempts: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
])
/** Attempts before a delivery is dead: the first and one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
/** Each retry delay moves by up to this fraction either way. */
export const RETRY_JITTER = 0.1
/** Dead deliveries in a row that disable a webhook. */
export const DEAD_DELIVERIES_TO_DISABLE = 5
/** How long one attempt may take, from connecting to the end of the response. */
export const DELIVERY_TIMEOUT_MS = 15 * SECOND
/** How much of a receiver's response body a delivery keeps (`lastResponseBody`). */
export const RESPONSE_BODY_LIMIT_BYTES = 1024
/** How long events and deliveries are kept unless configured otherwise. */
export const DEFAULT_RETENTION_DAYS = 30

/** A source of numbers in [0, 1), as `Math.random`; tests pass a fixed one. */
export type Random = () => number

/** How an HTTP status counts: 2xx success, 410 gone, anything else retryable (redirects included: they are not followed). */
export function classifyStatus(status: number): AttemptOutcome {
  if (status >= 200 && status <= 299) return 'success'
  return status === 410 ? 'gone' : 'retryable'
}

/**
 * The wait after attempt number `attempt` (1-based) failed, with ±10% jitter from `random`; undefined
 * when that was the last attempt. `random() = 0.5` gives the nominal delay, 0 → −10%, → 1 → +10%.
 */
export function retryDelayMs(attempt: number, random: Random = Math.random): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt is a positive integer, not ${attempt}`)
  const nominal = RETRY_DELAYS_MS[attempt - 1]
  if (nominal === undefined) return undefined
  const r = random()
  if (!(r >= 0 && r < 1)) throw new RangeError(`random() must answer a number in [0, 1), not ${r}`)
  return Math.round(nominal * (1 + RETRY_JITTER * (2 * r - 1)))
}

/** When every attempt of a delivery created at `createdAt` (ms) would run with `random() = 0.5`: a reading aid and test oracle. */
export function nominalAttemptTimes(createdAt: number): number[] {
  const times = [createdAt]
  for (const delay of RETRY_DELAYS_MS) times.push(times[times.length - 1]! + delay)
  return times
}

/** What to write on a delivery after an attempt. */
export type AttemptPlan =
  | { status: 'succeeded'; attempts: number; nextAttemptAt: null }
  | { status: 'failed'; attempts: number; nextAttemptAt: string }
  | { status: 'dead'; attempts: number; nextAttemptAt: null; reason: 'gone' | 'attempts exhausted' }

/**
 * The delivery after its attempt number `attempts` (counting this one) came to `outcome` at `now`
 * (ms): succeeded; failed with the next attempt scheduled; or dead, on a 410 (the webhook is then
 * disabled, see `webhookAfterDelivery`) or when this was attempt 8 or later (a delivery retried by
 * hand after it died gets one more attempt).
 */
export function planAfterAttempt(attempts: number, outcome: AttemptOutcome, now: number, random: Random = Math.random): AttemptPlan {
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`attempts is a positive integer, not ${attempts}`)
  if (!Number.isFinite(now)) throw new RangeError('now must be milliseconds since the epoch')
  if (outcome === 'success') return { status: 'succeeded', attempts, nextAttemptAt: null }
  if (outcome === 'gone') return { status: 'dead', attempts, nextAttemptAt: null, reason: 'gone' }
  const delay = attempts < MAX_ATTEMPTS ? retryDelayMs(attempts, random) : undefined
  if (delay === undefined) return { status: 'dead', attempts, nextAttemptAt: null, reason: 'attempts exhausted' }
  return { status: 'failed', attempts, nextAttemptAt: new Date(now + delay).toISOString() }
}

/** `POST /webhooks/deliveries/retry`: the delivery is pending again, due at `now`, keeping its attempt count. */
export function retryNow(now: number): { status: 'pending'; nextAttemptAt: string } {
  return { status: 'pending', nextAttemptAt: new Date(now).toISOString() }
}

/** Whether a delivery is due for an attempt at `now` (ms). */
export function isDue(delivery: { status: DeliveryStatus; nextAttemptAt: string | null }, now: number): boolean {
  if (delivery.status !== 'pending' && delivery.status !== 'failed') return false
  return delivery.nextAttemptAt === null || Date.parse(delivery.nextAttemptAt) <= now
}

/** What a webhook keeps to decide when it disables itself. */
export interface WebhookHealth {
  enabled: boolean
  disabledReason: string | null
  /** Deliveries that ended dead since the last one that succeeded. */
  consecutiveDeadDeliveries: number
}

export const DISABLED_GONE = 'the endpoint answered 410 Gone'
export const DISABLED_DEAD = `${DEAD_DELIVERIES_TO_DISABLE} deliveries in a row were dead`

/**
 * The webhook after one of its deliveries reached `plan` (only final plans change anything): a
 * success resets the dead count; a 410 disables at once; the 5th dead delivery in a row disables.
 * An already disabled webhook keeps its first reason.
 */
export function webhookAfterDelivery(health: WebhookHealth, plan: AttemptPlan): WebhookHealth {
  if (plan.status === 'failed') return health
  if (plan.status === 'succeeded') return health.consecutiveDeadDeliveries === 0 ? health : { ...health, consecutiveDeadDeliveries: 0 }
  const consecutiveDeadDeliveries = health.consecutiveDeadDeliveries + 1
  if (!health.enabled) return { ...health, consecutiveDeadDeliveries }
  if (plan.reason === 'gone') return { enabled: false, disabledReason: DISABLED_GONE, consecutiveDeadDeliveries }
  if (consecutiveDeadDeliveries >= DEAD_DELIVERIES_TO_DISABLE)
    return { enabled: false, disabledReason: DISABLED_DEAD, consecutiveDeadDeliveries }
  return { ...health, consecutiveDeadDeliveries }
}

/** Re-enabling by hand (`PUT /webhooks` with `enabled: true`) starts the count again. */
export function reenabled(): WebhookHealth {
  return { enabled: true, disabledReason: null, consecutiveDeadDeliveries: 0 }
}

/** Events and deliveries created before this ISO instant may be deleted at `now` (ms). */
export function retentionCutoff(now: number, days: number = DEFAULT_RETENTION_DAYS): string {
  if (!Number.isFinite(days) || days <= 0) throw new RangeError(`retention is a positive number of days, not ${days}`)
  return new Date(now - days * DAY).toISOString()
}
