import * as check from '../checks.js'
import { model } from '../describe.js'
import { bool, editable, indexedText, int, nullableText, required, stamps, text, timestamp } from './fields.js'

export const INTEGRATION_PROVIDERS = ['stripe', 'paddle', 'lemonsqueezy'] as const
export const PROVIDER_EVENT_STATUSES = ['processed', 'ignored', 'waiting', 'failed'] as const

/** A payment provider connected to a workspace: its events become leads, sales and refunds. */
export const integrations = model(
  {
    id: text({ answerAs: 'integrationId' }),
    workspaceId: text({ indexed: true, input: check.uuid, create: 'required' }),
    provider: text({ values: INTEGRATION_PROVIDERS, create: 'required', description: 'stripe, paddle (Paddle Billing) or lemonsqueezy.' }),
    /** The provider's signing secret (Stripe's `whsec_…`, Paddle's notification secret, Lemon Squeezy's webhook secret): read by the verifier only, never answered. */
    signingSecret: text({
      input: check.text(255, { min: 1 }),
      ...required,
      form: {
        label: 'Signing secret',
        control: 'password',
        hint: 'The provider shows it once you add the endpoint: Stripe’s whsec_…, Paddle’s secret key of the notification destination; for Lemon Squeezy, the secret you type into the webhook. Adding the endpoint now? Connect with any placeholder, paste the endpoint URL shown above into the provider, then use Replace secret.',
      },
    }),
    /**
     * The host's Stripe restricted key (`rk_…`, promotion codes: write): read only to make and
     * deactivate the Stripe promotion codes of promo codes; never answered, like the signing secret.
     */
    apiKey: text({
      nullable: true,
      input: check.nullable(check.text(255, { min: 1 })),
      ...editable,
      default: null,
      form: {
        label: 'Restricted API key',
        control: 'password',
        hint: 'Optional: a Stripe restricted key (rk_…) with write access to promotion codes. With it, a promo code given to an affiliate of a campaign with a Stripe coupon becomes a Stripe promotion code.',
      },
    }),
    campaignId: text({
      nullable: true,
      description:
        "Attribution is limited to this campaign's affiliates and codes; null: any campaign of the workspace (and when that campaign is deleted).",
      input: check.uuid,
      ...editable,
      form: {
        label: 'Campaign',
        control: 'select',
        none: 'Any campaign of the workspace',
        hint: 'Only this campaign’s affiliates and codes are credited with the customers the provider brings.',
      },
    }),
    livemode: bool({
      description: 'Events whose livemode differs are recorded as ignored.',
      ...editable,
      default: true,
      form: {
        label: 'Live mode',
        hint: '(untick to take the events of Stripe’s or Lemon Squeezy’s test mode instead; Paddle’s sandbox has its own secret)',
      },
    }),
    /** Where the provider posts events: `/api/v1/integrations/<id>/events`. */
    endpointPath: text({ description: 'Where the provider posts its events (beside the API, no key).' }),
    description: text({
      searched: true,
      input: check.text(500),
      ...editable,
      default: '',
      form: { label: 'Description', hint: 'Which account, e.g. Main shop.' },
    }),
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
    status: text({
      indexed: true,
      values: PROVIDER_EVENT_STATUSES,
      description: '`waiting`: a refund, or a payment of an invoice, whose sale is not known yet; applied when it arrives.',
      filter: true,
    }),
    reason: text({ nullable: true, description: 'Why it was ignored or failed.' }),
    commissionId: text({ nullable: true, description: 'The commission it made or refunded.' }),
    /** The payment it concerns, as far as the event names it: what a sale and its refunds are matched by. */
    invoiceId: nullableText,
    chargeId: nullableText,
    paymentIntentId: nullableText,
    /** A refund: the charge's amount and its `amount_refunded`, in minor units (0 for other events). */
    chargedMinor: int(),
    refundedMinor: int(),
    receivedAt: timestamp(),
    ...stamps,
  },
  {
    unique: [{ name: 'provider_events_integration_event', fields: ['integrationId', 'eventId'] }],
    // A sale finds the events of its payment that came first (a refund, its invoice's payment) by each of its ids.
    indexes: [
      ['integrationId', 'eventId'],
      ['integrationId', 'status'],
      ['workspaceId', 'invoiceId'],
      ['workspaceId', 'chargeId'],
      ['workspaceId', 'paymentIntentId'],
    ],
    answers: {
      providerEvent: ['eventId', 'integrationId', 'type', 'status', 'reason', 'commissionId', 'receivedAt'],
    },
    list: { orderBy: ['createdAt'] },
  },
)
