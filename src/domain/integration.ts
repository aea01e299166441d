import { answerMapper } from './schema.js'

/** A payment provider connected to a workspace, as the API answers it: never its signing secret. */
export interface Integration {
  integrationId: string
  workspaceId: string
  provider: 'stripe'
  /** The campaign its leads join; null: the workspace's default campaign. */
  campaignId: string | null
  /** Events whose `livemode` differs are recorded `ignored`. */
  livemode: boolean
  /** Where the provider posts its events: `/api/v1/integrations/<integrationId>/events`, no key. */
  endpointPath: string
  description: string
  createdAt: string
  updatedAt: string
}

/** One event a provider sent, as `GET /integrations/events/list` answers it. */
export interface ProviderEvent {
  eventId: string
  integrationId: string
  type: string
  status: 'processed' | 'ignored' | 'failed'
  /** Why it was ignored or failed. */
  reason: string | null
  /** The commission it made or refunded. */
  commissionId: string | null
  receivedAt: string
}

export const toIntegration = answerMapper<'integrations', Integration>('integrations', 'integration')
export const toProviderEvent = answerMapper<'providerEvents', ProviderEvent>('providerEvents', 'providerEvent')

/** The events endpoint of an integration, beside the API's base path. */
export const endpointPathOf = (integrationId: string): string => `/api/v1/integrations/${integrationId}/events`
