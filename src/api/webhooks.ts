import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { webhooks } from '../domain/descriptions/webhooks.js'
import type { WebhookRecord } from '../domain/records.js'
import { toDelivery, toWebhook, type Webhook, type WebhookDelivery, type WebhookWithSecret } from '../domain/webhook.js'
import { unprocessable, validationError } from '../errors.js'
import { emit } from '../events/outbox.js'
import {
  deliveryList,
  deliveryRetry,
  webhookCreate,
  webhookId,
  webhookList,
  webhookRotate,
  webhookTest,
  webhookUpdate,
} from '../schemas/webhooks.js'
import { createValues, patchOf, storedField } from '../schemas/model-schemas.js'
import { parse, parseBody } from '../schemas/validate.js'
import type { StorageTransaction } from '../storage/types.js'
import { reenabled, retryNow } from '../webhooks/schedule.js'
import { generateWebhookSecret, rotateWebhookSecret } from '../webhooks/secrets.js'
import { requireWorkspace, visible, workspaceScope, type Access } from './access.js'
import { inTransaction, listPage, readOnly, requireChanges, type Deps, type Page } from './shared.js'

export type WebhookCreateInput = Infer<typeof webhookCreate.struct>
export type WebhookUpdateInput = Infer<typeof webhookUpdate.struct>
export type WebhookListQuery = Infer<typeof webhookList.struct>
export type WebhookRotateInput = Infer<typeof webhookRotate.struct>
export type WebhookTestInput = Infer<typeof webhookTest.struct>
export type DeliveryListQuery = Infer<typeof deliveryList.struct>
export type DeliveryRetryInput = Infer<typeof deliveryRetry.struct>

/** `disabledReason` of a webhook disabled through `PUT /webhooks`. */
export const DISABLED_BY_HAND = 'disabled through PUT /webhooks'

const withSecret = (record: WebhookRecord, secret: string): WebhookWithSecret => ({ ...toWebhook(record), secret })

export const findWebhook = async (tx: StorageTransaction, access: Access, id: string): Promise<WebhookRecord> =>
  visible(access, await tx.get('webhooks', id.toLowerCase()), 'Webhook')

export function webhookOperations({ storage, clock, webhooks: policy }: Deps) {
  /**
   * The URL when the service's rules allow it; else a 400 naming why. The address rules (and
   * ipaddr.js) load with the first webhook written, not with the package.
   */
  const allowedUrl = async (url: string): Promise<string> => {
    const { checkWebhookUrl, WebhookAddressError } = await import('../webhooks/address.js')
    try {
      return checkWebhookUrl(url, policy).href
    } catch (error) {
      if (!(error instanceof WebhookAddressError)) throw error
      throw validationError([{ type: 'field', msg: `url is refused: ${error.reason}`, path: 'url', location: 'body' }])
    }
  }

  return {
    /** Answers the webhook with its `secret`, shown in this answer only. */
    async create(access: Access, body: unknown, query: unknown = {}): Promise<WebhookWithSecret> {
      const input = parseBody(webhookCreate, body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      const url = await allowedUrl(input.url)
      const now = isoAt(clock)
      const record: WebhookRecord = {
        ...createValues(webhooks, input),
        id: newId(),
        workspaceId,
        url,
        enabled: true,
        disabledReason: null,
        consecutiveDeadDeliveries: 0,
        secret: generateWebhookSecret(),
        previousSecrets: [],
        previousSecretExpiresAt: null,
        createdAt: now,
        updatedAt: now,
      }
      return inTransaction(storage, async (tx) => {
        await tx.insert('webhooks', record)
        return withSecret(record, record.secret)
      })
    },

    async get(access: Access, query: unknown): Promise<Webhook> {
      const { webhookId: id } = parse([webhookId, query]).query
      return inTransaction(storage, async (tx) => toWebhook(await findWebhook(tx, access, id)), readOnly)
    },

    async list(access: Access, query: unknown): Promise<Page<Webhook>> {
      const q = parse([webhookList, query]).query
      const where = workspaceScope(access, q.workspaceId?.toLowerCase())
      return inTransaction(
        storage,
        (tx) => listPage(tx, 'webhooks', { ...q, where, orderField: storedField(webhooks, q.orderType ?? 'createdAt') }, toWebhook),
        readOnly,
      )
    },

    /**
     * Changes url, events, enabled or description. Enabling a disabled webhook starts its dead count
     * again and makes its held deliveries due now; disabling holds them.
     */
    async update(access: Access, query: unknown, body: unknown): Promise<Webhook> {
      const { query: q, body: input } = parse([webhookId, query], [webhookUpdate, body])
      requireChanges(input)
      const url = input.url === undefined ? undefined : await allowedUrl(input.url)
      return inTransaction(storage, async (tx) => {
        const current = await findWebhook(tx, access, q.webhookId)
        const now = isoAt(clock)
        const { enabled: _moved, ...changes } = patchOf(webhooks, input)
        const patch: Partial<WebhookRecord> = { ...changes, updatedAt: now }
        if (url !== undefined) patch.url = url
        if (input.enabled === true && !current.enabled) {
          Object.assign(patch, reenabled())
          await tx.updateMany(
            'webhookDeliveries',
            { webhookId: current.id, status: { in: ['pending', 'failed'] }, claimToken: null },
            { nextAttemptAt: now },
          )
        } else if (input.enabled === false && current.enabled) {
          Object.assign(patch, { enabled: false, disabledReason: DISABLED_BY_HAND })
        }
        return toWebhook((await tx.update('webhooks', current.id, patch))!)
      })
    },

    /** Deletes the webhook and its delivery log. */
    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { webhookId: id } = parse([webhookId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findWebhook(tx, access, id)
        await tx.deleteMany('webhookDeliveries', { webhookId: current.id })
        await tx.delete('webhooks', current.id)
        return { id: current.id }
      })
    },

    /** A new secret, shown in this answer only; the previous one keeps signing for `overlapHours` (default 24). */
    async rotateSecret(access: Access, body: unknown, query: unknown = {}): Promise<WebhookWithSecret> {
      const input = parseBody(webhookRotate, body, query)
      return inTransaction(storage, async (tx) => {
        const current = await findWebhook(tx, access, input.webhookId)
        const now = clock.now()
        const secrets = rotateWebhookSecret(current, now, input.overlapHours)
        const updated = (await tx.update('webhooks', current.id, { ...secrets, updatedAt: new Date(now).toISOString() }))!
        return withSecret(updated, secrets.secret)
      })
    },

    /** Sends a `webhook.test` event to this webhook alone; answers its delivery (pending). */
    async test(access: Access, body: unknown, query: unknown = {}): Promise<WebhookDelivery> {
      const input = parseBody(webhookTest, body, query)
      return inTransaction(storage, async (tx) => {
        const current = await findWebhook(tx, access, input.webhookId)
        if (!current.enabled)
          throw unprocessable('This webhook is disabled; enable it (PUT /webhooks) before testing it', 'webhook_disabled')
        const event = await emit(tx, clock, 'webhook.test', current.workspaceId, { webhook: toWebhook(current) }, current)
        const [delivery] = await tx.find('webhookDeliveries', { where: { eventId: event.id } })
        return toDelivery(delivery!)
      })
    },

    async deliveries(access: Access, query: unknown): Promise<Page<WebhookDelivery>> {
      const q = parse([deliveryList, query]).query
      const where = {
        ...workspaceScope(access, q.workspaceId?.toLowerCase()),
        ...(q.webhookId === undefined ? {} : { webhookId: q.webhookId.toLowerCase() }),
        ...(q.eventId === undefined ? {} : { eventId: q.eventId.toLowerCase() }),
        ...(q.status === undefined ? {} : { status: q.status }),
      }
      return inTransaction(
        storage,
        (tx) => listPage(tx, 'webhookDeliveries', { ...q, where, orderField: 'createdAt' }, toDelivery),
        readOnly,
      )
    },

    /** Makes a delivery due now (pending), whatever its state; its attempt count is kept. */
    async retryDelivery(access: Access, body: unknown, query: unknown = {}): Promise<WebhookDelivery> {
      const input = parseBody(deliveryRetry, body, query)
      return inTransaction(storage, async (tx) => {
        const current = visible(access, await tx.get('webhookDeliveries', input.deliveryId.toLowerCase()), 'Delivery')
        const webhook = await tx.get('webhooks', current.webhookId)
        if (webhook && !webhook.enabled)
          throw unprocessable('This webhook is disabled; enable it (PUT /webhooks) to retry its deliveries', 'webhook_disabled')
        const now = clock.now()
        const updated = await tx.update('webhookDeliveries', current.id, {
          ...retryNow(now),
          claimToken: null,
          updatedAt: new Date(now).toISOString(),
        })
        return toDelivery(updated!)
      })
    },
  }
}
