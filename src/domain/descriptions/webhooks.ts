import * as check from '../checks.js'
import { model } from '../describe.js'
import { ALL_EVENTS, EVENT_TYPES } from '../event-types.js'
import { bool, editable, indexedText, int, list, nullableText, required, stamps, text, timestamp } from './fields.js'

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead'] as const

/** An absolute http(s) URL; whether it may be used (https, no private address) is `checkWebhookUrl`'s call, with the service's options. */
export const webhookUrl = check.check<string>('webhookUrl', { type: 'string', format: 'uri', maxLength: 2048 }, (value) => {
  if (typeof value !== 'string' || value.length > 2048) return 'must be an https URL of at most 2048 characters'
  return URL.canParse(value) || 'must be an absolute https URL'
})

const SUBSCRIBABLE: readonly string[] = EVENT_TYPES.filter((type) => type !== 'webhook.test')

/** Event types, each at most once, or `["*"]` alone. */
export const eventTypes = check.check<string[]>(
  'eventTypes',
  {
    type: 'array',
    minItems: 1,
    uniqueItems: true,
    items: { type: 'string', enum: [ALL_EVENTS, ...SUBSCRIBABLE] },
    description: 'The event types to send, or `["*"]` for every one.',
  },
  (value) => {
    if (!Array.isArray(value) || value.length === 0) return 'must be a non-empty list of event types, or ["*"]'
    if (value.includes(ALL_EVENTS)) return value.length === 1 || '"*" stands for every type: give it alone'
    const unknown = value.find((type) => typeof type !== 'string' || !SUBSCRIBABLE.includes(type))
    if (unknown !== undefined)
      return `holds ${JSON.stringify(unknown)}, which is not an event type (one of: ${SUBSCRIBABLE.join(', ')}, or "*")`
    return new Set(value).size === value.length || 'must not name a type twice'
  },
)

/** Where a workspace's events are POSTed, signed with `secret` (and each of `previousSecrets` while its overlap lasts). */
export const webhooks = model(
  {
    id: text({ answerAs: 'webhookId' }),
    workspaceId: text({ indexed: true, input: check.uuid, create: 'required' }),
    url: text({ searched: true, input: webhookUrl, ...required, form: { label: 'Endpoint URL', control: 'url' } }),
    events: list({
      description: 'Event types sent, or `["*"]` for all.',
      input: eventTypes,
      ...required,
      form: {
        label: 'Events',
        control: 'checkboxes',
        options: Object.fromEntries([[ALL_EVENTS, 'Every event'], ...SUBSCRIBABLE.map((type) => [type, type])]),
      },
    }),
    description: text({ searched: true, input: check.text(500), ...editable, default: '', form: { label: 'Description' } }),
    enabled: bool({ update: 'optional' }),
    disabledReason: text({ nullable: true, description: 'Why it was disabled (a 410, or 5 dead deliveries in a row).' }),
    /** Deliveries that ended dead since the last one that succeeded (5 disable the webhook). */
    consecutiveDeadDeliveries: int(),
    /** `whsec_...`; kept as is, since signing needs it (HMAC), and never answered after creation or rotation. */
    secret: text({ readOnly: true }),
    previousSecrets: list({ description: 'The earlier secrets that still sign, each `<expiresAt> <secret>`, newest first.' }),
    previousSecretExpiresAt: timestamp({ nullable: true, description: 'Until then earlier secrets sign too (each until its own expiry).' }),
    ...stamps,
  },
  {
    answers: {
      webhook: [
        'id',
        'workspaceId',
        'url',
        'events',
        'description',
        'enabled',
        'disabledReason',
        'consecutiveDeadDeliveries',
        'previousSecretExpiresAt',
        'createdAt',
        'updatedAt',
      ],
    },
    list: { orderBy: ['createdAt', 'updatedAt', 'url'] },
  },
)

/** One event to one webhook, with the outcome of its last attempt. */
export const webhookDeliveries = model(
  {
    id: text({ answerAs: 'deliveryId' }),
    workspaceId: indexedText,
    webhookId: indexedText,
    eventId: text(),
    eventType: text(),
    status: text({ indexed: true, values: DELIVERY_STATUSES }),
    attempts: int(),
    /** Null once final. */
    nextAttemptAt: timestamp({ nullable: true, description: 'When it is due; while being sent, the end of the lease.' }),
    /** The claim of the dispatcher holding it (its lease), null when none does. */
    claimToken: nullableText,
    lastStatusCode: int({ nullable: true }),
    lastError: nullableText,
    lastResponseBody: text({ nullable: true, description: 'The first 1 KiB of the last response body.' }),
    lastDurationMs: int({ nullable: true }),
    ...stamps,
  },
  {
    answers: {
      delivery: [
        'id',
        'webhookId',
        'eventId',
        'eventType',
        'status',
        'attempts',
        'nextAttemptAt',
        'lastStatusCode',
        'lastError',
        'lastResponseBody',
        'lastDurationMs',
        'createdAt',
        'updatedAt',
      ],
    },
  },
)

/**
 * A change, written in the same transaction as the change itself (the outbox). `sequence` is
 * allocated from the `sequences` record in that transaction, so it follows commit order (see
 * src/events/outbox.ts); `data` is the JSON of the resource as the API answers it.
 */
export const events = model({
  id: text(),
  workspaceId: indexedText,
  type: text(),
  sequence: int({ unique: 'events_sequence', description: 'Commit order: what `after` pages by.' }),
  data: text({ description: 'JSON of the resource as the API answers it.' }),
  createdAt: timestamp(),
})
