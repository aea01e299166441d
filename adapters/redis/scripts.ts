import { createHash } from 'node:crypto'

// The consume step as one Lua script, so a decision and its writes are one indivisible step on
// Redis however many instances share it. The arithmetic is consumeToken's (token-bucket.ts), in the
// same order of operations on the same doubles (Lua numbers are IEEE doubles, as JavaScript's are),
// so the same sequence of `now` values gives the same decisions. Numbers cross the wire as text
// written with %.17g, which reads back as the very same double.
//
// KEYS[1]  the bucket: a hash { m: thousandths of a token, t: the time they were counted at }
// KEYS[2]  the in-flight slots: a sorted set of lease ids scored by when each expires
// ARGV     now, capacity, refillPerSecond, maxInFlight (-1: no cap), lease id, lease ms
// Answers  { 1 or 0 (admitted), thousandths left, the bucket's time }
export const CONSUME = `
local now = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local refill = tonumber(ARGV[3])
local maxInFlight = tonumber(ARGV[4])
local leaseMs = tonumber(ARGV[6])
local full = capacity * 1000

local stored = redis.call('HMGET', KEYS[1], 'm', 't')
local milli = full
local from = now
if stored[1] and stored[2] then
  milli = tonumber(stored[1])
  from = tonumber(stored[2])
end
local at = math.max(from, now)
local refilled = math.min(full, milli + (at - from) * refill)

-- Slots of requests whose instance never released them (it died) expire here.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local inFlight = redis.call('ZCARD', KEYS[2])

local allowed = refilled >= 1000 and (maxInFlight < 0 or inFlight < maxInFlight)
local left = refilled
if allowed then
  left = refilled - 1000
  redis.call('ZADD', KEYS[2], now + leaseMs, ARGV[5])
  redis.call('PEXPIRE', KEYS[2], math.ceil(leaseMs) + 60000)
end

local m = string.format('%.17g', left)
local t = string.format('%.17g', at)
redis.call('HSET', KEYS[1], 'm', m, 't', t)
-- Forgotten once it would be full anyway (plus a minute, at most a week): forgetting a full bucket
-- changes no decision, and idle keys cost Redis nothing.
local ttl = math.min(math.ceil((full - left) / refill) + 60000, 604800000)
redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl))
return { allowed and 1 or 0, m, t }
`

export const CONSUME_SHA = createHash('sha1').update(CONSUME).digest('hex')
