// Webhook secrets: made, rotated, and which sign at a given time. Web Crypto and plain JavaScript
// only: the same file runs on Node, Bun, Deno and workers. Signing with them is signing.ts'.

import { base64 } from '../crypto.js'

export const WEBHOOK_SECRET_PREFIX = 'whsec_'
/** Random bytes in a new secret (SPEC.md: `whsec_` + base64 of 32 random bytes). */
export const WEBHOOK_SECRET_BYTES = 32
/** How long the old secret keeps signing after a rotation, unless the caller says otherwise. */
export const DEFAULT_OVERLAP_HOURS = 24

const HOUR_MS = 3_600_000
// Standard base64 with padding, as `standardwebhooks` decodes it; 24 to 64 key bytes.
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/

/** A new secret: `whsec_` and the base64 of `bytes` (24 to 32, default 32) random bytes from Web Crypto. */
export function generateWebhookSecret(bytes: number = WEBHOOK_SECRET_BYTES): string {
  if (!Number.isInteger(bytes) || bytes < 24 || bytes > 32) throw new RangeError(`a webhook secret has 24 to 32 random bytes, not ${bytes}`)
  return WEBHOOK_SECRET_PREFIX + base64(crypto.getRandomValues(new Uint8Array(bytes)))
}

/** Whether `value` is a `whsec_` secret whose base64 decodes to 24–64 bytes. */
export function isWebhookSecret(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const match = SECRET.exec(value)
  if (!match) return false
  const body = match[1]!
  if (body.length % 4 !== 0) return false
  const bytes = (body.length / 4) * 3 - (body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0)
  return bytes >= 24 && bytes <= 64
}

/** What a webhook record keeps of its secrets: the current one, and every earlier one while its own overlap lasts. */
export interface WebhookSecrets {
  secret: string
  /**
   * The earlier secrets that still sign, each `<expiresAt> <secret>` (ISO timestamp, a space, the
   * secret), newest first. Each keeps signing until its own `expiresAt`.
   */
  previousSecrets?: readonly string[]
  /** ISO timestamp; when the last of `previousSecrets` stops signing (after it only `secret` signs). */
  previousSecretExpiresAt?: string | null
}

/** An entry of `previousSecrets`: a secret and when it stops signing. */
export interface PreviousSecret {
  secret: string
  expiresAt: string
}

/** The entries of `previousSecrets`, read. */
export function previousSecrets(secrets: Pick<WebhookSecrets, 'previousSecrets'>): PreviousSecret[] {
  return (secrets.previousSecrets ?? []).map((entry) => {
    const space = entry.indexOf(' ')
    const expiresAt = entry.slice(0, space)
    if (space < 0 || !Number.isFinite(Date.parse(expiresAt)))
      throw new TypeError(`a previous secret entry is not "<expiresAt> <secret>": ${JSON.stringify(entry.slice(0, 30))}`)
    return { expiresAt, secret: entry.slice(space + 1) }
  })
}

/** The secrets that sign at `now` (milliseconds): the current one first, then each earlier one whose overlap lasts, newest first. */
export function liveSecrets(secrets: WebhookSecrets, now: number): string[] {
  const live = [secrets.secret]
  for (const { secret, expiresAt } of previousSecrets(secrets)) if (now < Date.parse(expiresAt) && !live.includes(secret)) live.push(secret)
  return live
}

/**
 * Rotates to `newSecret` (a fresh one by default) at `now`: the current secret joins the earlier
 * ones and keeps signing for `overlapHours` (0 drops it at once). Every earlier secret keeps
 * signing until its own overlap ends, however often the secret is rotated meanwhile; the ones whose
 * overlap has ended are dropped.
 */
export function rotateWebhookSecret(
  current: WebhookSecrets,
  now: number,
  overlapHours: number = DEFAULT_OVERLAP_HOURS,
  newSecret: string = generateWebhookSecret(),
): { secret: string; previousSecrets: string[]; previousSecretExpiresAt: string | null } {
  if (!Number.isFinite(overlapHours) || overlapHours < 0)
    throw new RangeError(`overlapHours must be a non-negative number, not ${overlapHours}`)
  if (!isWebhookSecret(newSecret)) throw new TypeError('newSecret is not a whsec_ secret')
  if (newSecret === current.secret) throw new TypeError('newSecret is the current secret')
  const kept = previousSecrets(current).filter(({ secret, expiresAt }) => now < Date.parse(expiresAt) && secret !== newSecret)
  if (overlapHours > 0) kept.unshift({ secret: current.secret, expiresAt: new Date(now + overlapHours * HOUR_MS).toISOString() })
  const last = kept.reduce<string | null>((latest, { expiresAt }) => (latest === null || expiresAt > latest ? expiresAt : latest), null)
  return {
    secret: newSecret,
    previousSecrets: kept.map(({ secret, expiresAt }) => `${expiresAt} ${secret}`),
    previousSecretExpiresAt: last,
  }
}
