import { uuid } from '../domain/checks.js'
import { integrations, providerEvents } from '../domain/descriptions/integrations.js'
import { createSchema, listSchema, updateSchema } from './model-schemas.js'
import { schema } from './validate.js'

// `POST|PUT /integrations`, `GET /integrations/list`, `GET /integrations/events/list` (SPEC wave 3,
// "Payment provider integrations (Stripe)").

export { INTEGRATION_PROVIDERS, PROVIDER_EVENT_STATUSES } from '../domain/descriptions/integrations.js'

export const integrationCreate = createSchema(integrations)

export const integrationUpdate = updateSchema(integrations)

export const integrationId = schema({ integrationId: uuid })

export const integrationList = listSchema(integrations)

export const providerEventList = listSchema(providerEvents)
