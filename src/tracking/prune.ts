import { DAY_MS } from '../domain/due.js'
import type { Storage } from '../storage/types.js'
import { timeUuidFloor } from './click-ids.js'

/** Clicks deleted per prune transaction, and prune transactions per round. */
const PRUNE_BATCH = 500
const PRUNE_ROUNDS = 20

/** What one round of pruning did: how many click records it deleted, and whether expired ones remain. */
export interface PruneRound {
  deleted: number
  more: boolean
}

/**
 * Deletes click records that no campaign's attribution window still reaches at `now` (epoch ms):
 * up to PRUNE_ROUNDS batches of PRUNE_BATCH, each in a transaction of its own. Click ids are
 * time-ordered (`timeUuid`), so the expired ones are a range of the primary key, which every
 * storage walks without an index on `createdAt`. Records written before (sql.js migration 11,
 * PostgreSQL migration 9) have random ids: those sorting below the range are caught by it, and
 * those sorting above every time-ordered id by a second walk of the key; the few in between are
 * caught by the first once the cutoff passes them (within a year). Counters and report rollups
 * keep every click: only the records for attribution go.
 */
export async function pruneClicks(storage: Storage, now: number): Promise<PruneRound> {
  const campaigns = await storage.transaction((tx) => tx.select('campaigns', ['attributionWindowDays'], {}), { readOnly: true })
  const longestDays = campaigns.reduce((longest, campaign) => Math.max(longest, campaign.attributionWindowDays), 0)
  const cutoffMs = now - longestDays * DAY_MS
  const cutoff = new Date(cutoffMs).toISOString()
  const ranges = [{ lt: timeUuidFloor(cutoffMs) }, { gte: timeUuidFloor(now + DAY_MS) }]
  let deleted = 0
  for (let round = 0; round < PRUNE_ROUNDS && ranges.length; round++) {
    const count = await storage.transaction(async (tx) => {
      const expired = await tx.select('clicks', [], {
        where: { id: ranges[0]!, createdAt: { lt: cutoff } },
        orderBy: { field: 'id', direction: 'ASC' },
        limit: PRUNE_BATCH,
      })
      return expired.length ? tx.deleteMany('clicks', { id: { in: expired.map((click) => click.id) } }) : 0
    })
    deleted += count
    if (count < PRUNE_BATCH) ranges.shift()
  }
  return { deleted, more: ranges.length > 0 }
}
