import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { toCampaign, type Campaign } from '../domain/campaign.js'
import { campaigns } from '../domain/descriptions/campaigns.js'
import { referralUrl, shareUrlOf } from '../domain/link.js'
import { parseMoney } from '../domain/money.js'
import type { CampaignRecord, CommissionType } from '../domain/records.js'
import { AffiliateError, unprocessable, validationError, type FieldError } from '../errors.js'
import { campaignCreate, campaignId, campaignList, campaignUpdate } from '../schemas/campaigns.js'
import { createValues, patchOf, storedField } from '../schemas/model-schemas.js'
import { parse, parseBody } from '../schemas/validate.js'
import type { StorageTransaction } from '../storage/types.js'
import { requireWorkspace, visible, workspaceScope, type Access } from './access.js'
import { emit, emitted } from '../events/outbox.js'
import { inTransaction, listPage, requireChanges, readOnly, type Deps, type Page } from './shared.js'

export type CampaignCreateInput = Infer<typeof campaignCreate.struct>
export type CampaignUpdateInput = Infer<typeof campaignUpdate.struct>
export type CampaignListQuery = Infer<typeof campaignList.struct>

const percentageError: FieldError = {
  type: 'field',
  msg: 'amount must be from 0 to 100 for a percentage campaign',
  path: 'amount',
  location: 'body',
}

/** A percentage above 100 is refused whichever of type and amount changed. */
function checkPercentage(type: CommissionType, amountMinor: number): void {
  if (type === 'percentage' && amountMinor > 100_00) throw validationError([percentageError])
}

/**
 * Runs a schema check and adds the percentage rule when the request body itself shows a percentage
 * over 100, so one answer names every failing field rather than the rule coming back on a retry.
 */
function withPercentageRule<T>(check: () => T, body: unknown): T {
  const fields: Record<string, unknown> = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const minor = parseMoney(fields.amount)
  const broken = fields.commissionType === 'percentage' && minor !== null && minor > 100_00
  let value: T
  try {
    value = check()
  } catch (error) {
    const errors = error instanceof AffiliateError ? error.errors : undefined
    if (broken && errors && !errors.some((entry) => entry.path === 'amount')) throw validationError([...errors, percentageError])
    throw error
  }
  if (broken) throw validationError([percentageError])
  return value
}

export const findCampaign = async (tx: StorageTransaction, access: Access, id: string): Promise<CampaignRecord> =>
  visible(access, await tx.get('campaigns', id.toLowerCase()), 'Campaign')

/** Makes no other campaign of the workspace the default. */
async function clearDefault(tx: StorageTransaction, workspaceId: string, keep: string, now: string): Promise<void> {
  for (const other of await tx.find('campaigns', { where: { workspaceId, isDefault: true } })) {
    if (other.id !== keep) await tx.update('campaigns', other.id, { isDefault: false, updatedAt: now })
  }
}

/**
 * Rewrites the url (and shareUrl) of every link of the campaign from its new url, each with its own parameter and
 * code (a parameter the campaign no longer allows included: existing links keep working).
 */
async function rebuildLinkUrls(tx: StorageTransaction, campaign: CampaignRecord, now: string): Promise<void> {
  for (const link of await tx.find('links', { where: { campaignId: campaign.id } })) {
    const url = referralUrl(campaign.url, link.urlParameter, link.referralCode)
    const shareUrl = shareUrlOf(campaign.url, link.referralCode)
    if (url !== link.url || shareUrl !== link.shareUrl) await tx.update('links', link.id, { url, shareUrl, updatedAt: now })
  }
}

export function campaignOperations({ storage, clock }: Deps) {
  return {
    async create(access: Access, body: unknown, query: unknown = {}): Promise<Campaign> {
      const input = withPercentageRule(() => parseBody(campaignCreate, body, query), body)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      const now = isoAt(clock)
      const record: CampaignRecord = {
        ...createValues(campaigns, input),
        id: newId(),
        workspaceId,
        payoutId: newId(),
        createdAt: now,
        updatedAt: now,
      }
      return inTransaction(storage, async (tx) => {
        if (record.isDefault) await clearDefault(tx, workspaceId, record.id, now)
        await tx.insert('campaigns', record)
        return emitted(tx, clock, 'campaign.created', workspaceId, toCampaign(record))
      })
    },

    async get(access: Access, query: unknown): Promise<Campaign> {
      const { campaignId: id } = parse([campaignId, query]).query
      return inTransaction(storage, async (tx) => toCampaign(await findCampaign(tx, access, id)), readOnly)
    },

    async update(access: Access, query: unknown, body: unknown): Promise<Campaign> {
      const { query: q, body: input } = withPercentageRule(() => parse([campaignId, query], [campaignUpdate, body]), body)
      requireChanges(input)
      return inTransaction(storage, async (tx) => {
        const current = await findCampaign(tx, access, q.campaignId)
        const patch: Partial<CampaignRecord> = { ...patchOf(campaigns, input), updatedAt: isoAt(clock) }
        checkPercentage(patch.commissionType ?? current.commissionType, patch.amountMinor ?? current.amountMinor)
        // Money already earned is in the campaign's currency: it cannot change under it.
        if (
          patch.currency !== undefined &&
          patch.currency !== current.currency &&
          (await tx.count('commissions', { where: { campaignId: current.id } })) > 0
        ) {
          throw unprocessable('The currency of a campaign cannot change once it has commissions', 'currency_locked')
        }
        if (patch.isDefault) await clearDefault(tx, current.workspaceId, current.id, patch.updatedAt!)
        const updated = (await tx.update('campaigns', current.id, patch))!
        // A link's url always reflects its campaign's url: rebuilt in this same transaction.
        if (updated.url !== current.url) await rebuildLinkUrls(tx, updated, patch.updatedAt!)
        return emitted(tx, clock, 'campaign.updated', updated.workspaceId, toCampaign(updated))
      })
    },

    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { campaignId: id } = parse([campaignId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findCampaign(tx, access, id)
        if ((await tx.count('affiliates', { where: { campaignId: current.id } })) > 0) {
          throw unprocessable('This campaign still has affiliates; delete them first', 'has_dependents')
        }
        await tx.delete('campaigns', current.id)
        // An integration limited to it is limited no more: it never names a campaign that is gone.
        for (const integration of await tx.find('integrations', { where: { workspaceId: current.workspaceId, campaignId: current.id } })) {
          await tx.update('integrations', integration.id, { campaignId: null, updatedAt: isoAt(clock) })
        }
        await emit(tx, clock, 'campaign.deleted', current.workspaceId, toCampaign(current))
        return { id: current.id }
      })
    },

    async list(access: Access, query: unknown): Promise<Page<Campaign>> {
      const q = parse([campaignList, query]).query
      const where = workspaceScope(access, q.workspaceId?.toLowerCase())
      return inTransaction(
        storage,
        (tx) => listPage(tx, 'campaigns', { ...q, where, orderField: storedField(campaigns, q.orderType ?? 'createdAt') }, toCampaign),
        readOnly,
      )
    },
  }
}
