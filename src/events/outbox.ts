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
import type {
  FindQuery,
  ModelName,
  NumericField,
  RecordDeltas,
  RecordOf,
  RecordPatch,
  Storage,
  StorageTransaction,
  TransactionOptions,
  Where,
} from '../storage/types.js'
import { subscribes, type AffiliateEvent, type EventType } from './types.js'

/** The id of the counter record events take their `sequence` from. */
export const EVENT_SEQUENCE = 'events'

/**
 * The transaction the operations run in: the storage's own, and the events written in it, which
 * its storage (`withCommitHook`) hands to `committed` once the transaction commits. The events
 * travel with the transaction object itself: nothing beside it remembers them.
 */
export class EventTransaction implements StorageTransaction {
  private written: EventRecord[] | undefined
  constructor(private readonly tx: StorageTransaction) {}
  /** The events written in this transaction so far, in the order written. */
  get events(): EventRecord[] {
    return (this.written ??= [])
  }
  /** Whether an event was written in it. */
  get emitted(): boolean {
    return this.written !== undefined && this.written.length > 0
  }
  get<M extends ModelName>(model: M, id: string) {
    return this.tx.get(model, id)
  }
  find<M extends ModelName>(model: M, query: FindQuery<M>) {
    return this.tx.find(model, query)
  }
  select<M extends ModelName, F extends keyof RecordOf<M> & string>(model: M, fields: readonly F[], query: FindQuery<M>) {
    return this.tx.select(model, fields, query)
  }
  count<M extends ModelName>(model: M, query: Pick<FindQuery<M>, 'where' | 'contains'>) {
    return this.tx.count(model, query)
  }
  findPage<M extends ModelName>(model: M, query: FindQuery<M>) {
    return this.tx.findPage(model, query)
  }
  insert<M extends ModelName>(model: M, record: RecordOf<M>) {
    return this.tx.insert(model, record)
  }
  update<M extends ModelName>(model: M, id: string, patch: Partial<RecordOf<M>>) {
    return this.tx.update(model, id, patch)
  }
  increment<M extends ModelName>(model: M, id: string, deltas: Partial<Record<NumericField<M>, number>>) {
    return this.tx.increment(model, id, deltas)
  }
  updateMany<M extends ModelName>(model: M, where: Where<M>, patch: Partial<RecordOf<M>>) {
    return this.tx.updateMany(model, where, patch)
  }
  insertMany<M extends ModelName>(model: M, records: readonly RecordOf<M>[]) {
    return this.tx.insertMany(model, records)
  }
  updateEach<M extends ModelName>(model: M, changes: readonly RecordPatch<M>[], where?: Where<M>) {
    return this.tx.updateEach(model, changes, where)
  }
  incrementEach<M extends ModelName>(model: M, changes: readonly RecordDeltas<M>[]) {
    return this.tx.incrementEach(model, changes)
  }
  takeSequence(name: string, count: number, now: string) {
    return this.tx.takeSequence(name, count, now)
  }
  delete<M extends ModelName>(model: M, id: string) {
    return this.tx.delete(model, id)
  }
  deleteMany<M extends ModelName>(model: M, where: Where<M>) {
    return this.tx.deleteMany(model, where)
  }
}

/**
 * The storage the operations see: transactions are `EventTransaction`s, and what the host's
 * storage says of itself (`exclusive`, `health`, `close`, `reportErrorsTo`) is passed on as is.
 */
export interface EventStorage extends Omit<Storage, 'transaction'> {
  transaction<T>(work: (tx: EventTransaction) => Promise<T>, options?: TransactionOptions): Promise<T>
}

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
  tx: EventTransaction,
  clock: Clock,
  type: EventType,
  workspaceId: string,
  data: unknown,
  only?: WebhookRecord,
): Promise<EventRecord> {
  const now = isoAt(clock)
  const event: EventRecord = {
    id: newId(),
    workspaceId,
    type,
    sequence: await nextSequences(tx, now, 1),
    data: JSON.stringify(data),
    createdAt: now,
  }
  await tx.insert('events', event)
  const webhooks = only ? [only] : await tx.find('webhooks', { where: { workspaceId, enabled: true } })
  for (const webhook of webhooks)
    if (only || subscribes(webhook.events, type)) await tx.insert('webhookDeliveries', newDelivery(event, webhook))
  tx.events.push(event)
  return event
}

/**
 * `emit` of one event of `type` per item of `data`, in that order, written together: the events
 * take consecutive sequences (one move of the counter), and they and their deliveries (the same
 * rows `emit` would write for each) are stored with one `insertMany` each. Answers the events.
 */
export async function emitEach(
  tx: EventTransaction,
  clock: Clock,
  type: EventType,
  workspaceId: string,
  data: readonly unknown[],
): Promise<EventRecord[]> {
  if (data.length === 0) return []
  const now = isoAt(clock)
  const first = await nextSequences(tx, now, data.length)
  const events: EventRecord[] = data.map((item, i) => ({
    id: newId(),
    workspaceId,
    type,
    sequence: first + i,
    data: JSON.stringify(item),
    createdAt: now,
  }))
  await tx.insertMany('events', events)
  const webhooks = (await tx.find('webhooks', { where: { workspaceId, enabled: true } })).filter((webhook) =>
    subscribes(webhook.events, type),
  )
  if (webhooks.length > 0)
    await tx.insertMany(
      'webhookDeliveries',
      events.flatMap((event) => webhooks.map((webhook) => newDelivery(event, webhook))),
    )
  // One by one: spreading a run's worth of events into one call could pass more arguments than a call takes.
  for (const event of events) tx.events.push(event)
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
 * The storage the operations use: the host's, its transactions `EventTransaction`s whose events
 * are handed to `committed` once (and only if) the transaction commits, after `beforeCommit` wrote
 * what they call for (notifications) in the same transaction. A transaction run again after a
 * serialization failure reports only the events of its last, committed run (each run gets a
 * transaction object of its own). Everything else the storage offers is passed on unchanged.
 */
export function withCommitHook(
  storage: Storage,
  committed: (events: EventRecord[]) => void,
  beforeCommit?: (tx: StorageTransaction, events: EventRecord[]) => Promise<void>,
): EventStorage {
  return {
    transaction: async (work, options) => {
      let run: EventTransaction | undefined
      const result = await storage.transaction(async (tx) => {
        const current = (run = new EventTransaction(tx))
        const answer = await work(current)
        // What the events call for (notifications) is written in the same transaction, before it commits.
        if (beforeCommit && current.emitted) await beforeCommit(tx, current.events)
        return answer
      }, options)
      // A read-only transaction writes no event (its storage refuses writes): nothing to hand on.
      if (run?.emitted) committed(run.events)
      return result
    },
    ...(storage.exclusive !== undefined ? { exclusive: storage.exclusive } : {}),
    ...(storage.close ? { close: () => storage.close!() } : {}),
    ...(storage.health ? { health: () => storage.health!() } : {}),
    ...(storage.reportErrorsTo ? { reportErrorsTo: (report: (error: unknown) => void) => storage.reportErrorsTo!(report) } : {}),
  }
}

/** `emit`, answering `answer` (the resource as answered, which is also the event's data): `return emitted(tx, clock, type, ws, toX(record))`. */
export async function emitted<T>(tx: EventTransaction, clock: Clock, type: EventType, workspaceId: string, answer: T): Promise<T> {
  await emit(tx, clock, type, workspaceId, answer)
  return answer
}

/** `emitted` for an answer that names its workspace. */
export const announce = <T extends { workspaceId: string }>(tx: EventTransaction, clock: Clock, type: EventType, answer: T): Promise<T> =>
  emitted(tx, clock, type, answer.workspaceId, answer)

/**
 * The event of a change from `before` to `after` (records with a `status`), answering `answer`:
 * none when nothing changed (`after` is `before`, as a no-op update answers); else `types` when it
 * is one type, or `refunded` when the status became refunded or `refundedMinor` grew,
 * `statusChanged` when the status moved, `updated` otherwise. A moved status adds `previousStatus`.
 */
export async function emitChange<T extends object>(
  tx: EventTransaction,
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
  else if (types.refunded && ((moved && after.status === 'refunded') || (after.refundedMinor ?? 0) > (before.refundedMinor ?? 0)))
    type = types.refunded
  else type = moved ? types.statusChanged : types.updated
  await emit(tx, clock, type, before.workspaceId, moved ? { ...answer, previousStatus: before.status } : answer)
  return answer
}
