// The event types (SPEC.md "Events and signed webhooks"): what webhooks subscribe to.

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
  'commission.held',
  'commission.released',
  'commission.voided',
  'referred_user.created',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'promo_code.created',
  'promo_code.deleted',
  'payout.created',
  'payout.updated',
  'payout.status_changed',
  'webhook.test',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** What `webhook.events` may hold: event types, or `*` alone for every one. */
export const ALL_EVENTS = '*'
