import { answerMapper, type AnswerOf } from './answers.js'

/** A payment provider connected to a workspace, as the API answers it: never its signing secret. */
export type Integration = AnswerOf<'integrations', 'integration'>

/** One event a provider sent, as `GET /integrations/events/list` answers it. */
export type ProviderEvent = AnswerOf<'providerEvents', 'providerEvent'>

export const toIntegration = answerMapper('integrations', 'integration')
export const toProviderEvent = answerMapper('providerEvents', 'providerEvent')

/** The events endpoint of an integration, beside the API's base path. */
export const endpointPathOf = (integrationId: string): string => `/api/v1/integrations/${integrationId}/events`
