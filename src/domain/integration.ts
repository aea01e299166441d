import type { ProviderEventStatus } from './records.js'
import { answerMapper } from './schema.js'

/** A payment provider connected to a workspace, as the API answers it: never its signing secret. */
export interface Integration {
  integrationId: string
  workspaceId: string
  provider: 'stripe'
  /** Attribution is limited to this campaign's affiliates and codes; null: any campaign of the workspace (and once that campaign is deleted). */
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
  /** `waiting`: a refund, or a payment of an invoice, whose sale is not known yet (applied when it comes); `failed` only on records of earlier versions. */
  status: ProviderEventStatus
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
