import { answerMapper } from './schema.js'

/** A webhook as answered: never its secrets. */
export interface Webhook {
  webhookId: string
  workspaceId: string
  url: string
  events: string[]
  description: string
  enabled: boolean
  /** Why it was disabled: a 410, 5 dead deliveries in a row, or by hand. */
  disabledReason: string | null
  consecutiveDeadDeliveries: number
  /** Until then, after rotations, earlier secrets sign too (each until its own overlap ends). */
  previousSecretExpiresAt: string | null
  createdAt: string
  updatedAt: string
}

/** A webhook with its new secret: the answer of `POST /webhooks` and `POST /webhooks/rotate-secret`, the only ones that show it. */
export interface WebhookWithSecret extends Webhook {
  secret: string
}

/** One event to one webhook, with its last attempt. */
export interface WebhookDelivery {
  deliveryId: string
  webhookId: string
  eventId: string
  eventType: string
  status: 'pending' | 'succeeded' | 'failed' | 'dead'
  attempts: number
  nextAttemptAt: string | null
  lastStatusCode: number | null
  lastError: string | null
  lastResponseBody: string | null
  lastDurationMs: number | null
  createdAt: string
  updatedAt: string
}

export const toWebhook = answerMapper<'webhooks', Webhook>('webhooks', 'webhook')
export const toDelivery = answerMapper<'webhookDeliveries', WebhookDelivery>('webhookDeliveries', 'delivery')
