import { answerMapper, type AnswerOf } from './answers.js'

/** A webhook as answered: never its secrets (see descriptions/webhooks.ts). */
export type Webhook = AnswerOf<'webhooks', 'webhook'>

/** A webhook with its new secret: the answer of `POST /webhooks` and `POST /webhooks/rotate-secret`, the only ones that show it. */
export interface WebhookWithSecret extends Webhook {
  secret: string
}

/** One event to one webhook, with its last attempt. */
export type WebhookDelivery = AnswerOf<'webhookDeliveries', 'delivery'>

export const toWebhook = answerMapper('webhooks', 'webhook')
export const toDelivery = answerMapper('webhookDeliveries', 'delivery')
