import type { ClickRecord, LinkRecord } from '../domain/records.js'
import { addToRollups, hourOf, type RollupEntry } from '../reports/rollup.js'
import { chunked, IDS_PER_READ } from '../storage/batch.js'
import { UniqueViolationError, type Storage, type StorageTransaction } from '../storage/types.js'

// Clicks at traffic scale: the redirect and the beacon answer first and hand each counted click
// here. Clicks are written in batches, each in one transaction: the click records, the link and
// affiliate counters (summed per row) and the report rollups (summed per row by addToRollups).
//
// - A batch is written `flushMs` after its first click, or at once when it holds `batchSize`, or
//   when someone waits for it (`flush`, `written`); while one is being written the next one fills.
//   Under load a batch is not written the moment the one before it is done: a commit costs about as
//   much as a few hundred clicks (BENCHMARKS.md, row 8d), so it waits its `flushMs` or until full.
// - A click whose id is already stored (a deduplicated click has an id derived from its dedupe key,
//   see tracker.ts: another instance, or this one before a restart, wrote it) or appears twice in
//   the handed-over clicks is written once and counted once. A click of a link deleted meanwhile is
//   dropped.
// - A failed write keeps the batch, reports the error and is tried again (after flushMs, doubling,
//   at most 5 s); a unique violation (another instance wrote one of its ids between the read and
//   the insert) is tried again at once and not reported.
// - At most `maxPending` clicks wait: past that, `add` waits until a batch is written.
// - Clicks whose caller waits for its answer (the keyed `POST /links/track`, `addTogether`) go in one
//   batch, written at once; a failed write takes them out of it (none of them is counted) and
//   rejects their caller, which answers the failure: the caller may send them again. The rest of
//   the batch is kept and tried again as above.

/** One counted click and the link it counts on (as the tracker found it). */
export interface PendingClick {
  click: ClickRecord
  link: LinkRecord
}

export interface ClickWriterOptions {
  storage: Storage
  /** How long a click may wait to be written, in ms. @default 250 */
  flushMs: number
  /** The most clicks written in one transaction. @default 1000 */
  batchSize?: number
  /** The most clicks waiting to be written; past it `add` waits. @default 10 batches */
  maxPending?: number
  /** A failed write (it is tried again). */
  onError: (error: unknown) => void
}

const MAX_RETRY_MS = 5000

/** Clicks added together, whose caller waits to hear they are written (or not). */
interface Unit {
  items: readonly PendingClick[]
  /** Resolved with the links of the batch's units as its write left them. */
  resolve: (links: ReadonlyMap<string, LinkRecord>) => void
  reject: (error: unknown) => void
}

interface Batch {
  items: PendingClick[]
  /** The units in it: taken out of it when its write fails. */
  units: Unit[]
  /** When its first click came (performance.now()). */
  since: number
  /** Someone waits for it (`flush`, `written`): it is written as soon as the ones before it are. */
  urgent: boolean
  written: Promise<void>
  resolve: () => void
}

function newBatch(): Batch {
  let resolve!: () => void
  const written = new Promise<void>((r) => (resolve = r))
  return { items: [], units: [], since: performance.now(), urgent: false, written, resolve }
}

export function createClickWriter(options: ClickWriterOptions) {
  const { storage, flushMs, onError } = options
  const batchSize = options.batchSize ?? 1000
  const maxPending = options.maxPending ?? 10 * batchSize
  /** Oldest first; the first is being written while `running`. */
  const batches: Batch[] = []
  /** The batch each waiting click id is in (the first one, when an id is handed over twice). */
  const batchOf = new Map<string, Batch>()
  /** Each visitor's latest click still waiting: a look-up of the storage does not see it yet. */
  const waitingOf = new Map<string, ClickRecord>()
  let pending = 0
  let running: Promise<void> | null = null
  let timer: ReturnType<typeof setTimeout> | undefined
  let roomWaiters: (() => void)[] = []

  /** Whether `batch` is to be written now: waited for, full, or old enough. */
  const due = (batch: Batch): boolean => batch.urgent || batch.items.length >= batchSize || performance.now() - batch.since >= flushMs

  /** Writes `batch` and every one before it now, and resolves once they are written. */
  function hurry(batch: Batch): Promise<void> {
    for (const each of batches) {
      each.urgent = true
      if (each === batch) break
    }
    void start()
    return batch.written
  }

  /** Writes the batches that are due; `force`: the oldest one in any case (its time came). */
  function start(force = false): Promise<void> {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    return (running ??= drain(force).finally(() => {
      running = null
      schedule()
    }))
  }

  /** Starts writing when the oldest batch is due, else sets the timer for when it will be; nothing while writing. */
  function schedule(): void {
    const oldest = batches[0]
    if (running !== null || oldest === undefined) return
    if (due(oldest)) void start()
    else timer ??= setTimeout(() => void start(true), Math.max(0, oldest.since + flushMs - performance.now()))
  }

  /** Forgets that `items` of `batch` wait: written, or taken out of it. */
  function forget(batch: Batch, items: Iterable<PendingClick>): void {
    for (const { click } of items) {
      if (batchOf.get(click.id) === batch) batchOf.delete(click.id)
      if (waitingOf.get(click.visitor) === click) waitingOf.delete(click.visitor)
    }
  }

  /** Puts `item` in `batch` as waiting. */
  function place(batch: Batch, item: PendingClick): void {
    batch.items.push(item)
    pending++
    if (!batchOf.has(item.click.id)) batchOf.set(item.click.id, batch)
    const latest = waitingOf.get(item.click.visitor)
    if (latest === undefined || latest.createdAt <= item.click.createdAt) waitingOf.set(item.click.visitor, item.click)
  }

  /** Writes batches, oldest first, while they are due (the first one regardless when `force`). */
  async function drain(force: boolean): Promise<void> {
    while (batches.length > 0 && (force || due(batches[0]!))) {
      force = false
      const batch = batches[0]!
      let links: ReadonlyMap<string, LinkRecord> = new Map()
      for (let attempt = 0; ; attempt++) {
        try {
          links = await storage.transaction(async (tx) => {
            await write(tx, batch.items)
            // What the units' callers answer: their links as this write left them, read here once for all.
            return batch.units.length > 0 ? readLinks(tx, batch.units) : new Map()
          })
          break
        } catch (error) {
          if (error instanceof UniqueViolationError && attempt < 3) continue
          // The clicks whose caller waits leave the batch, and their callers answer the failure.
          if (batch.units.length > 0) {
            const failed = batch.units
            batch.units = []
            const leaving = new Set(failed.flatMap((unit) => unit.items))
            batch.items = batch.items.filter((item) => !leaving.has(item))
            pending -= leaving.size
            forget(batch, leaving)
            for (const unit of failed) unit.reject(error)
            if (batch.items.length === 0) break
          }
          onError(error)
          await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_RETRY_MS, Math.max(10, flushMs) * 2 ** Math.min(attempt, 10))))
        }
      }
      batches.shift()
      pending -= batch.items.length
      forget(batch, batch.items)
      batch.resolve()
      for (const unit of batch.units) unit.resolve(links)
      const waiters = roomWaiters
      roomWaiters = []
      for (const wake of waiters) wake()
    }
  }

  return {
    /**
     * Hands a click over to be written; resolves at once, or once there is room when `maxPending`
     * clicks already wait.
     */
    async add(item: PendingClick): Promise<void> {
      while (pending >= maxPending) await new Promise<void>((resolve) => roomWaiters.push(resolve))
      let batch = batches[batches.length - 1]
      // The batch being written takes nothing more.
      if (batch === undefined || batch.items.length >= batchSize || (running !== null && batch === batches[0]))
        batches.push((batch = newBatch()))
      place(batch, item)
      schedule()
    },

    /**
     * Hands `items` over to be written together, in one batch, now; resolves once they are
     * written, with their links as the write left them (a link deleted meanwhile is not there), or
     * rejects with the failure when their write fails, none of them then counted.
     */
    async addTogether(items: readonly PendingClick[]): Promise<ReadonlyMap<string, LinkRecord>> {
      if (items.length === 0) return new Map()
      while (pending >= maxPending) await new Promise<void>((resolve) => roomWaiters.push(resolve))
      let batch = batches[batches.length - 1]
      if (batch === undefined || batch.items.length + items.length > batchSize || (running !== null && batch === batches[0]))
        batches.push((batch = newBatch()))
      for (const item of items) place(batch, item)
      const done = new Promise<ReadonlyMap<string, LinkRecord>>((resolve, reject) => batch.units.push({ items, resolve, reject }))
      void hurry(batch)
      return done
    },

    /** The latest click of `visitor` handed over and not yet written, if any. */
    waiting(visitor: string): ClickRecord | undefined {
      return waitingOf.get(visitor)
    },

    /** Resolves once the click `id` is written, at once when it is not waiting (written, or never handed over). */
    async written(id: string): Promise<void> {
      const batch = batchOf.get(id)
      if (batch !== undefined) await hurry(batch)
    },

    /** Writes every click handed over so far, and resolves once they are. */
    async flush(): Promise<void> {
      while (batches.length > 0) await hurry(batches[batches.length - 1]!)
    },

    /** Clicks handed over and not yet written. */
    get pending(): number {
      return pending
    },
  }
}

export type ClickWriter = ReturnType<typeof createClickWriter>

/** The links of `units`' clicks, as stored now. */
async function readLinks(tx: StorageTransaction, units: readonly Unit[]): Promise<Map<string, LinkRecord>> {
  const ids = [...new Set(units.flatMap((unit) => unit.items.map(({ link }) => link.id)))]
  const links = new Map<string, LinkRecord>()
  for (const chunk of chunked(ids, IDS_PER_READ))
    for (const link of await tx.find('links', { where: { id: { in: chunk } } })) links.set(link.id, link)
  return links
}

/** Adds `delta` to `field` of the row `id` in `sums`. */
function sum(sums: Map<string, Record<string, number>>, id: string, field: string): void {
  let row = sums.get(id)
  if (row === undefined) sums.set(id, (row = {}))
  row[field] = (row[field] ?? 0) + 1
}

/** One batch in one transaction: the new clicks, their counters summed per row, their rollups. */
async function write(tx: StorageTransaction, items: readonly PendingClick[]): Promise<void> {
  const ids = [...new Set(items.map(({ click }) => click.id))]
  const stored = new Set<string>()
  for (const chunk of chunked(ids, IDS_PER_READ))
    for (const { id } of await tx.select('clicks', [], { where: { id: { in: chunk } } })) stored.add(id)
  const linkIds = [...new Set(items.map(({ link }) => link.id))]
  const live = new Set<string>()
  for (const chunk of chunked(linkIds, IDS_PER_READ))
    for (const { id } of await tx.select('links', [], { where: { id: { in: chunk } } })) live.add(id)
  const fresh: ClickRecord[] = []
  const links = new Map<string, Record<string, number>>()
  const affiliates = new Map<string, Record<string, number>>()
  // One rollup entry per link, event and hour (a batch is mostly one hour): summed here, they are
  // not worked out click by click.
  const entries = new Map<string, RollupEntry & { deltas: Record<string, number> }>()
  const hours = new Map<string, string>()
  for (const { click, link } of items) {
    if (stored.has(click.id) || !live.has(link.id)) continue
    stored.add(click.id)
    fresh.push(click)
    const field = click.event === 'open' ? 'totalOpens' : 'totalClicks'
    sum(links, link.id, field)
    sum(affiliates, link.affiliateId, field)
    // `YYYY-MM-DDTHH` names the hour of a `toISOString()` instant (a click's createdAt).
    const prefix = click.createdAt.length === 24 ? click.createdAt.slice(0, 13) : click.createdAt
    let hour = hours.get(prefix)
    if (hour === undefined) hours.set(prefix, (hour = hourOf(click.createdAt)))
    const counter = click.event === 'open' ? 'opens' : 'clicks'
    const key = `${link.id} ${counter} ${hour}`
    const entry = entries.get(key)
    if (entry === undefined) entries.set(key, { scope: link, at: hour, deltas: { [counter]: 1 } })
    else entry.deltas[counter]! += 1
  }
  if (fresh.length === 0) return
  await tx.insertMany('clicks', fresh)
  await tx.incrementEach(
    'links',
    [...links].map(([id, deltas]) => ({ id, deltas })),
  )
  await tx.incrementEach(
    'affiliates',
    [...affiliates].map(([id, deltas]) => ({ id, deltas })),
  )
  await addToRollups(tx, [...entries.values()])
}
