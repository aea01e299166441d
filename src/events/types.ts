// The event types (SPEC.md "Events and signed webhooks"), and an event as answered and sent.

/** Every event type, in the order the docs list them. */
export const EVENT_TYPES = [
  'campaign.created',
  'campaign.updated',
  'campaign.deleted',
  'affiliate.created',
  'affiliate.updated',
  'affiliate.deleted',
  'link.created',
  'link.deleted',
  'commission.created',
  'commission.updated',
  'commission.status_changed',
  'commission.refunded',
  'commission.clawback_created',
  'commission.deleted',
  'referred_user.created',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'payout.created',
  'payout.updated',
  'payout.status_changed',
  'webhook.test',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** What `webhook.events` may hold: event types, or `*` alone for every one. */
export const ALL_EVENTS = '*'

/** An event as `GET /events` answers it and a webhook receives it. */
export interface AffiliateEvent<D = unknown> {
  id: string
  type: EventType
  createdAt: string
  workspaceId: string
  /** Grows with commit order: an event committed later has a larger one (numbers may be skipped). */
  sequence: number
  /** The resource as the API answers it (plus `previousStatus` on status changes). */
  data: D
}

/** Whether a webhook subscribed to `events` gets `type`. */
export const subscribes = (events: readonly string[], type: string): boolean => events.includes(ALL_EVENTS) || events.includes(type)
