// Standard Webhooks signatures (https://www.standardwebhooks.com/), with the `standardwebhooks`
// package that receivers verify with. Plain JavaScript only: the same file runs on Node, Bun, Deno
// and workers. It loads with the first delivery (the dispatcher imports it then), not with the package.

import { Webhook } from 'standardwebhooks'
import { isWebhookSecret } from './secrets.js'

/** The three Standard Webhooks headers of one delivery attempt. */
export interface WebhookSignatureHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

export interface SignInput {
  /** The event id: the same on every attempt, so receivers can drop duplicates. */
  id: string
  /** When this attempt is sent, in milliseconds (the service's clock); the header carries whole seconds. */
  timestamp: number
  /** The exact body sent: the signature covers these characters. */
  body: string
  /** Every live secret (see `liveSecrets`); each adds one `v1,<signature>` entry. */
  secrets: readonly string[]
}

/**
 * Signs one attempt: `webhook-signature` is `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each
 * secret, space-separated, so a receiver holding any live secret verifies it.
 */
export function signWebhook({ id, timestamp, body, secrets }: SignInput): WebhookSignatureHeaders {
  if (!id || /\s/.test(id)) throw new TypeError('the webhook id must be non-empty and without white space')
  if (!Number.isFinite(timestamp)) throw new TypeError('timestamp must be milliseconds since the epoch')
  if (secrets.length === 0) throw new TypeError('at least one secret signs a webhook')
  const at = new Date(timestamp)
  const signatures = secrets.map((secret) => {
    if (!isWebhookSecret(secret)) throw new TypeError('a signing secret is not a whsec_ secret')
    return new Webhook(secret).sign(id, at, body)
  })
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp / 1000)),
    'webhook-signature': [...new Set(signatures)].join(' '),
  }
}
