import { bool, oneOf, text, uuid } from './fields.js'
import { listQuery } from './list.js'
import { allOptional, schema } from './validate.js'

// `POST|PUT /integrations`, `GET /integrations/list`, `GET /integrations/events/list` (SPEC wave 3,
// "Payment provider integrations (Stripe)").

export const INTEGRATION_PROVIDERS = ['stripe'] as const
export const PROVIDER_EVENT_STATUSES = ['processed', 'ignored', 'waiting', 'failed'] as const

/** The provider's signing secret (Stripe's `whsec_…`): kept for the verifier, never answered. */
export const signingSecret = text(255, { min: 1 })

const readOnly = ['integrationId', 'id', 'endpointPath', 'createdAt', 'updatedAt']

export const integrationCreate = schema(
  {
    workspaceId: uuid,
    provider: oneOf(INTEGRATION_PROVIDERS),
    signingSecret,
    ...allOptional({ campaignId: uuid, livemode: bool, description: text(500) }),
  },
  readOnly,
)

export const integrationUpdate = schema(
  allOptional({ signingSecret, campaignId: uuid, livemode: bool, description: text(500) }),
  [...readOnly, 'workspaceId', 'provider'],
)

export const integrationId = schema({ integrationId: uuid })

export const integrationList = listQuery(['createdAt', 'updatedAt'] as const)

export const providerEventList = listQuery(['createdAt'] as const, { integrationId: uuid, status: oneOf(PROVIDER_EVENT_STATUSES) })
