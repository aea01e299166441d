// The one file of the peer benchmark that touches the Storage contract. Our service and every peer
// read the same memory storage, filled with the same records; when the storage contract changes,
// this file is the one to edit.
//
// The peers go through the storage with the same calls our operations make (a read-only
// transaction, `get` / `findPage`; a write transaction counting the event as our click writer
// does: a click record, the link's and affiliate's counters and the report rollups) and shape
// records with our domain mappers, so every server sends the same `data`.
import { createAffiliateService, memoryStorage, type Storage } from '../../src/index.js'
import { models } from '../../src/storage/index.js'
import { addToRollups } from '../../src/reports/rollup.js'
import { timeUuid } from '../../src/tracking/click-ids.js'
import type { Page } from '../../src/api/shared.js'
import { toCampaign, type Campaign } from '../../src/domain/campaign.js'
import { toCommission, type Commission } from '../../src/domain/commission.js'
import { toLink, type ReferralLink } from '../../src/domain/link.js'
import type { CommissionStatus, ModelRecords } from '../../src/domain/records.js'
import type { ModelName } from '../../src/storage/types.js'
import { WORKSPACE } from './common.js'
import { library } from './library.js'

/** Every record of every model, to fill several storages with the same data. */
export type Snapshot = { [M in ModelName]: ModelRecords[M][] }

export interface Seed {
  snapshot: Snapshot
  campaignId: string
  referralCode: string
}

/** The records the three routes read: one campaign, one affiliate, one link, 25 commissions. */
export async function seed(): Promise<Seed> {
  let now = Date.UTC(2026, 0, 1)
  const storage = memoryStorage()
  const service = createAffiliateService({
    storage,
    keyStore: { resolve: async () => null },
    clock: { now: () => (now += 1000) },
    rateLimit: false,
  })
  const campaign = await service.api.campaigns.create({
    campaignName: 'Bench',
    workspaceId: WORKSPACE,
    commissionType: 'percentage',
    amount: 10,
    url: 'https://shop.example.com/',
  })
  const affiliate = await service.api.affiliates.create({ email: 'bench@example.com', campaignId: campaign.id, firstName: 'Bench' })
  const link = await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'BENCH-LINK' })
  for (let i = 0; i < 25; i++) {
    await service.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referralCode: link.referralCode,
      referredUser: `buyer-${i}@example.com`,
      amount: `${10 + i}.50`,
      remarks: `order ${1000 + i}`,
    })
  }
  const snapshot = await storage.transaction(async (tx) => {
    const all = {} as Record<ModelName, unknown[]>
    for (const model of Object.keys(models) as ModelName[]) all[model] = await tx.find(model, {})
    return all as Snapshot
  })
  return { snapshot, campaignId: campaign.id, referralCode: link.referralCode }
}

export type OrderType = 'createdAt' | 'updatedAt' | 'commissionDate' | 'amount' | 'status'

/** A commission list query after validation: what every peer's validator hands on. */
export interface CommissionListQuery {
  page?: number | undefined
  limit?: number | undefined
  contains?: string | undefined
  workspaceId?: string | undefined
  orderType?: OrderType | undefined
  orderValue?: 'ASC' | 'DESC' | undefined
  affiliateId?: string | undefined
  campaignId?: string | undefined
  status?: CommissionStatus | undefined
}

export interface Store {
  /** For our service: `createAffiliateService({ storage })`. */
  storage: Storage
  /** The campaign, or null when it does not exist or lies outside `workspaceIds`. */
  campaign(workspaceIds: readonly string[], id: string): Promise<Campaign | null>
  /** A page of commissions of `workspaceIds` (or of `query.workspaceId`, which the caller has checked). */
  commissions(workspaceIds: readonly string[], query: CommissionListQuery): Promise<Page<Commission>>
  /** Counts an open or a click on the link, its affiliate and the report rollups; null when the link is not the caller's. */
  track(workspaceIds: readonly string[], referralCode: string, event: 'open' | 'click'): Promise<ReferralLink | null>
}

/** A fresh memory storage holding the seed's records, and the peers' way into it. */
export async function openStore({ snapshot }: Seed): Promise<Store> {
  // Every server reads the same storage code: the build when the bench runs on it (see library.ts).
  const storage = (await library()).core.memoryStorage()
  await storage.transaction(async (tx) => {
    for (const model of Object.keys(snapshot) as ModelName[]) {
      for (const record of snapshot[model]) await tx.insert(model, record as never)
    }
  })
  const readOnly = { readOnly: true }
  return {
    storage,
    campaign: (workspaceIds, id) =>
      storage.transaction(async (tx) => {
        const record = await tx.get('campaigns', id.toLowerCase())
        return record && workspaceIds.includes(record.workspaceId) ? toCampaign(record) : null
      }, readOnly),
    commissions: (workspaceIds, q) =>
      storage.transaction(async (tx) => {
        const where = {
          workspaceId: q.workspaceId === undefined ? { in: workspaceIds } : q.workspaceId.toLowerCase(),
          ...(q.affiliateId === undefined ? {} : { affiliateId: q.affiliateId.toLowerCase() }),
          ...(q.campaignId === undefined ? {} : { campaignId: q.campaignId.toLowerCase() }),
          ...(q.status === undefined ? {} : { status: q.status }),
        }
        const page = q.page ?? 1
        const limit = q.limit ?? 10
        const contains = q.contains || undefined
        const order = q.orderType ?? 'createdAt'
        const { items: records, total } = await tx.findPage('commissions', {
          where,
          contains,
          orderBy: { field: order === 'amount' ? 'amountMinor' : order, direction: q.orderValue ?? 'DESC' },
          offset: (page - 1) * limit,
          limit,
        })
        return { items: records.map(toCommission), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } }
      }, readOnly),
    track: (workspaceIds, referralCode, event) =>
      storage.transaction(async (tx) => {
        const [link] = await tx.find('links', { where: { referralCode }, limit: 1 })
        if (!link || !workspaceIds.includes(link.workspaceId)) return null
        // A click record, the counters and the report rollups, as our POST /links/track writes them.
        const now = Date.now()
        const at = new Date(now).toISOString()
        const field = event === 'open' ? 'totalOpens' : 'totalClicks'
        await tx.insert('clicks', {
          id: timeUuid(now),
          linkId: link.id,
          event,
          visitor: timeUuid(now),
          address: '',
          device: '',
          paidAd: false,
          createdAt: at,
        })
        const updated = await tx.increment('links', link.id, { [field]: 1 })
        await tx.increment('affiliates', link.affiliateId, { [field]: 1 })
        await addToRollups(tx, [{ scope: link, at, deltas: { [event === 'open' ? 'opens' : 'clicks']: 1 } }])
        return toLink(updated!)
      }),
  }
}
