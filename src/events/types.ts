// An event as answered and sent (the types themselves are domain vocabulary: domain/event-types.ts).

export { ALL_EVENTS, EVENT_TYPES, type EventType } from '../domain/event-types.js'
import { ALL_EVENTS, type EventType } from '../domain/event-types.js'

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
