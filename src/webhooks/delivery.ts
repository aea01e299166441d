// One delivery attempt as the dispatcher sees it: the request it sends (the event, signed) and the
// result a sender answers. Senders are per runtime (adapters/node/webhook-delivery.ts on Node).

import { classifyStatus, type AttemptOutcome } from './schedule.js'
import { signWebhook, type WebhookSignatureHeaders } from './signing.js'

/** An event as it is stored and sent (SPEC.md: `data` is the resource as the API answers it). */
export interface WebhookEvent {
  id: string
  type: string
  createdAt: string
  workspaceId: string
  /** See `AffiliateEvent.sequence`. */
  sequence: number
  data: unknown
}

/** What a sender POSTs: `body` exactly as signed, with the signature headers. */
export interface WebhookRequest {
  url: string
  body: string
  headers: WebhookSignatureHeaders
}

/** What one attempt came to, for the delivery log and the retry schedule. */
export interface DeliveryResult {
  outcome: AttemptOutcome
  /** The receiver's HTTP status; null when none came (refused, timed out, network error). */
  status: number | null
  /** From the start of the attempt to its end. */
  durationMs: number
  /** Why the attempt did not succeed; absent on a 2xx. */
  error?: string
  /** The first 1 KiB of the response body (UTF-8, lossy at the cut); '' when there was none. */
  responseBody: string
  /** True when the SSRF rules refused the URL or its addresses: nothing was sent. */
  refused?: boolean
}

/** Sends one signed request; never throws (failures are results). */
export type WebhookSender = (request: WebhookRequest) => Promise<DeliveryResult>

/** The signed request for `event` to `url` at `now` (ms), with every live secret. */
export function buildWebhookRequest(event: WebhookEvent, url: string, secrets: readonly string[], now: number): WebhookRequest {
  const body = JSON.stringify({
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    workspaceId: event.workspaceId,
    sequence: event.sequence,
    data: event.data,
  })
  return { url, body, headers: signWebhook({ id: event.id, timestamp: now, body, secrets }) }
}

/** A result for an answer with `status`, classified (2xx success, 410 gone, else retryable). */
export function resultForStatus(status: number, durationMs: number, responseBody: string, location?: string): DeliveryResult {
  const outcome = classifyStatus(status)
  if (outcome === 'success') return { outcome, status, durationMs, responseBody }
  const redirect = status >= 300 && status <= 399 ? ` (a redirect${location ? ` to ${location}` : ''}, not followed)` : ''
  return { outcome, status, durationMs, responseBody, error: `the endpoint answered ${status}${redirect}` }
}
