import { isbot } from 'isbot'
import type { Clock } from '../clock.js'
import type { ClickRecord, LinkRecord } from '../domain/records.js'
import { notFound } from '../errors.js'
import { countEvent } from '../api/links.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import { storedSecret } from './secret.js'
import { DAY_MS } from '../domain/due.js'
import { dayOf, VisitorHasher } from './visitor.js'
import { timeUuid, timeUuidFloor } from '../uuid.js'

export type TrackEvent = 'click' | 'open'

/** Who sent an event: what the dedupe compares (hashed, never stored as is). */
export interface Visit {
  /** The client address the adapter gave; undefined for an in-process call. */
  address: string | undefined
  /** The `User-Agent` header, or '' without one. */
  userAgent: string
}

export interface TrackResult {
  /** The click record answering for this event; null for a bot (nothing recorded). */
  clickId: string | null
  link: LinkRecord
  /** Whether this event moved the counters: false for a repeat within the dedupe window and for bots. */
  counted: boolean
}

export interface TrackerOptions {
  storage: Storage
  clock: Clock
  /** Repeats of one visitor on one link within this many seconds count once; 0: every event counts. */
  dedupeSeconds: number
  /** The secret the daily salts derive from; undefined: the one kept in the storage. */
  secret: string | undefined
  /** How often (ms) click records past every attribution window are looked for and deleted. @default an hour */
  pruneEveryMs?: number
}

/** Clicks deleted per prune transaction, and prune transactions per request that finds pruning due. */
const PRUNE_BATCH = 500
const PRUNE_ROUNDS = 20
const HOUR_MS = 3_600_000

/**
 * The public click capture (redirect and beacon): bots answered and not counted, repeats of one
 * visitor deduplicated within `dedupeSeconds`, each counted event recorded as a compact click
 * record (for attribution) and counted through `countEvent`, in one transaction. Click records
 * older than the longest attribution window of any campaign are pruned, a bounded batch at a
 * time, at most every `pruneEveryMs` (an hour).
 */
export function createTracker(options: TrackerOptions) {
  const { storage, clock } = options
  const dedupeMs = options.dedupeSeconds * 1000
  const pruneEveryMs = options.pruneEveryMs ?? HOUR_MS
  let hasher: Promise<VisitorHasher> | undefined
  let nextPruneAt = -Infinity

  const hasherOf = () =>
    (hasher ??= (async () => new VisitorHasher(options.secret ?? (await storedSecret(storage, clock))))().catch((error: unknown) => {
      hasher = undefined
      throw error
    }))

  /**
   * The visitor hashes a repeat within the dedupe window may carry: today's and, when the window
   * reaches back across midnight (UTC), the earlier days' (the salt changed at midnight).
   */
  function visitorsOf(h: VisitorHasher, now: number, event: TrackEvent, link: LinkRecord, visit: Visit): string[] {
    const today = dayOf(now)
    const address = visit.address ?? ''
    const out: string[] = []
    for (let day = today; day >= dayOf(now - dedupeMs); day--) out.push(h.visitor(day, event, link.id, address, visit.userAgent))
    return out
  }

  /**
   * Deletes click records that no campaign's attribution window still reaches: up to PRUNE_ROUNDS
   * batches. Click ids are time-ordered (`timeUuid`), so the expired ones are a range of the
   * primary key, which every storage walks without an index on `createdAt`. Records written before
   * (sql.js migration 11, PostgreSQL migration 9) have random ids: those sorting below the range are
   * caught by it, and those sorting above every time-ordered id (`legacy`) by a second walk of the
   * key; the few in between are caught by the first once the cutoff passes them (within a year).
   */
  async function prune(now: number): Promise<void> {
    const campaigns = await storage.transaction((tx) => tx.find('campaigns', {}), { readOnly: true })
    const longestDays = Math.max(0, ...campaigns.map((campaign) => campaign.attributionWindowDays))
    const cutoffMs = now - longestDays * DAY_MS
    const cutoff = new Date(cutoffMs).toISOString()
    const ranges = [{ lt: timeUuidFloor(cutoffMs) }, { gte: timeUuidFloor(now + DAY_MS) }]
    for (let round = 0; round < PRUNE_ROUNDS && ranges.length; round++) {
      const deleted = await storage.transaction(async (tx) => {
        const expired = await tx.find('clicks', {
          where: { id: ranges[0]!, createdAt: { lt: cutoff } },
          orderBy: { field: 'id', direction: 'ASC' },
          limit: PRUNE_BATCH,
        })
        return expired.length ? tx.deleteMany('clicks', { id: { in: expired.map((click) => click.id) } }) : 0
      })
      if (deleted < PRUNE_BATCH) ranges.shift()
    }
    // More remain: the next event continues.
    if (ranges.length) nextPruneAt = now
  }

  async function record(tx: StorageTransaction, h: VisitorHasher, link: LinkRecord, event: TrackEvent, visit: Visit, now: number): Promise<TrackResult> {
    const visitors = visitorsOf(h, now, event, link, visit)
    if (dedupeMs > 0) {
      const [seen] = await tx.find('clicks', {
        where: { visitor: visitors.length === 1 ? visitors[0]! : { in: visitors } },
        orderBy: { field: 'createdAt', direction: 'DESC' },
        limit: 1,
      })
      if (seen && seen.linkId === link.id && Date.parse(seen.createdAt) > now - dedupeMs) return { clickId: seen.id, link, counted: false }
    }
    const click: ClickRecord = { id: timeUuid(now), linkId: link.id, event, visitor: visitors[0]!, createdAt: new Date(now).toISOString() }
    await tx.insert('clicks', click)
    return { clickId: click.id, link: await countEvent(tx, link, event, click.createdAt), counted: true }
  }

  return {
    /**
     * Records `event` on the link with `referralCode`, for `visit`. `workspaceIds` limits the links
     * found (a publishable key's workspaces); another workspace's code is 404 like an unknown one.
     * A failed prune goes to `onError` and the event is still recorded (pruning is tried again later).
     */
    async track(
      referralCode: string,
      event: TrackEvent,
      visit: Visit,
      workspaceIds: readonly string[] | null,
      onError: (error: unknown) => void,
    ): Promise<TrackResult> {
      const h = await hasherOf()
      const now = clock.now()
      if (now >= nextPruneAt) {
        nextPruneAt = now + pruneEveryMs
        await prune(now).catch(onError)
      }
      const bot = isbot(visit.userAgent)
      return storage.transaction(async (tx) => {
        const [link] = await tx.find('links', { where: { referralCode }, limit: 1 })
        if (!link || (workspaceIds && !workspaceIds.includes(link.workspaceId))) throw notFound('Link')
        if (bot) return { clickId: null, link, counted: false }
        return record(tx, h, link, event, visit, now)
      })
    },
  }
}

export type Tracker = ReturnType<typeof createTracker>
