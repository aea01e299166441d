import * as check from '../checks.js'
import { model } from '../describe.js'
import { bool, editable, indexedText, required, stamps, text, timestamp } from './fields.js'

export const INTEGRATION_PROVIDERS = ['stripe'] as const
export const PROVIDER_EVENT_STATUSES = ['processed', 'ignored', 'failed'] as const

/** A payment provider connected to a workspace: its events become leads, sales and refunds. */
export const integrations = model(
  {
    id: text({ answerAs: 'integrationId' }),
    workspaceId: text({ indexed: true, input: check.uuid, create: 'required' }),
    provider: text({ values: INTEGRATION_PROVIDERS, create: 'required' }),
    /** The provider's signing secret (Stripe's `whsec_…`): read by the verifier only, never answered. */
    signingSecret: text({
      input: check.text(255, { min: 1 }),
      ...required,
      form: {
        label: 'Signing secret',
        control: 'password',
        hint: 'Stripe shows it (whsec_…) on the endpoint’s page once you add the endpoint. Adding the endpoint now? Connect with any placeholder, paste the endpoint URL shown above into Stripe, then use Replace secret.',
      },
    }),
    campaignId: text({
      nullable: true,
      description: "The campaign its leads join; null: the workspace's default campaign.",
      input: check.uuid,
      ...editable,
      form: { label: 'Campaign', control: 'select', none: 'The workspace’s default campaign', hint: 'The campaign the customers Stripe brings join.' },
    }),
    livemode: bool({ description: 'Events whose livemode differs are recorded as ignored.', ...editable, default: true, form: { label: 'Live mode', hint: '(untick to take the events of Stripe’s test mode instead)' } }),
    /** Where the provider posts events: `/api/v1/integrations/<id>/events`. */
    endpointPath: text({ description: 'Where the provider posts its events (beside the API, no key).' }),
    description: text({ searched: true, input: check.text(500), ...editable, default: '', form: { label: 'Description', hint: 'Which Stripe account, e.g. Main shop.' } }),
    ...stamps,
  },
  {
    answers: {
      integration: ['id', 'workspaceId', 'provider', 'campaignId', 'livemode', 'endpointPath', 'description', 'createdAt', 'updatedAt'],
    },
    list: { orderBy: ['createdAt', 'updatedAt'] },
  },
)

/** One provider event an integration received; its `eventId` is unique per integration (a redelivery changes nothing). */
export const providerEvents = model(
  {
    id: text(),
    workspaceId: indexedText,
    integrationId: text({ indexed: true, filter: check.uuid }),
    /** The provider's event id (`evt_…`). */
    eventId: text({ description: "The provider's event id." }),
    type: text(),
    status: text({ indexed: true, values: PROVIDER_EVENT_STATUSES, filter: true }),
    reason: text({ nullable: true, description: 'Why it was ignored or failed.' }),
    commissionId: text({ nullable: true, description: 'The commission it made or refunded.' }),
    receivedAt: timestamp(),
    ...stamps,
  },
  {
    unique: [{ name: 'provider_events_integration_event', fields: ['integrationId', 'eventId'] }],
    indexes: [['integrationId', 'eventId'], ['integrationId', 'status']],
    answers: {
      providerEvent: ['eventId', 'integrationId', 'type', 'status', 'reason', 'commissionId', 'receivedAt'],
    },
    list: { orderBy: ['createdAt'] },
  },
)
