import type { LimitDecision, RateLimitRule } from './types.js'

/**
 * What a bucket remembers. Tokens are kept in thousandths so that refilling whole milliseconds
 * at a whole rate is integer arithmetic: at 5 per second, 200 ms adds exactly 1000, never 0.999….
 */
export interface BucketState {
  /** Thousandths of a token in the bucket at `at`. */
  milliTokens: number
  /** Clock time (epoch ms) the count was taken at. */
  at: number
}

const ONE_TOKEN = 1000

/** A key never seen (or forgotten) starts with a full bucket. */
export const fullBucket = (rule: RateLimitRule, now: number): BucketState => ({
  milliTokens: rule.capacity * ONE_TOKEN,
  at: now,
})

/**
 * The whole decision, as a pure function of (bucket, in-flight count, rule, now): refill up to
 * `now`, capped at the capacity, then admit when a whole token is there and a slot is free.
 * A refusal takes nothing; the answered bucket then differs only by the refill, which any later
 * decision would compute the same way.
 *
 * @example
 * const { decision, bucket } = consumeToken(stored, inFlight, rule, clock.now())
 */
export function consumeToken(
  stored: BucketState | undefined,
  inFlight: number,
  rule: RateLimitRule,
  now: number,
): { decision: LimitDecision; bucket: BucketState } {
  const full = rule.capacity * ONE_TOKEN
  const start = stored ?? fullBucket(rule, now)
  // A clock that steps back refills nothing and keeps the later mark, so no interval counts twice.
  const at = Math.max(start.at, now)
  const refilled = Math.min(full, start.milliTokens + (at - start.at) * rule.refillPerSecond)
  const allowed = refilled >= ONE_TOKEN && inFlight < rule.maxInFlight
  const milliTokens = allowed ? refilled - ONE_TOKEN : refilled
  const decision: LimitDecision = {
    allowed,
    remaining: Math.floor(milliTokens / ONE_TOKEN),
    tokenWaitMs: milliTokens >= ONE_TOKEN ? 0 : (ONE_TOKEN - milliTokens) / rule.refillPerSecond,
    fullInMs: (full - milliTokens) / rule.refillPerSecond,
  }
  return { decision, bucket: { milliTokens, at } }
}

/**
 * `Retry-After` for a refusal, in whole seconds: when the next token arrives, rounded up so that a
 * client waiting that long finds one, and at least 1. A refusal by the in-flight cap alone has a
 * token ready and cannot know when a slot frees, so it answers the honest minimum, 1.
 */
export const retryAfterSeconds = (decision: LimitDecision): number => Math.max(1, Math.ceil(decision.tokenWaitMs / 1000))

/** `RateLimit-Reset`: whole seconds until the bucket is full again (0 when it is). */
export const resetSeconds = (decision: LimitDecision): number => Math.ceil(decision.fullInMs / 1000)
