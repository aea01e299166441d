// The outbox: an event is written by the same storage transaction as the change it reports, with a
// delivery row for each enabled webhook of the workspace that subscribes to its type. A rolled-back
// or refused write therefore leaves no event, and a committed one always has its deliveries, even
// if the process dies right after the commit (the dispatcher finds them in storage).
//
// Order: `sequence` comes from the storage's `takeSequence('events')`, whose numbers follow commit
// order (the memory and sql.js storages run transactions one at a time and move a `sequences`
// record; PostgreSQL takes them from a database sequence under a transaction-long advisory lock, so
// emitting transactions take their turn only from their first event to their commit, and never
// fail for it). A later sequence is thus always committed later, and a reader paging with `after`
// can never miss an event that commits after it read past its sequence.

import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import type { EventRecord, WebhookDeliveryRecord, WebhookRecord } from '../domain/records.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import { subscribes, type AffiliateEvent, type EventType } from './types.js'

/** The id of the counter record events take their `sequence` from. */
export const EVENT_SEQUENCE = 'events'

/** Events each open transaction has written, handed to listeners once it commits. */
const written = new WeakMap<StorageTransaction, EventRecord[]>()

/** `count` consecutive event sequences taken in `tx` (see the comment at the top); answers the first. */
const nextSequences = (tx: StorageTransaction, now: string, count: number): Promise<number> => tx.takeSequence(EVENT_SEQUENCE, count, now)

/** A pending delivery of `event` to `webhook`, due now. */
export const newDelivery = (event: EventRecord, webhook: WebhookRecord): WebhookDeliveryRecord => ({
  id: newId(),
  workspaceId: event.workspaceId,
  webhookId: webhook.id,
  eventId: event.id,
  eventType: event.type,
  status: 'pending',
  attempts: 0,
  nextAttemptAt: event.createdAt,
  claimToken: null,
  lastStatusCode: null,
  lastError: null,
  lastResponseBody: null,
  lastDurationMs: null,
  createdAt: event.createdAt,
  updatedAt: event.createdAt,
})

/**
 * Writes event `type` of `workspaceId` with `data` (the resource as answered) in `tx`, and a
 * delivery for each enabled webhook of the workspace subscribed to it; `only` limits the
 * deliveries to that webhook (`POST /webhooks/test`). Answers the event.
 */
export async function emit(
  tx: StorageTransaction,
  clock: Clock,
  type: EventType,
  workspaceId: string,
  data: unknown,
  only?: WebhookRecord,
): Promise<EventRecord> {
  const now = isoAt(clock)
  const event: EventRecord = { id: newId(), workspaceId, type, sequence: await nextSequences(tx, now, 1), data: JSON.stringify(data), createdAt: now }
  await tx.insert('events', event)
  const webhooks = only ? [only] : await tx.find('webhooks', { where: { workspaceId, enabled: true } })
  for (const webhook of webhooks) if (only || subscribes(webhook.events, type)) await tx.insert('webhookDeliveries', newDelivery(event, webhook))
  written.get(tx)?.push(event)
  return event
}

/**
 * `emit` of one event of `type` per item of `data`, in that order, written together: the events
 * take consecutive sequences (one move of the counter), and they and their deliveries (the same
 * rows `emit` would write for each) are stored with one `insertMany` each. Answers the events.
 */
export async function emitEach(
  tx: StorageTransaction,
  clock: Clock,
  type: EventType,
  workspaceId: string,
  data: readonly unknown[],
): Promise<EventRecord[]> {
  if (data.length === 0) return []
  const now = isoAt(clock)
  const first = await nextSequences(tx, now, data.length)
  const events: EventRecord[] = data.map((item, i) => ({ id: newId(), workspaceId, type, sequence: first + i, data: JSON.stringify(item), createdAt: now }))
  await tx.insertMany('events', events)
  const webhooks = (await tx.find('webhooks', { where: { workspaceId, enabled: true } })).filter((webhook) => subscribes(webhook.events, type))
  if (webhooks.length > 0) await tx.insertMany('webhookDeliveries', events.flatMap((event) => webhooks.map((webhook) => newDelivery(event, webhook))))
  const listed = written.get(tx)
  // One by one: spreading a run's worth of events into one call could pass more arguments than a call takes.
  if (listed) for (const event of events) listed.push(event)
  return events
}

/** An event record as answered (its `data` parsed). */
export const toEvent = (record: EventRecord): AffiliateEvent => ({
  id: record.id,
  type: record.type as EventType,
  createdAt: record.createdAt,
  workspaceId: record.workspaceId,
  sequence: record.sequence,
  data: JSON.parse(record.data),
})

/**
 * The storage the operations use: the host's, with each transaction's events handed to
 * `committed` once (and only if) it commits, after `beforeCommit` wrote what they call for in it. A transaction run again after a serialization failure
 * reports only the events of its last, committed run.
 */
export function withCommitHook(
  storage: Storage,
  committed: (events: EventRecord[]) => void,
  beforeCommit?: (tx: StorageTransaction, events: EventRecord[]) => Promise<void>,
): Storage {
  return {
    transaction: async (work, options) => {
      // A read-only transaction writes no event: nothing to collect or hand on.
      if (options?.readOnly) return storage.transaction(work, options)
      let events: EventRecord[] = []
      const result = await storage.transaction(async (tx) => {
        events = []
        written.set(tx, events)
        const answer = await work(tx)
        // What the events call for (notifications) is written in the same transaction, before it commits.
        if (beforeCommit && events.length > 0) await beforeCommit(tx, events)
        return answer
      }, options)
      if (events.length > 0) committed(events)
      return result
    },
    ...(storage.close ? { close: () => storage.close!() } : {}),
    ...(storage.health ? { health: () => storage.health!() } : {}),
  }
}

/** `emit`, answering `answer` (the resource as answered, which is also the event's data): `return emitted(tx, clock, type, ws, toX(record))`. */
export async function emitted<T>(tx: StorageTransaction, clock: Clock, type: EventType, workspaceId: string, answer: T): Promise<T> {
  await emit(tx, clock, type, workspaceId, answer)
  return answer
}

/** `emitted` for an answer that names its workspace. */
export const announce = <T extends { workspaceId: string }>(tx: StorageTransaction, clock: Clock, type: EventType, answer: T): Promise<T> =>
  emitted(tx, clock, type, answer.workspaceId, answer)

/**
 * The event of a change from `before` to `after` (records with a `status`), answering `answer`:
 * none when nothing changed (`after` is `before`, as a no-op update answers); else `types` when it
 * is one type, or `refunded` when the status became refunded or `refundedMinor` grew,
 * `statusChanged` when the status moved, `updated` otherwise. A moved status adds `previousStatus`.
 */
export async function emitChange<T extends object>(
  tx: StorageTransaction,
  clock: Clock,
  types: EventType | { updated: EventType; statusChanged: EventType; refunded?: EventType },
  before: { status: string; workspaceId: string; refundedMinor?: number },
  after: { status: string; refundedMinor?: number },
  answer: T,
): Promise<T> {
  if ((after as object) === before) return answer
  const moved = after.status !== before.status
  let type: EventType
  if (typeof types === 'string') type = types
  else if (types.refunded && ((moved && after.status === 'refunded') || (after.refundedMinor ?? 0) > (before.refundedMinor ?? 0))) type = types.refunded
  else type = moved ? types.statusChanged : types.updated
  await emit(tx, clock, type, before.workspaceId, moved ? { ...answer, previousStatus: before.status } : answer)
  return answer
}
