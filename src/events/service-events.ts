// `service.events`: the dispatcher's switch, and in-process listeners called after commit.

import type { Clock } from '../clock.js'
import type { EventRecord } from '../domain/records.js'
import type { OnError } from '../on-error.js'
import type { Storage } from '../storage/types.js'
import type { WebhookAddressPolicy } from '../webhooks/address.js'
import type { WebhookSender } from '../webhooks/delivery.js'
import { DEFAULT_RETENTION_DAYS, type Random } from '../webhooks/schedule.js'
import { Dispatcher, purgeExpired } from './dispatcher.js'
import { toEvent } from './outbox.js'
import { ALL_EVENTS, EVENT_TYPES, type AffiliateEvent, type EventType } from './types.js'

export interface WebhookOptions extends WebhookAddressPolicy {
  /** Days events and deliveries are kept. @default 30 */
  retentionDays?: number
  /**
   * Sends one signed delivery. @default none in the core: `serve()` of the Node and Express
   * adapters and `npm start` pass `createNodeWebhookSender` (SSRF-checked on the connected address)
   * with this policy; hosts that call `service.events.start()` themselves pass one here or to `start`.
   */
  send?: WebhookSender
  /** Jitter source of the retry schedule (tests pass a fixed one). @default Math.random */
  random?: Random
  /** Wait between looks for due deliveries, in ms. @default 1000 */
  pollMs?: number
  /** Deliveries sent at once by one instance. @default 32 */
  concurrency?: number
}

export type EventListener = (event: AffiliateEvent) => void | Promise<void>

/** A sender, or what makes one for the service's address policy (`createNodeWebhookSender` is one). */
export interface SenderChoice {
  send?: WebhookSender
  sender?: (policy: WebhookAddressPolicy) => WebhookSender
}

export interface ServiceEvents {
  /**
   * Starts delivering webhooks in the background (idempotent). The sender is the service's
   * `webhooks.send`, else `send`, else `sender(policy)` made with the service's address policy
   * (`start({ sender: createNodeWebhookSender })`); without any it throws.
   */
  start(options?: SenderChoice): void
  /** Whether the service was given `webhooks.send` (so `start()` needs no argument). */
  readonly hasSender: boolean
  /** Stops delivering and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
  /** Whether the background delivery runs. */
  readonly running: boolean
  /** Sends every delivery due now (by the service's clock) and answers how many attempts were made: for tests and cron-style hosts. */
  deliverDue(options?: SenderChoice): Promise<number>
  /** Deletes events and deliveries older than the retention now (the dispatcher does it hourly). */
  purge(): Promise<{ events: number; deliveries: number }>
  /**
   * Calls `listener` with each event of `type` (or every event, `'*'`) once its transaction has
   * committed, in this process only: not durable (an event committed just before a crash never
   * reaches it, and other instances' events never do). Use webhooks or `GET /events/list` for
   * anything that must not be missed. Answers a function that removes the listener.
   */
  on(type: EventType | typeof ALL_EVENTS, listener: EventListener): () => void
}

export interface EventsRuntime {
  events: ServiceEvents
  /** What the storage wrapper calls after a commit that wrote events. */
  committed(records: EventRecord[]): void
}

export function createServiceEvents(
  deps: { storage: Storage; clock: Clock; onError: OnError; policy: WebhookAddressPolicy },
  options: WebhookOptions = {},
): EventsRuntime {
  const retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS
  if (typeof retentionDays !== 'number' || !Number.isFinite(retentionDays) || retentionDays <= 0) {
    throw new TypeError('webhooks.retentionDays must be a positive number of days')
  }
  if (options.send !== undefined && typeof options.send !== 'function') throw new TypeError('webhooks.send must be a function')
  const listeners = new Map<string, Set<EventListener>>()
  let dispatcher: Dispatcher | undefined

  const dispatcherWith = (choice: SenderChoice | undefined): Dispatcher => {
    if (dispatcher) return dispatcher
    const sender = options.send ?? choice?.send ?? choice?.sender?.({ ...deps.policy })
    if (!sender) {
      throw new TypeError(
        'No webhook sender: pass webhooks: { send } to createAffiliateService (e.g. createNodeWebhookSender from affiliate-service/node), or serve with an adapter that has one',
      )
    }
    dispatcher = new Dispatcher({
      storage: deps.storage,
      clock: deps.clock,
      send: sender,
      retentionDays,
      ...(options.random ? { random: options.random } : {}),
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      onError: (error) => deps.onError(error, { source: 'dispatcher' }),
    })
    return dispatcher
  }

  const call = (listener: EventListener, event: AffiliateEvent) => {
    const failed = (error: unknown) => deps.onError(error, { source: 'listener', event })
    try {
      const result = listener(event)
      if (result && typeof (result as Promise<void>).catch === 'function') (result as Promise<void>).catch(failed)
    } catch (error) {
      failed(error)
    }
  }

  const events: ServiceEvents = {
    start: (choice) => dispatcherWith(choice).start(),
    hasSender: options.send !== undefined,
    stop: async () => dispatcher?.stop(),
    get running() {
      return dispatcher?.running ?? false
    },
    deliverDue: (choice) => dispatcherWith(choice).deliverDue(),
    purge: () => (dispatcher ? dispatcher.purge() : purgeExpired(deps.storage, deps.clock, retentionDays)),
    on(type, listener) {
      if (type !== ALL_EVENTS && !(EVENT_TYPES as readonly string[]).includes(type))
        throw new TypeError(`Unknown event type ${String(type)}`)
      if (typeof listener !== 'function') throw new TypeError('listener must be a function')
      let set = listeners.get(type)
      if (!set) listeners.set(type, (set = new Set()))
      set.add(listener)
      return () => void set.delete(listener)
    },
  }

  return {
    events,
    committed(records) {
      dispatcher?.nudge()
      if (listeners.size === 0) return
      // After the caller's answer: a listener never delays or fails the write that made the event.
      queueMicrotask(() => {
        for (const record of records) {
          const specific = listeners.get(record.type)
          const any = listeners.get(ALL_EVENTS)
          if (!specific?.size && !any?.size) continue
          const event = toEvent(record)
          for (const listener of [...(specific ?? []), ...(any ?? [])]) call(listener, event)
        }
      })
    },
  }
}
