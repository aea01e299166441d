import { createHmac } from 'node:crypto'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_OVERLAP_HOURS,
  generateWebhookSecret,
  isWebhookSecret,
  liveSecrets,
  rotateWebhookSecret,
} from '../../src/webhooks/secrets.js'
import { signWebhook } from '../../src/webhooks/signing.js'

const HOUR = 3_600_000
const keyBytes = (secret: string) => Buffer.from(secret.slice('whsec_'.length), 'base64')

// An oracle that shares no code with the signer: node:crypto's HMAC over `id.timestamp.body`.
const oracle = (secret: string, id: string, seconds: number, body: string) =>
  `v1,${createHmac('sha256', keyBytes(secret)).update(`${id}.${seconds}.${body}`).digest('base64')}`

describe('webhook secrets', () => {
  it('are whsec_ and the base64 of 32 random bytes by default', () => {
    const secret = generateWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(keyBytes(secret)).toHaveLength(32)
    expect(isWebhookSecret(secret)).toBe(true)
  })

  it('take 24 to 32 bytes and nothing else', () => {
    expect(keyBytes(generateWebhookSecret(24))).toHaveLength(24)
    expect(keyBytes(generateWebhookSecret(28))).toHaveLength(28)
    for (const bad of [0, 16, 23, 33, 64, 24.5, Number.NaN]) expect(() => generateWebhookSecret(bad)).toThrow(RangeError)
  })

  it('never repeat (1,000 drawn)', () => {
    const drawn = new Set(Array.from({ length: 1000 }, () => generateWebhookSecret()))
    expect(drawn.size).toBe(1000)
  })

  it('are recognised only in their own form', () => {
    const good = generateWebhookSecret()
    expect(isWebhookSecret(good)).toBe(true)
    expect(isWebhookSecret(generateWebhookSecret(24))).toBe(true)
    expect(isWebhookSecret(`whsec_${Buffer.alloc(64, 1).toString('base64')}`)).toBe(true)
    for (const bad of [
      good.slice('whsec_'.length), // no prefix
      `whsk_${good.slice(6)}`,
      `${good}A`, // not a multiple of 4
      `whsec_${Buffer.alloc(16, 1).toString('base64')}`, // too short
      `whsec_${Buffer.alloc(65, 1).toString('base64')}`, // too long
      `whsec_${'-'.repeat(44)}`, // not base64
      `whsec_ ${good.slice(6)}`,
      '',
      undefined,
      42,
    ]) {
      expect(isWebhookSecret(bad), String(bad)).toBe(false)
    }
  })
})

describe('signWebhook', () => {
  const id = 'a3f6b0de-2c4f-4f0e-9a55-0c3a5d8e9b11'
  const body = JSON.stringify({ id, type: 'commission.created', data: { amount: '12.50', note: 'naïve ☕' } })

  it('gives the three Standard Webhooks headers, whole seconds, and the HMAC of id.timestamp.body', () => {
    const secret = generateWebhookSecret()
    const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678)
    const headers = signWebhook({ id, timestamp: at, body, secrets: [secret] })
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp'])
    expect(headers['webhook-id']).toBe(id)
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at / 1000)))
    expect(headers['webhook-signature']).toBe(oracle(secret, id, Math.floor(at / 1000), body))
  })

  it('matches the reference vector of the Standard Webhooks libraries', () => {
    const headers = signWebhook({
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330_000,
      body: '{"test": 2432232314}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    })
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  it('verifies with standardwebhooks Webhook, and fails for another secret, body, id or timestamp', () => {
    const secret = generateWebhookSecret()
    const now = Date.now()
    const headers = signWebhook({ id, timestamp: now, body, secrets: [secret] })
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError)
    expect(() => new Webhook(secret).verify(body.replace('12.50', '12.51'), headers)).toThrow(WebhookVerificationError)
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': `${id}x` })).toThrow(WebhookVerificationError)
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(Math.floor(now / 1000) - 1) })).toThrow(
      WebhookVerificationError,
    )
  })

  it('signs once per secret, space-separated, and either secret verifies', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()]
    const headers = signWebhook({ id, timestamp: Date.now(), body, secrets: [current, previous] })
    const entries = headers['webhook-signature'].split(' ')
    expect(entries).toHaveLength(2)
    for (const entry of entries) expect(entry).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body))
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError)
  })

  it('sends one entry for a secret given twice', () => {
    const secret = generateWebhookSecret()
    expect(signWebhook({ id, timestamp: 0, body, secrets: [secret, secret] })['webhook-signature'].split(' ')).toHaveLength(1)
  })

  it('refuses what it cannot sign', () => {
    const secret = generateWebhookSecret()
    expect(() => signWebhook({ id, timestamp: 0, body, secrets: [] })).toThrow(/at least one secret/)
    expect(() => signWebhook({ id, timestamp: 0, body, secrets: ['not-a-secret'] })).toThrow(/not a whsec_ secret/)
    expect(() => signWebhook({ id: '', timestamp: 0, body, secrets: [secret] })).toThrow(/id/)
    expect(() => signWebhook({ id: 'a b', timestamp: 0, body, secrets: [secret] })).toThrow(/id/)
    expect(() => signWebhook({ id, timestamp: Number.NaN, body, secrets: [secret] })).toThrow(/timestamp/)
  })
})

describe('secret rotation', () => {
  const t0 = Date.UTC(2026, 4, 1, 12)

  it('keeps the old secret signing for the overlap (24 hours by default), then only the new one', () => {
    const first = { secret: generateWebhookSecret() }
    expect(liveSecrets(first, t0)).toEqual([first.secret])
    const rotated = rotateWebhookSecret(first, t0)
    expect(DEFAULT_OVERLAP_HOURS).toBe(24)
    expect(rotated.previousSecrets).toEqual([`${new Date(t0 + 24 * HOUR).toISOString()} ${first.secret}`])
    expect(rotated.previousSecretExpiresAt).toBe(new Date(t0 + 24 * HOUR).toISOString())
    expect(liveSecrets(rotated, t0)).toEqual([rotated.secret, first.secret])
    expect(liveSecrets(rotated, t0 + 24 * HOUR - 1)).toEqual([rotated.secret, first.secret])
    expect(liveSecrets(rotated, t0 + 24 * HOUR)).toEqual([rotated.secret])
    expect(liveSecrets(rotated, t0 + 1000 * HOUR)).toEqual([rotated.secret])
  })

  it('takes the overlap asked for; 0 drops the old secret at once', () => {
    const first = { secret: generateWebhookSecret() }
    const twoHours = rotateWebhookSecret(first, t0, 2)
    expect(liveSecrets(twoHours, t0 + 2 * HOUR - 1)).toHaveLength(2)
    expect(liveSecrets(twoHours, t0 + 2 * HOUR)).toHaveLength(1)
    const none = rotateWebhookSecret(first, t0, 0)
    expect(none).toEqual({ secret: none.secret, previousSecrets: [], previousSecretExpiresAt: null })
    expect(liveSecrets(none, t0)).toEqual([none.secret])
  })

  it('a rotation during an overlap keeps every earlier secret until its own overlap ends', () => {
    const a = { secret: generateWebhookSecret() }
    const b = rotateWebhookSecret(a, t0, 3) // a signs until t0 + 3 h
    const c = rotateWebhookSecret(b, t0 + HOUR, 1) // b signs until t0 + 2 h
    expect(c.previousSecretExpiresAt).toBe(new Date(t0 + 3 * HOUR).toISOString())
    expect(liveSecrets(c, t0 + HOUR)).toEqual([c.secret, b.secret, a.secret])
    expect(liveSecrets(c, t0 + 2 * HOUR - 1)).toEqual([c.secret, b.secret, a.secret])
    expect(liveSecrets(c, t0 + 2 * HOUR)).toEqual([c.secret, a.secret])
    expect(liveSecrets(c, t0 + 3 * HOUR)).toEqual([c.secret])
    // A third rotation once a has expired drops it from the record.
    const d = rotateWebhookSecret(c, t0 + 3 * HOUR, 24)
    expect(d.previousSecrets).toEqual([`${new Date(t0 + 27 * HOUR).toISOString()} ${c.secret}`])
  })

  it('uses the new secret it is given, and refuses bad ones', () => {
    const first = { secret: generateWebhookSecret() }
    const next = generateWebhookSecret()
    expect(rotateWebhookSecret(first, t0, 24, next).secret).toBe(next)
    expect(() => rotateWebhookSecret(first, t0, 24, first.secret)).toThrow(/current secret/)
    expect(() => rotateWebhookSecret(first, t0, 24, 'whsec_short')).toThrow(/not a whsec_ secret/)
    expect(() => rotateWebhookSecret(first, t0, -1)).toThrow(RangeError)
    expect(() => rotateWebhookSecret(first, t0, Number.POSITIVE_INFINITY)).toThrow(RangeError)
  })

  it('refuses a record whose expiry is not a timestamp', () => {
    expect(() => liveSecrets({ secret: generateWebhookSecret(), previousSecrets: [`tomorrow ${generateWebhookSecret()}`] }, t0)).toThrow(
      TypeError,
    )
    expect(() => liveSecrets({ secret: generateWebhookSecret(), previousSecrets: [generateWebhookSecret()] }, t0)).toThrow(TypeError)
  })
})
