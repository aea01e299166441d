import { isbot } from 'isbot'
import type { Clock } from '../clock.js'
import type { LinkRecord } from '../domain/records.js'
import { notFound } from '../errors.js'
import { LRUCache } from 'lru-cache'
import type { Storage } from '../storage/types.js'
import { storedSecret } from './secret.js'
import { DAY_MS } from '../domain/due.js'
import { dayOf, VisitorHasher } from './visitor.js'
import { keyedTimeUuid, timeUuid, timeUuidFloor } from './click-ids.js'
import { portableRuntime, type Runtime } from '../runtime.js'
import type { ClickWriter, PendingClick } from './click-writer.js'
import { coalesced } from './coalesce.js'
import { chunked, IDS_PER_READ } from '../storage/batch.js'
import { SeenFilter } from './seen-filter.js'

export type TrackEvent = 'click' | 'open'

/** Who sent an event: what the dedupe compares (hashed, never stored as is). */
export interface Visit {
  /** The client address the adapter gave; undefined for an in-process call. */
  address: string | undefined
  /** The `User-Agent` header, or '' without one. */
  userAgent: string
  /** The hashes of the caller's runtime (see `Runtime`). @default the portable ones */
  runtime?: Runtime
  /** Whether the landing url carried an ad network's click id (`carriesAdClick`). @default false */
  paidAd?: boolean
}

export interface TrackResult {
  /** The click record answering for this event; null for a bot (nothing recorded). */
  clickId: string | null
  link: LinkRecord
  /**
   * Whether this event was handed over to be counted: false for a repeat within the dedupe window
   * and for bots. (Two instances counting the same visit at once both say true; it is written and
   * counted once.)
   */
  counted: boolean
}

export interface TrackerOptions {
  storage: Storage
  clock: Clock
  /** Repeats of one visitor on one link within this many seconds count once; 0: every event counts. */
  dedupeSeconds: number
  /** The secret the daily salts derive from; undefined: the one kept in the storage. */
  secret: string | undefined
  /** Writes the counted clicks, their counters and rollups in batches. */
  writer: ClickWriter
}

/** The latest click of a visitor on a link: its id and when it was made (epoch ms). */
interface Seen {
  id: string
  at: number
}

/** How long a link found by its code is used without reading it again (a deletion in this process forgets it at once). */
const LINK_TTL_MS = 1000
/** Codes kept (links and unknown codes); past it the cache starts over. */
const MAX_CODES = 10_000
/** Visitors whose latest click is kept in memory. */
const MAX_VISITORS = 100_000

/** Click records read per transaction when the seen-filter is filled on start, and the most read in all. */
const FILL_PAGE = 5000
const FILL_MAX = 2_000_000

/**
 * The public click capture (redirect and beacon): bots answered and not counted, repeats of one
 * visitor deduplicated within `dedupeSeconds`, each counted event handed to the click writer as a
 * compact click record (for attribution), which writes it with its counters and rollups in a
 * batch. (Pruning the records no attribution window reaches is background work: prune.ts.)
 *
 * The answer comes before the write, so the dedupe is decided from memory where it can be, and
 * stays exact however clicks are batched or spread over instances:
 * - a visitor's latest click (its id and time) is kept in memory, and read from the storage (many
 *   visitors in one read) when memory does not hold one still in the window;
 * - a counted click's id follows from what it counts after: the first click of a visitor on a
 *   link that day (`keyedTimeUuid` of the day's start and the visitor hash), or the first one after
 *   the latest click's window closed (of that time and the latest click's id). Two instances (or
 *   two requests) counting the same visit at once make the same id, answer it, and the writer
 *   stores and counts it once: the id is the dedupe key, and the primary key keeps it unique;
 * - on a storage only this service writes to (`Storage.exclusive`), a seen-filter
 *   (seen-filter.ts) holds a bit for every click of the last window, filled from the storage on
 *   the first event: a visitor whose bit is clear has no click in the window, and is answered a
 *   new time-ordered id without reading anything. Clicks handed to the writer and not yet written
 *   are found by every look-up (`writer.waiting`).
 */
export function createTracker(options: TrackerOptions) {
  const { storage, clock, writer } = options
  const dedupeMs = options.dedupeSeconds * 1000
  let hasher: Promise<VisitorHasher> | undefined
  const seen = storage.exclusive === true && dedupeMs > 0 ? new SeenFilter(dedupeMs) : null
  /** From when the seen-filter holds every click of the window (epoch ms), once filled. */
  let seenFrom: Promise<number> | undefined

  /**
   * Fills the seen-filter with the clicks of the last window, read in id order (ids are
   * time-ordered); answers from when it may be trusted: now, or after a window when there were more
   * than FILL_MAX (every click recorded since then is in it). Records with random ids (written
   * before sql.js migration 11) mostly sort outside the range read and are not in it.
   */
  async function fillSeen(filter: SeenFilter, now: number): Promise<number> {
    let from = timeUuidFloor(now - dedupeMs)
    for (let read = 0; read < FILL_MAX; ) {
      const after = from
      const page = await storage.transaction(
        (tx) =>
          tx.select('clicks', ['visitor', 'createdAt'], {
            where: { id: read === 0 ? { gte: after } : { gt: after } },
            orderBy: { field: 'id', direction: 'ASC' },
            limit: FILL_PAGE,
          }),
        { readOnly: true },
      )
      for (const click of page) filter.add(click.visitor, Date.parse(click.createdAt))
      if (page.length < FILL_PAGE) return now
      read += page.length
      from = page[page.length - 1]!.id
    }
    return now + dedupeMs
  }

  /** Whether the seen-filter says none of `visitors` clicked within the window. */
  async function surelyNew(visitors: readonly string[], now: number): Promise<boolean> {
    if (seen === null) return false
    const trusted = await (seenFrom ??= fillSeen(seen, now).catch((error: unknown) => {
      seenFrom = undefined
      throw error
    }))
    return now >= trusted && !visitors.some((visitor) => seen.mayHave(visitor, now))
  }

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
    const runtime = visit.runtime ?? portableRuntime
    for (let day = today; day >= dayOf(now - dedupeMs); day--) out.push(h.visitor(runtime, day, event, link.id, address, visit.userAgent))
    return out
  }

  const links = new Map<string, { link: LinkRecord | null; until: number }>()
  const loadLinks = coalesced(async (codes: string[]) => {
    const found = await storage.transaction((tx) => tx.find('links', { where: { referralCode: { in: codes } } }), { readOnly: true })
    return new Map(found.map((link) => [link.referralCode, link]))
  })

  /** The link with `code`, or null; from memory for up to LINK_TTL_MS. */
  async function linkOf(code: string, now: number): Promise<LinkRecord | null> {
    const cached = links.get(code)
    if (cached !== undefined && cached.until > now) return cached.link
    const link = (await loadLinks(code)) ?? null
    if (links.size >= MAX_CODES) links.clear()
    links.set(code, { link, until: now + LINK_TTL_MS })
    return link
  }

  const window = new LRUCache<string, Seen>({ max: MAX_VISITORS })
  // A key is a visitor's hashes (today's first), space-separated. Every visitor of a round is read
  // in one select per IDS_PER_READ hashes (a query per visitor cost more than the batch's write).
  const loadLatest = coalesced((keys: string[]) =>
    storage.transaction(
      async (tx) => {
        const latest = new Map<string, Seen>()
        const hashes = [...new Set(keys.flatMap((key) => key.split(' ')))]
        for (const chunk of chunked(hashes, IDS_PER_READ)) {
          for (const click of await tx.select('clicks', ['id', 'visitor', 'createdAt'], { where: { visitor: { in: chunk } } })) {
            const at = Date.parse(click.createdAt)
            const known = latest.get(click.visitor)
            if (known === undefined || at > known.at) latest.set(click.visitor, { id: click.id, at })
          }
        }
        const out = new Map<string, Seen>()
        for (const key of keys) {
          let newest: Seen | undefined
          for (const visitor of key.split(' ')) {
            const found = latest.get(visitor)
            if (found !== undefined && (newest === undefined || found.at > newest.at)) newest = found
          }
          if (newest) out.set(key, newest)
        }
        return out
      },
      { readOnly: true },
    ),
  )

  /** The latest click memory holds for any of `visitors`: remembered, or waiting in the writer. */
  function remembered(visitors: readonly string[]): Seen | undefined {
    let latest: Seen | undefined
    for (const visitor of visitors) {
      const known = window.get(visitor)
      if (known !== undefined && (latest === undefined || known.at > latest.at)) latest = known
      const waiting = writer.waiting(visitor)
      if (waiting === undefined) continue
      const at = Date.parse(waiting.createdAt)
      if (latest === undefined || at > latest.at) latest = { id: waiting.id, at }
    }
    return latest
  }

  /** Hands a counted click to be written. */
  type Hand = (item: PendingClick) => Promise<void> | void

  async function record(
    h: VisitorHasher,
    link: LinkRecord,
    event: TrackEvent,
    visit: Visit,
    now: number,
    hand: Hand,
  ): Promise<TrackResult> {
    const visitors = visitorsOf(h, now, event, link, visit)
    const visitor = visitors[0]!
    const createdAt = new Date(now).toISOString()
    let id: string
    if (dedupeMs === 0) id = timeUuid(now)
    else {
      let latest = remembered(visitors)
      let fresh = false
      if (latest === undefined || latest.at <= now - dedupeMs) {
        fresh = latest === undefined && (await surelyNew(visitors, now))
        const stored = fresh ? undefined : await loadLatest(visitors.join(' '))
        // Requests of this visitor may have been answered meanwhile.
        latest = remembered(visitors)
        if (stored !== undefined && (latest === undefined || stored.at > latest.at)) latest = stored
      }
      if (latest !== undefined && latest.at > now - dedupeMs) {
        window.set(visitor, latest)
        return { clickId: latest.id, link, counted: false }
      }
      // Nobody else counts on this storage (fresh): a new id; else the id follows from what it counts after.
      const sha256 = (visit.runtime ?? portableRuntime).sha256
      if (latest !== undefined) id = keyedTimeUuid(latest.at + dedupeMs, `after ${latest.id}`, sha256)
      else id = fresh ? timeUuid(now) : keyedTimeUuid(dayOf(now) * DAY_MS, `first ${visitor}`, sha256)
      window.set(visitor, { id, at: now })
      seen?.add(visitor, now)
    }
    // What the fraud rules read of a click: its address alone and its device (of no link), hashed under the same day's salt.
    const day = dayOf(now)
    const runtime = visit.runtime ?? portableRuntime
    const address = visit.address === undefined ? '' : h.visitor(runtime, day, 'address', '', visit.address, '')
    const device = visit.address === undefined ? '' : h.visitor(runtime, day, 'device', '', visit.address, visit.userAgent)
    await hand({ click: { id, linkId: link.id, event, visitor, address, device, paidAd: visit.paidAd === true, createdAt }, link })
    return { clickId: id, link, counted: true }
  }

  /**
   * Counts `event` on `link` for `visit`: a bot is answered and not counted, a repeat within the
   * window answers the first click; null (a keyed call naming no visitor) counts every event, each
   * its own click record (its visitor `keyed:<id>`: no later event is a repeat of it).
   */
  async function count(link: LinkRecord, event: TrackEvent, visit: Visit | null, now: number, hand: Hand): Promise<TrackResult> {
    if (visit === null) {
      const id = timeUuid(now)
      await hand({
        click: {
          id,
          linkId: link.id,
          event,
          visitor: `keyed:${id}`,
          address: '',
          device: '',
          paidAd: false,
          createdAt: new Date(now).toISOString(),
        },
        link,
      })
      return { clickId: id, link, counted: true }
    }
    const h = await hasherOf()
    if (isbot(visit.userAgent)) return { clickId: null, link, counted: false }
    return record(h, link, event, visit, now, hand)
  }

  const handToWriter: Hand = (item) => writer.add(item)

  return {
    /**
     * Records `event` on the link with `referralCode`, for `visit` (the public redirect and
     * beacon). `workspaceIds` limits the links found (a publishable key's workspaces); another
     * workspace's code is 404 like an unknown one. Resolves once the click is handed to the writer
     * (at once, unless its buffer is full).
     */
    async track(referralCode: string, event: TrackEvent, visit: Visit, workspaceIds: readonly string[] | null): Promise<TrackResult> {
      const now = clock.now()
      const link = await linkOf(referralCode, now)
      if (!link || (workspaceIds && !workspaceIds.includes(link.workspaceId))) throw notFound('Link')
      return count(link, event, visit, now, handToWriter)
    },

    /** The link with `referralCode` (as `track` finds it: from memory for up to a second), or null. */
    findLink(referralCode: string): Promise<LinkRecord | null> {
      return linkOf(referralCode, clock.now())
    },

    /**
     * Counts `events`, each on its link found by `findLink` (the keyed `POST /links/track`),
     * through the same steps as `track`: for the visitor an event names (dedupe and bots), else
     * as an event of its own. Their clicks are written together, at once; resolves once they are,
     * with each event's result and their links as that write left them, or rejects when their
     * write fails, none of them then counted.
     */
    async countKeyed(
      events: readonly { link: LinkRecord; event: TrackEvent; visit: Visit | null }[],
    ): Promise<{ results: TrackResult[]; links: ReadonlyMap<string, LinkRecord> }> {
      const items: PendingClick[] = []
      const collect: Hand = (item) => void items.push(item)
      const results: TrackResult[] = []
      for (const { link, event, visit } of events) results.push(await count(link, event, visit, clock.now(), collect))
      try {
        return { results, links: await writer.addTogether(items) }
      } catch (error) {
        // Not written: later events of these visitors are not repeats of them.
        for (const { click } of items) if (window.get(click.visitor)?.id === click.id) window.delete(click.visitor)
        throw error
      }
    },

    /**
     * The device hash of `visit` today (its address and user agent under today's click salt, as a
     * click records it), or null without an address: what the portal keeps of an affiliate's own visits.
     */
    async device(visit: Visit): Promise<string | null> {
      if (visit.address === undefined) return null
      const h = await hasherOf()
      return h.visitor(visit.runtime ?? portableRuntime, dayOf(clock.now()), 'device', '', visit.address, visit.userAgent)
    },

    /** Forgets the links held in memory (a link was deleted in this process). */
    forgetLinks(): void {
      links.clear()
    },
  }
}

export type Tracker = ReturnType<typeof createTracker>
