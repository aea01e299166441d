import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { integrations } from '../domain/descriptions/integrations.js'
import { endpointPathOf, toIntegration, toProviderEvent, type Integration, type ProviderEvent } from '../domain/integration.js'
import type { IntegrationRecord } from '../domain/records.js'
import { AffiliateError, unprocessable, validationError } from '../errors.js'
import { integrationCreate, integrationId, integrationList, integrationUpdate, providerEventList } from '../schemas/integrations.js'
import { createValues, patchOf, storedField } from '../schemas/model-schemas.js'
import { parse, parseBody } from '../schemas/validate.js'
import type { StorageTransaction } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { requireWorkspace, visible, workspaceScope, type Access } from './access.js'
import { findCampaign } from './campaigns.js'
import { receiveProviderEvent } from './provider-events.js'
import { inTransaction, listPage, readOnly, requireChanges, type Deps, type Page } from './shared.js'

export type IntegrationCreateInput = Infer<typeof integrationCreate.struct>
export type IntegrationUpdateInput = Infer<typeof integrationUpdate.struct>
export type IntegrationListQuery = Infer<typeof integrationList.struct>
export type ProviderEventListQuery = Infer<typeof providerEventList.struct>

export const findIntegration = async (tx: StorageTransaction, access: Access, id: string): Promise<IntegrationRecord> =>
  visible(access, await tx.get('integrations', id.toLowerCase()), 'Integration')

/** The campaign, when given, must be in the integration's workspace. */
async function campaignOf(
  tx: StorageTransaction,
  access: Access,
  workspaceId: string,
  campaignId: string | undefined,
): Promise<string | null> {
  if (campaignId === undefined) return null
  const campaign = await findCampaign(tx, access, campaignId)
  if (campaign.workspaceId !== workspaceId) throw unprocessable("The campaign is not in the integration's workspace", 'workspace_mismatch')
  return campaign.id
}

export function integrationOperations(deps: Deps) {
  const { storage, clock } = deps
  /** Only Stripe's key is used (for promotion codes): one given for another provider would be kept and never read. */
  const apiKeyFits = (provider: string, apiKey: string | null | undefined) => {
    if (apiKey != null && provider !== 'stripe') {
      throw validationError([
        {
          type: 'field',
          msg: `apiKey is read for Stripe only (promotion codes); a ${provider} integration takes none`,
          path: 'apiKey',
          location: 'body',
        },
      ])
    }
  }
  return {
    /** Connects a payment provider; the answer names the endpoint to give it, never the signing secret. */
    async create(access: Access, body: unknown, query: unknown = {}): Promise<Integration> {
      const input = parseBody(integrationCreate, body, query)
      apiKeyFits(input.provider, input.apiKey)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      return inTransaction(storage, async (tx) => {
        const now = isoAt(clock)
        const id = newId()
        const record: IntegrationRecord = {
          ...createValues(integrations, input),
          id,
          workspaceId,
          campaignId: await campaignOf(tx, access, workspaceId, input.campaignId),
          endpointPath: endpointPathOf(id),
          createdAt: now,
          updatedAt: now,
        }
        await tx.insert('integrations', record)
        return toIntegration(record)
      })
    },

    async get(access: Access, query: unknown): Promise<Integration> {
      const { integrationId: id } = parse([integrationId, query]).query
      return inTransaction(storage, async (tx) => toIntegration(await findIntegration(tx, access, id)), readOnly)
    },

    list(access: Access, query: unknown): Promise<Page<Integration>> {
      const q = parse([integrationList, query]).query
      const where = workspaceScope(access, q.workspaceId?.toLowerCase())
      return inTransaction(
        storage,
        (tx) =>
          listPage(tx, 'integrations', { ...q, where, orderField: storedField(integrations, q.orderType ?? 'createdAt') }, toIntegration),
        readOnly,
      )
    },

    /** Changes the campaign, livemode or description, or replaces the signing secret. */
    async update(access: Access, query: unknown, body: unknown): Promise<Integration> {
      const { query: q, body: input } = parse([integrationId, query], [integrationUpdate, body])
      requireChanges(input)
      return inTransaction(storage, async (tx) => {
        const current = await findIntegration(tx, access, q.integrationId)
        apiKeyFits(current.provider, input.apiKey)
        const patch: Partial<IntegrationRecord> = { ...patchOf(integrations, input), updatedAt: isoAt(clock) }
        if (input.campaignId !== undefined) patch.campaignId = await campaignOf(tx, access, current.workspaceId, input.campaignId)
        return toIntegration((await tx.update('integrations', current.id, patch))!)
      })
    },

    /** Disconnects the provider and deletes its event log; sales and commissions it made stay. */
    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { integrationId: id } = parse([integrationId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findIntegration(tx, access, id)
        await tx.deleteMany('providerEvents', { integrationId: current.id })
        await tx.delete('integrations', current.id)
        return { id: current.id }
      })
    },

    /**
     * Receives one event at an integration's endpoint (no key: its signature is checked), and
     * records it once with its effects. Answers the HTTP status to send the provider.
     */
    async receive(integrationId: string, rawBody: string, headers: Headers): Promise<number> {
      try {
        return await receiveProviderEvent(deps, integrationId, rawBody, headers)
      } catch (error) {
        // A bad signature or a failure of ours (5xx) counts toward `integration.failing`; the count
        // failing must not change the answer the provider gets.
        const counted = error instanceof AffiliateError ? error.code === 'invalid_signature' || error.status >= 500 : true
        if (counted && deps.notices && isUuid(integrationId)) await deps.notices.integrationFailed(integrationId.toLowerCase())
        throw error
      }
    },

    /** The events the integrations received, newest first, by integration and status. */
    events(access: Access, query: unknown): Promise<Page<ProviderEvent>> {
      const q = parse([providerEventList, query]).query
      const where = {
        ...workspaceScope(access, q.workspaceId?.toLowerCase()),
        ...(q.integrationId === undefined ? {} : { integrationId: q.integrationId.toLowerCase() }),
        ...(q.status === undefined ? {} : { status: q.status }),
      }
      return inTransaction(
        storage,
        (tx) => listPage(tx, 'providerEvents', { ...q, where, orderField: 'createdAt' }, toProviderEvent),
        readOnly,
      )
    },
  }
}
