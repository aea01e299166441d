// What a webhook receiver calls: checks a delivery's Standard Webhooks signature with the
// `standardwebhooks` package and answers the event, typed. No Node API: it runs in every runtime.

import { Webhook } from 'standardwebhooks'
import type { TypedAffiliateEvent } from '../events/typed.js'

/** A delivery that does not verify: bad or missing signature, wrong secret, stale or future timestamp. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
}

/** Headers as fetch (`Headers`), Node (`req.headers`) or a plain object hold them. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>
  | { 'webhook-id'?: string; 'webhook-timestamp'?: string; 'webhook-signature'?: string }

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const

function signatureHeaders(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  if (typeof (headers as Headers).get === 'function') {
    for (const name of NAMES) {
      const value = (headers as Headers).get(name)
      if (value !== null) out[name] = value
    }
    return out
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    const lower = name.toLowerCase()
    if (!(NAMES as readonly string[]).includes(lower) || value === undefined) continue
    out[lower] = Array.isArray(value) ? value.join(' ') : value
  }
  return out
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Verifies one webhook delivery and answers its event; throws `WebhookVerificationError` when it
 * does not verify (nothing in it can be trusted then: answer 400 and let it be retried).
 *
 * @param secrets the webhook's secret (`whsec_...`, shown once when it was made or rotated), or
 *   several: during a rotation hold both, and a delivery signed by either verifies.
 * @param rawBody the body exactly as received (a string or its bytes), not parsed and serialized
 *   again: the signature covers these characters.
 * @param headers the request's headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
 * Timestamps more than 5 minutes from this machine's clock are refused (a replay).
 * @example
 * const event = verifyWebhook(process.env.AFFILIATE_WEBHOOK_SECRET!, await request.text(), request.headers)
 * if (event.type === 'commission.created') console.log(event.data.amount)
 */
export function verifyWebhook(
  secrets: string | readonly string[],
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
): TypedAffiliateEvent {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets]
  if (list.length === 0 || list.some((secret) => typeof secret !== 'string' || secret.replace(/^whsec_/, '') === '')) {
    throw new TypeError('verifyWebhook needs the webhook secret (whsec_...), or a non-empty array of them')
  }
  let body: string
  if (typeof rawBody === 'string') body = rawBody
  else if (rawBody instanceof Uint8Array) {
    try {
      body = decoder.decode(rawBody)
    } catch {
      throw new WebhookVerificationError('Webhook verification failed: the body is not UTF-8')
    }
  } else throw new TypeError('verifyWebhook needs the raw body as received (a string or a Uint8Array), not a parsed object')
  const signed = signatureHeaders(headers)
  let reason = 'no matching signature'
  for (const secret of list) {
    let webhook: Webhook
    try {
      webhook = new Webhook(secret)
    } catch (error) {
      throw new TypeError(`a webhook secret is not a whsec_ secret: ${(error as Error).message}`)
    }
    try {
      webhook.verify(body, signed, { jsonParse: false })
    } catch (error) {
      reason = (error as Error).message
      continue
    }
    return parseEvent(body)
  }
  throw new WebhookVerificationError(`Webhook verification failed: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}`)
}

function parseEvent(body: string): TypedAffiliateEvent {
  let event: unknown
  try {
    event = JSON.parse(body)
  } catch {
    throw new WebhookVerificationError('Webhook verification failed: the signed body is not JSON')
  }
  const e = event as Record<string, unknown> | null
  if (typeof e !== 'object' || e === null || typeof e.id !== 'string' || typeof e.type !== 'string' || !('data' in e)) {
    throw new WebhookVerificationError(
      'Webhook verification failed: the signed body is not an event ({ id, type, createdAt, workspaceId, data })',
    )
  }
  return event as TypedAffiliateEvent
}
