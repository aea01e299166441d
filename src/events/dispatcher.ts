// The background delivery of webhooks: claims due deliveries from storage, sends each signed with
// the webhook's live secrets through the injected sender, and records the attempt, the retry
// schedule and the webhook's health. Safe with several instances on one PostgreSQL: a claim is one
// guarded `updateMany` (still due, still pending or failed) that moves `nextAttemptAt` to the end
// of a lease and stamps a claim token, so of two instances claiming the same delivery one updates
// it and the other (run again after the serialization failure) finds it no longer due. The result
// is written only while the claim token still matches (read and written in one serializable
// transaction): an instance that outlived its lease cannot overwrite the attempt of the one that
// took over.

import type { Clock } from '../clock.js'
import { newId } from '../crypto.js'
import type { EventRecord, WebhookDeliveryRecord, WebhookRecord } from '../domain/records.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import type { DeliveryResult, WebhookSender } from '../webhooks/delivery.js'
import { planAfterAttempt, retentionCutoff, webhookAfterDelivery, type Random } from '../webhooks/schedule.js'
import { liveSecrets } from '../webhooks/secrets.js'
import { PollingWorker } from './polling-loop.js'

export interface DispatcherOptions {
  storage: Storage
  clock: Clock
  send: WebhookSender
  /** Events and deliveries older than this are deleted. @default 30 */
  retentionDays: number
  /** Jitter source of the retry schedule. @default Math.random */
  random?: Random
  /** Deliveries claimed per transaction. @default 100 */
  batchSize?: number
  /** Deliveries sent at once. @default 32 */
  concurrency?: number
  /** How long a claim holds a delivery: past it another instance may send it. @default 60000 (the send timeout is 15000) */
  leaseMs?: number
  /** Wait between looks for due deliveries when nothing woke the dispatcher. @default 1000 */
  pollMs?: number
  /** How often old events and deliveries are deleted. @default 3600000 */
  purgeEveryMs?: number
  onError: (error: unknown) => void
}

const DUE: WebhookDeliveryRecord['status'][] = ['pending', 'failed']
const iso = (ms: number) => new Date(ms).toISOString()

/** A claimed delivery with what sending it needs (absent when deleted meanwhile). */
interface Claimed {
  delivery: WebhookDeliveryRecord
  webhook: WebhookRecord | null
  event: EventRecord | null
}

async function byIds<M extends 'webhooks' | 'events'>(tx: StorageTransaction, model: M, ids: string[]) {
  const found = ids.length ? await tx.find(model, { where: { id: { in: [...new Set(ids)] } } }) : []
  return new Map(found.map((record) => [record.id, record]))
}

export class Dispatcher extends PollingWorker {
  private readonly random: Random
  private readonly batchSize: number
  private readonly concurrency: number
  private readonly leaseMs: number

  constructor(private readonly options: DispatcherOptions) {
    const batchSize = options.batchSize ?? 100
    super({
      batchSize,
      pollMs: options.pollMs ?? 1000,
      purgeEveryMs: options.purgeEveryMs ?? 3_600_000,
      now: () => options.clock.now(),
      onError: options.onError,
    })
    this.random = options.random ?? Math.random
    this.batchSize = batchSize
    this.concurrency = options.concurrency ?? 32
    this.leaseMs = options.leaseMs ?? 60_000
  }

  protected batch(): Promise<number> {
    return this.deliverBatch()
  }

  /** Sends every delivery due now, batch after batch; answers how many attempts were made. */
  deliverDue(): Promise<number> {
    return this.drain()
  }

  /** Claims up to one batch of due deliveries, sends them and records the results; answers how many. */
  async deliverBatch(): Promise<number> {
    const token = newId()
    const claimed = await this.claim(token)
    if (claimed.length === 0) return 0
    const results = new Array<DeliveryResult | 'held' | 'orphaned'>(claimed.length)
    let next = 0
    const worker = async () => {
      while (next < claimed.length) {
        const i = next++
        results[i] = await this.attempt(claimed[i]!)
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.concurrency, claimed.length) }, worker))
    await this.record(token, claimed, results)
    return claimed.length
  }

  private claim(token: string): Promise<Claimed[]> {
    const { storage, clock } = this.options
    return storage.transaction(async (tx) => {
      const now = clock.now()
      const due = { status: { in: DUE }, nextAttemptAt: { lte: iso(now) } }
      const candidates = await tx.find('webhookDeliveries', {
        where: due,
        orderBy: { field: 'nextAttemptAt', direction: 'ASC' },
        limit: this.batchSize,
      })
      if (candidates.length === 0) return []
      const taken = await tx.updateMany(
        'webhookDeliveries',
        { ...due, id: { in: candidates.map((d) => d.id) } },
        { nextAttemptAt: iso(now + this.leaseMs), claimToken: token },
      )
      if (taken === 0) return []
      // By id (a primary-key look-up in every storage), keeping those this claim took.
      const deliveries: WebhookDeliveryRecord[] = []
      for (const candidate of candidates) {
        const delivery = await tx.get('webhookDeliveries', candidate.id)
        if (delivery?.claimToken === token) deliveries.push(delivery)
      }
      const webhooks = await byIds(
        tx,
        'webhooks',
        deliveries.map((d) => d.webhookId),
      )
      const events = await byIds(
        tx,
        'events',
        deliveries.map((d) => d.eventId),
      )
      return deliveries.map((delivery) => ({
        delivery,
        webhook: webhooks.get(delivery.webhookId) ?? null,
        event: events.get(delivery.eventId) ?? null,
      }))
    })
  }

  private async attempt({ webhook, event }: Claimed): Promise<DeliveryResult | 'held' | 'orphaned'> {
    if (!webhook || !event) return 'orphaned'
    if (!webhook.enabled) return 'held'
    // The request's builder, and the signing library with it, load with the first delivery.
    const { buildWebhookRequest } = await import('../webhooks/delivery.js')
    const now = this.options.clock.now()
    const request = buildWebhookRequest(
      {
        id: event.id,
        type: event.type,
        createdAt: event.createdAt,
        workspaceId: event.workspaceId,
        sequence: event.sequence,
        data: JSON.parse(event.data),
      },
      webhook.url,
      liveSecrets(webhook, now),
      now,
    )
    try {
      return await this.options.send(request)
    } catch (error) {
      // Senders answer failures as results; one that throws anyway counts as a failed attempt.
      return { outcome: 'retryable', status: null, durationMs: 0, error: `the sender failed: ${String(error)}`, responseBody: '' }
    }
  }

  /** Writes every attempt of a batch in one transaction, each only while its claim still holds. */
  private record(token: string, claimed: Claimed[], results: (DeliveryResult | 'held' | 'orphaned')[]): Promise<void> {
    const { storage, clock } = this.options
    // Jitter drawn once, outside the transaction, so a transaction run again writes the same plan.
    const draws = claimed.map(() => this.random())
    return storage.transaction(async (tx) => {
      const now = clock.now()
      const stamp = iso(now)
      for (const [i, { delivery }] of claimed.entries()) {
        const result = results[i]!
        // Only while this claim still holds it: past the lease another instance may have taken it over.
        const current = await tx.get('webhookDeliveries', delivery.id)
        if (current?.claimToken !== token) continue
        if (result === 'orphaned') {
          const lastError = 'the webhook or the event no longer exists'
          await tx.update('webhookDeliveries', delivery.id, {
            status: 'dead',
            nextAttemptAt: null,
            claimToken: null,
            lastError,
            updatedAt: stamp,
          })
          continue
        }
        if (result === 'held') {
          // Kept, not due: re-enabling the webhook makes its held deliveries due again.
          const lastError = 'held: the webhook is disabled'
          await tx.update('webhookDeliveries', delivery.id, { nextAttemptAt: null, claimToken: null, lastError, updatedAt: stamp })
          continue
        }
        const plan = planAfterAttempt(delivery.attempts + 1, result.outcome, now, () => draws[i]!)
        await tx.update('webhookDeliveries', delivery.id, {
          status: plan.status,
          attempts: plan.attempts,
          nextAttemptAt: plan.nextAttemptAt,
          claimToken: null,
          lastStatusCode: result.status,
          lastError: result.error ?? null,
          lastResponseBody: result.responseBody,
          lastDurationMs: result.durationMs,
          updatedAt: stamp,
        })
        if (plan.status === 'failed') continue
        const webhook = await tx.get('webhooks', delivery.webhookId)
        if (!webhook) continue
        const health = webhookAfterDelivery(webhook, plan)
        if (
          health.enabled !== webhook.enabled ||
          health.disabledReason !== webhook.disabledReason ||
          health.consecutiveDeadDeliveries !== webhook.consecutiveDeadDeliveries
        ) {
          await tx.update('webhooks', webhook.id, { ...health, updatedAt: stamp })
        }
      }
    })
  }

  /** Deletes events and deliveries past the retention; answers how many of each. */
  purge(): Promise<{ events: number; deliveries: number }> {
    const { storage, clock, retentionDays } = this.options
    this.lastPurge = clock.now()
    return purgeExpired(storage, clock, retentionDays)
  }
}

/** Deletes the events and deliveries created more than `retentionDays` ago; answers how many of each. */
export function purgeExpired(storage: Storage, clock: Clock, retentionDays: number): Promise<{ events: number; deliveries: number }> {
  const before = { createdAt: { lt: retentionCutoff(clock.now(), retentionDays) } }
  return storage.transaction(async (tx) => ({
    deliveries: await tx.deleteMany('webhookDeliveries', before),
    events: await tx.deleteMany('events', before),
  }))
}
