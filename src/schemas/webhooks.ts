import { EVENT_TYPES, ALL_EVENTS } from '../events/types.js'
import { bool, field, integer, oneOf, queryInteger, text, uuid } from './fields.js'
import { listQuery, MAX_LIMIT, MAX_PAGE } from './list.js'
import { allOptional, schema } from './validate.js'

// `POST|PUT /webhooks` and friends, `GET /webhooks/deliveries`, `GET /events/list`.

/** An absolute http(s) URL; whether it may be used (https, no private address) is `checkWebhookUrl`'s call, with the service's options. */
export const webhookUrl = field<string>('webhookUrl', { type: 'string', format: 'uri', maxLength: 2048 }, (value) => {
  if (typeof value !== 'string' || value.length > 2048) return 'must be an https URL of at most 2048 characters'
  return URL.canParse(value) || 'must be an absolute https URL'
})

const SUBSCRIBABLE: readonly string[] = EVENT_TYPES.filter((type) => type !== 'webhook.test')

/** Event types, each at most once, or `["*"]` alone. */
export const eventTypes = field<string[]>(
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
    if (unknown !== undefined) return `holds ${JSON.stringify(unknown)}, which is not an event type (one of: ${SUBSCRIBABLE.join(', ')}, or "*")`
    return new Set(value).size === value.length || 'must not name a type twice'
  },
)

const readOnly = [
  'webhookId', 'id', 'secret', 'enabled', 'disabledReason', 'consecutiveDeadDeliveries', 'previousSecretExpiresAt', 'createdAt', 'updatedAt',
]

export const webhookCreate = schema({ workspaceId: uuid, url: webhookUrl, events: eventTypes, ...allOptional({ description: text(500) }) }, readOnly)

export const webhookUpdate = schema(
  allOptional({ url: webhookUrl, events: eventTypes, enabled: bool, description: text(500) }),
  readOnly.filter((name) => name !== 'enabled').concat('workspaceId'),
)

export const webhookId = schema({ webhookId: uuid })

/** `GET /webhooks/list`: the list query of every list (`contains` searches url and description). */
export const webhookList = listQuery(['createdAt', 'updatedAt', 'url'] as const)

/** The longest overlap a rotation may ask for: 30 days. */
export const MAX_OVERLAP_HOURS = 720

export const webhookRotate = schema({ webhookId: uuid, ...allOptional({ overlapHours: integer(0, MAX_OVERLAP_HOURS) }) })

export const webhookTest = schema({ webhookId: uuid })

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead'] as const

export const deliveryList = schema(
  allOptional({
    page: queryInteger(1, MAX_PAGE),
    limit: queryInteger(1, MAX_LIMIT),
    workspaceId: uuid,
    webhookId: uuid,
    eventId: uuid,
    status: oneOf(DELIVERY_STATUSES),
    orderValue: oneOf(['ASC', 'DESC'] as const),
  }),
)

export const deliveryRetry = schema({ deliveryId: uuid })

export const eventList = schema(
  allOptional({ workspaceId: uuid, type: oneOf(EVENT_TYPES), after: uuid, limit: queryInteger(1, MAX_LIMIT) }),
)

export const eventId = schema({ eventId: uuid })
