import { EVENT_TYPES } from '../domain/event-types.js'
import { integer, oneOf, queryInteger, uuid } from '../domain/checks.js'
import { DELIVERY_STATUSES, webhooks } from '../domain/descriptions/webhooks.js'
import { MAX_LIMIT, MAX_PAGE } from './list.js'
import { createSchema, listSchema, updateSchema } from './model-schemas.js'
import { allOptional, schema } from './validate.js'

// `POST|PUT /webhooks` and friends, `GET /webhooks/deliveries`, `GET /events/list`.

export const webhookCreate = createSchema(webhooks)

export const webhookUpdate = updateSchema(webhooks)

export const webhookId = schema({ webhookId: uuid })

/** `GET /webhooks/list`: the list query of every list (`contains` searches url and description). */
export const webhookList = listSchema(webhooks)

/** The longest overlap a rotation may ask for: 30 days. */
export const MAX_OVERLAP_HOURS = 720

export const webhookRotate = schema({ webhookId: uuid, ...allOptional({ overlapHours: integer(0, MAX_OVERLAP_HOURS) }) })

export const webhookTest = schema({ webhookId: uuid })

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
