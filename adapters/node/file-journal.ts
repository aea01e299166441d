// The file behind `sqlJsStorage({ persist: fileJournal(path) })`: Node file-system code, so it
// lives with the Node adapter, outside the web-standard core. Works on Node, Bun and Deno.
//
// On disk, for a database `data/affiliate.sqlite`:
//   affiliate.sqlite            the last snapshot: a plain SQLite file (the sqlite3 CLI opens it)
//   affiliate.sqlite.journal-N  transactions committed after it, one framed record each
//   affiliate.sqlite.lock       the pid of the process that has it open
//   affiliate.sqlite.lock.PID   that lock being made (written, synced, then linked into place)
//   affiliate.sqlite.tmp        a snapshot being written (never read; removed on open)
// A record is [u32 length][u32 CRC-32 of the payload][payload], little-endian. Appends are
// fsynced before they resolve; a crash can only tear the end of the newest segment, which the
// next open drops. Snapshots are written beside the file, fsynced, renamed over it and the
// directory fsynced, so the file itself is always a whole database.
import { writeSync } from 'node:fs'
import { link, mkdir, open, readdir, readFile, rename, rm, unlink, stat, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import * as zlib from 'node:zlib'
import type { SqlJsJournal, SqlJsPersistence } from '../../src/storage/sqljs/persistence.js'
import { FileBytes } from './file-bytes.js'

/** CRC-32 of a record's payload (zlib's, from Node 20.15): catches a torn or half-written record. */
const crc32 = (bytes: Uint8Array): number => zlib.crc32(bytes)

const SQLITE_HEADER = 'SQLite format 3\u0000'
const HEADER_BYTES = 8

export function frame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES + payload.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, payload.length, true)
  view.setUint32(4, crc32(payload), true)
  out.set(payload, HEADER_BYTES)
  return out
}

/** The whole records at the start of `bytes`, and where the first bad or partial one begins. */
export function parseRecords(bytes: Uint8Array): { records: Uint8Array[]; validBytes: number } {
  const records: Uint8Array[] = []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let offset = 0
  while (offset + HEADER_BYTES <= bytes.length) {
    const length = view.getUint32(offset, true)
    const end = offset + HEADER_BYTES + length
    // A zero length is what a file extended but never written shows after a crash.
    if (length === 0 || end > bytes.length) break
    const payload = bytes.subarray(offset + HEADER_BYTES, end)
    if (crc32(payload) !== view.getUint32(offset + 4, true)) break
    records.push(payload)
    offset = end
  }
  return { records, validBytes: offset }
}

const isWindows = process.platform === 'win32'

/** Makes a rename or a new file in `dir` durable. Windows cannot open a directory; NTFS journals it. */
async function syncDirectory(dir: string): Promise<void> {
  if (isWindows) return
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

const errorCode = (error: unknown): string | undefined => (error as { code?: string } | null)?.code

/** Files this process has open: a lock holding our own pid is ours only if listed here. */
const openHere = new Set<string>()

/**
 * Whether process `pid` is alive. A process that has exited but not yet been reaped by its parent
 * (a zombie: a server just killed with `kill -9` under a supervisor that has not waited for it)
 * still answers a signal; on Linux its state in /proc says it holds nothing any more.
 */
async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return errorCode(error) === 'EPERM'
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null)
  // "pid (name) S ...": the state follows the last ')', as the name may hold one.
  const state = stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

/** How long `fileJournal` waits for a live process holding the lock to let go, unless told otherwise. */
export const DEFAULT_LOCK_WAIT_MS = 5_000

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Takes `<file>.lock`, holding our pid. The lock appears whole or not at all: the pid is written to
 * `<file>.lock.<pid>`, synced, and hard-linked to `<file>.lock` (which fails if one exists), so a
 * process killed at any moment never leaves an empty lock behind. A lock whose process is gone is
 * stale (a crash or `kill -9` leaves one) and is taken over. A live holder is waited for, up to
 * `waitMs`, re-checked with a growing pause: a server that is exiting (stopping after SIGTERM, or
 * being torn down after `kill -9`) lets go meanwhile, as when a supervisor restarts it at once. A
 * pid that was reused by an unrelated process keeps the lock held: the error says to delete the
 * lock file then.
 */
async function lock(file: string, waitMs: number): Promise<string> {
  const lockPath = `${file}.lock`
  if (openHere.has(file)) throw new Error(`${file} is already open in this process: close the other storage first`)
  await removeDeadLockDrafts(file)
  const draft = `${lockPath}.${process.pid}`
  await writeSynced(draft, `${process.pid}\n`, 'w')
  const deadline = performance.now() + waitMs
  let wait = 25
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await linkDraft(draft, lockPath)) {
        openHere.add(file)
        return lockPath
      }
      const text = await readFile(lockPath, 'utf8').catch(() => null)
      if (text === null) continue
      const pid = Number.parseInt(text, 10)
      if (Number.isInteger(pid) && pid > 0) {
        // Our own pid in a lock we do not hold: a previous process that had the same pid (a
        // container's pid 1, say) crashed. Any other live pid holds the file.
        if (pid !== process.pid && (await isRunning(pid))) {
          if (performance.now() < deadline) {
            await pause(Math.min(wait, Math.max(0, deadline - performance.now())))
            wait = Math.min(wait * 2, 500)
            attempt--
            continue
          }
          throw new Error(
            `${file} is in use by process ${pid} (lock file ${lockPath}). Stop that process first; ` +
              `if it is not an affiliate-service, delete the lock file.`,
          )
        }
      } else {
        // Empty or unreadable: written by a version that created the lock before filling it, or
        // by a file system without hard links, and that process is between the two steps, unless
        // the file has been like this for a while (it crashed right there).
        const age =
          Date.now() -
          (await stat(lockPath).then(
            (s) => s.mtimeMs,
            () => 0,
          ))
        if (age < 5_000) throw new Error(`${file} is being opened by another process (lock file ${lockPath})`)
      }
      await unlink(lockPath).catch((error: unknown) => {
        if (errorCode(error) !== 'ENOENT') throw error
      })
    }
  } finally {
    await unlink(draft).catch(() => undefined)
  }
  throw new Error(`Could not take the lock ${lockPath}`)
}

/** Puts the written draft in place as the lock; false when a lock is there already. */
async function linkDraft(draft: string, lockPath: string): Promise<boolean> {
  try {
    await link(draft, lockPath)
    return true
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errorCode(error) ?? '')) throw error
  }
  // No hard links on this file system: create exclusively, then fill (an empty lock is then
  // possible for a moment, which `lock` reads as "being opened").
  try {
    await writeSynced(lockPath, `${process.pid}\n`, 'wx')
    return true
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    throw error
  }
}

async function writeSynced(path: string, text: string, flags: 'w' | 'wx'): Promise<void> {
  const handle = await open(path, flags)
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Drafts `<file>.lock.<pid>` left by processes killed while taking the lock. */
async function removeDeadLockDrafts(file: string): Promise<void> {
  const prefix = `${basename(file)}.lock.`
  const names = await readdir(dirname(file)).catch(() => [] as string[])
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length))
    if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || !(await isRunning(pid)))) {
      await unlink(join(dirname(file), name)).catch(() => undefined)
    }
  }
}

interface Pending {
  segment: Segment
  bytes: Uint8Array
  resolve: () => void
  reject: (error: unknown) => void
}

class Segment {
  handle: FileHandle | null = null
  /** Bytes in the file, plus bytes queued for it. */
  bytes = 0

  constructor(
    readonly number: number,
    readonly path: string,
    /** Whether the file exists on disk already (else it is created, and the directory fsynced, on first write). */
    public exists: boolean,
  ) {}
}

class NodeFileJournal implements SqlJsJournal {
  journalBytes = 0
  snapshotBytes: number
  private queue: Pending[] = []
  private flushing: Promise<void> | null = null
  private broken: unknown = null
  private closed = false
  /** Settles (either way) once the latest append has; appends settle in order. */
  private lastAppend: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly file: string,
    private readonly lockPath: string,
    readonly snapshot: Uint8Array | null,
    readonly records: readonly Uint8Array[],
    private segments: Segment[],
  ) {
    this.snapshotBytes = snapshot?.length ?? 0
    this.journalBytes = segments.reduce((sum, segment) => sum + segment.bytes, 0)
  }

  private get current(): Segment {
    return this.segments[this.segments.length - 1]!
  }

  private newSegment(): Segment {
    const number = (this.segments.at(-1)?.number ?? 0) + 1
    const segment = new Segment(number, `${this.file}.journal-${number}`, false)
    this.segments.push(segment)
    return segment
  }

  append(record: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The journal is closed'))
    if (this.broken) return Promise.reject(this.broken)
    const bytes = frame(record)
    const segment = this.current
    segment.bytes += bytes.length
    this.journalBytes += bytes.length
    const appended = new Promise<void>((resolve, reject) => {
      this.queue.push({ segment, bytes, resolve, reject })
      this.flushing ??= this.flush()
    })
    this.lastAppend = appended.catch(() => undefined)
    return appended
  }

  /**
   * Writes queued records in order, one write and one fsync per segment for all that queued up
   * while the previous fsync ran (group commit): a busy server pays one fsync for many commits.
   */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const segment = this.queue[0]!.segment
      let count = 0
      while (count < this.queue.length && this.queue[count]!.segment === segment) count++
      const batch = this.queue.splice(0, count)
      await this.writeBatch(segment, batch)
    }
    this.flushing = null
  }

  private async writeBatch(segment: Segment, batch: Pending[]): Promise<void> {
    try {
      if (this.broken) throw this.broken
      if (!segment.handle) {
        segment.handle = await open(segment.path, 'a')
        if (!segment.exists) {
          // The new file's directory entry must be durable before a record in it is acknowledged.
          await segment.handle.sync()
          await syncDirectory(dirname(this.file))
          segment.exists = true
        }
      }
      const total = batch.reduce((sum, item) => sum + item.bytes.length, 0)
      const buffer = new Uint8Array(total)
      let offset = 0
      for (const item of batch) {
        buffer.set(item.bytes, offset)
        offset += item.bytes.length
      }
      // Written synchronously: a few kilobytes into the page cache cost microseconds, less than a
      // round trip through the thread pool, and the fsync (the slow part, and asynchronous) starts
      // at once. Measured with 16 writers: about 20% more writes a second, and a lower p50.
      let written = 0
      while (written < total) written += writeSync(segment.handle.fd, buffer, written, total - written)
      await segment.handle.datasync()
      for (const item of batch) item.resolve()
    } catch (error) {
      // The disk and memory no longer agree about what is committed: refuse every append and
      // checkpoint after. Never retry: after a failed fsync Linux may mark the unwritten pages
      // clean, so a second fsync can succeed without the data being on disk.
      this.broken ??= error
      for (const item of batch) item.reject(error)
      for (const item of this.queue.splice(0)) item.reject(error)
    }
  }

  async checkpoint(snapshot: Uint8Array): Promise<void> {
    if (this.closed) throw new Error('The journal is closed')
    // Memory may hold commits whose append failed (and later ones): a snapshot of it must not land.
    if (this.broken) throw this.broken
    // Synchronously, before any later append: those go to the new segment and survive the swap.
    const folded = this.segments.slice()
    const foldedWritten = this.lastAppend
    this.newSegment()
    this.journalBytes = 0
    try {
      const tmp = `${this.file}.tmp`
      const handle = await open(tmp, 'w')
      try {
        let written = 0
        while (written < snapshot.length) {
          written += (await handle.write(snapshot, written, snapshot.length - written)).bytesWritten
        }
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(tmp, this.file)
      await syncDirectory(dirname(this.file))
    } catch (error) {
      // The old snapshot and every segment are intact: put the folded bytes back in the count.
      this.journalBytes += folded.reduce((sum, segment) => sum + segment.bytes, 0)
      throw error
    }
    this.snapshotBytes = snapshot.length
    // The folded segments' records are all in the snapshot now. Let queued writes to them finish
    // (their transactions resolve then), then remove them; a crash before the unlink only leaves
    // records the next open skips by sequence number.
    await foldedWritten
    for (const segment of folded) {
      await segment.handle?.close()
      segment.handle = null
      if (segment.exists) await rm(segment.path, { force: true })
    }
    this.segments = this.segments.filter((segment) => !folded.includes(segment))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    while (this.flushing) await this.flushing
    for (const segment of this.segments) await segment.handle?.close()
    await unlink(this.lockPath).catch(() => undefined)
    openHere.delete(this.file)
  }
}

/**
 * The bytes read, as the Buffer they came in (a Uint8Array): not `new Uint8Array(buffer)`, which
 * copies element by element (about 11 ms per MB here), and not a plain Uint8Array view, which
 * sql.js takes in about 20 ms per MB where it takes a Buffer in well under 1 ms (bench/clicks.ts:
 * seconds of a 300 MB file's reopen).
 */
const viewOf = (buffer: Buffer): Uint8Array => buffer

async function readSnapshot(file: string): Promise<Uint8Array | null> {
  let bytes: Uint8Array
  try {
    bytes = viewOf(await readFile(file))
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null
    throw error
  }
  const header = new TextDecoder().decode(bytes.subarray(0, 16))
  if (header !== SQLITE_HEADER) throw new Error(`${file} is not a SQLite database`)
  return bytes
}

/** Reads the segments in order; drops a torn tail of the newest one that holds data. */
async function readSegments(file: string): Promise<{ segments: Segment[]; records: Uint8Array[] }> {
  const dir = dirname(file)
  const prefix = `${basename(file)}.journal-`
  const numbers = (await readdir(dir))
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map((name) => Number(name.slice(prefix.length)))
    .sort((a, b) => a - b)
  const segments: Segment[] = []
  const records: Uint8Array[] = []
  let torn: { segment: Segment; validBytes: number; size: number } | null = null
  for (const number of numbers) {
    const segment = new Segment(number, join(dir, `${prefix}${number}`), true)
    const bytes = viewOf(await readFile(segment.path))
    if (torn && bytes.length > 0) {
      throw new Error(`${torn.segment.path} is damaged at byte ${torn.validBytes} and later segments hold data: not a crash tear`)
    }
    const parsed = parseRecords(bytes)
    records.push(...parsed.records)
    segment.bytes = parsed.validBytes
    if (parsed.validBytes < bytes.length) torn = { segment, validBytes: parsed.validBytes, size: bytes.length }
    segments.push(segment)
  }
  if (torn) {
    // A write the crash interrupted: it was never acknowledged. Cut it so appends follow whole records.
    const handle = await open(torn.segment.path, 'r+')
    try {
      await handle.truncate(torn.validBytes)
      await handle.sync()
    } finally {
      await handle.close()
    }
  }
  if (segments.length === 0) segments.push(new Segment(1, join(dir, `${prefix}1`), false))
  return { segments, records }
}

/** Opens (creating the directory when needed) and locks a database file. See the top of this file. */
async function openFileJournal(path: string, waitMs: number): Promise<SqlJsJournal> {
  const file = resolve(path)
  // A directory made here must itself survive a power cut, or the acknowledged writes inside it go too.
  const created = await mkdir(dirname(file), { recursive: true })
  if (created !== undefined) await syncDirectory(dirname(created))
  const lockPath = await lock(file, waitMs)
  try {
    await rm(`${file}.tmp`, { force: true })
    const snapshot = await readSnapshot(file)
    const { segments, records } = await readSegments(file)
    return new NodeFileJournal(file, lockPath, snapshot, records, segments)
  } catch (error) {
    await unlink(lockPath).catch(() => undefined)
    openHere.delete(file)
    throw error
  }
}

export interface FileJournalOptions {
  /**
   * How long opening waits for another live process that holds the file to let go (a server that
   * is stopping, or being torn down after `kill -9`, while its successor starts), before failing
   * with `in use by process <pid>`. A lock whose process is gone is taken over at once.
   * @default 5000
   */
  lockWaitMs?: number
  /**
   * Open a still copy of the database as it stands, without the lock, while a server may be
   * serving it: the file and every journal record durable when it is read (a consistent
   * snapshot: a commit whose record is still being written is left out, as it was not yet
   * acknowledged). The storage then answers reads and refuses writes, and nothing on disk is
   * touched. `affiliate-service export` reads the file this way.
   * @default false
   */
  readOnly?: boolean
}

/**
 * Keeps a sql.js database in a file (Node, Bun and Deno). Every acknowledged write is on disk
 * before its transaction resolves: it is appended to a journal beside the file
 * (`<file>.journal-<n>`) and fsynced, and the journal is folded into the file in the background
 * (see `checkpointBytes`). A `<file>.lock` keeps a second process out; opening waits up to
 * `lockWaitMs` for a live holder to let go (see `FileJournalOptions`). Nothing is opened until the
 * storage opens.
 *
 * @example
 * import { sqlJsStorage } from 'affiliate-service'
 * import { fileJournal } from 'affiliate-service/node'
 *
 * const storage = sqlJsStorage({ persist: fileJournal('./data/affiliate.sqlite') })
 */
export function fileJournal(path: string, options: FileJournalOptions = {}): SqlJsPersistence {
  if (typeof path !== 'string' || path === '') throw new TypeError('fileJournal takes the path of the database file')
  const waitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS
  if (!Number.isFinite(waitMs) || waitMs < 0)
    throw new RangeError(`fileJournal: lockWaitMs must be a number of milliseconds, not ${waitMs}`)
  // Looked up here rather than imported by name, so that an older Node fails only this call, plainly.
  if (typeof zlib.crc32 !== 'function') throw new Error('fileJournal needs zlib.crc32: Node.js 20.15 or later')
  return { open: () => (options.readOnly ? openSnapshot(path) : openFileJournal(path, waitMs)) }
}

/** The pid of the live process holding the database file's lock (a server serving it), or null. */
export async function lockHolder(path: string): Promise<number | null> {
  const text = await readFile(`${resolve(path)}.lock`, 'utf8').catch(() => null)
  const pid = text === null ? Number.NaN : Number.parseInt(text, 10)
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && (await isRunning(pid)) ? pid : null
}

/** A still copy of a database that another process may be writing: see `FileJournalOptions.readOnly`. */
class SnapshotJournal implements SqlJsJournal {
  readonly readOnly = true
  readonly journalBytes = 0
  readonly snapshotBytes: number

  constructor(
    readonly snapshot: FileBytes,
    readonly records: readonly Uint8Array[],
  ) {
    this.snapshotBytes = snapshot.size
  }

  append(): Promise<void> {
    return Promise.reject(new Error('This database was opened read-only (a snapshot of the file): it takes no writes'))
  }

  async checkpoint(): Promise<void> {
    throw new Error('This database was opened read-only (a snapshot of the file): it is never written')
  }

  async close(): Promise<void> {
    this.snapshot.close()
  }
}

/**
 * The file, open: a fold renames a new file over it, which leaves this one whole for as long as it
 * is open. Read by the page, as sql.js asks (see FileBytes).
 */
function openSnapshotFile(file: string): FileBytes {
  let bytes: FileBytes
  try {
    bytes = FileBytes.open(file)
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw new Error(`${file} does not exist: there is no database to read`)
    throw error
  }
  if (new TextDecoder().decode(bytes.subarray(0, 16)) !== SQLITE_HEADER) {
    bytes.close()
    throw new Error(`${file} is not a SQLite database`)
  }
  return bytes
}

/** Reads before giving up on a journal whose segments keep being caught mid-write. */
const SNAPSHOT_ATTEMPTS = 20

/**
 * Reads the journal, then the file, without the lock. The order makes what is read consistent
 * while the holder writes and folds: the file read is the one folded last or a later one, and the
 * segments read were written after an earlier or the same fold, so their records go on from the
 * file's, or are older and skipped (a segment removed before it is read was folded into that file
 * first). A partial record at the end of the newest segment holding data is a commit not yet
 * acknowledged, and is left out. Only a partial record with data after it (a segment caught
 * mid-write before the next one was read) leaves a gap: then the whole read is done again.
 */
async function openSnapshot(path: string): Promise<SqlJsJournal> {
  const file = resolve(path)
  const prefix = `${basename(file)}.journal-`
  for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
    const numbers = (await readdir(dirname(file)).catch(() => [] as string[]))
      .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
      .map((name) => Number(name.slice(prefix.length)))
      .sort((a, b) => a - b)
    const records: Uint8Array[] = []
    let torn = false
    let gap = false
    for (const number of numbers) {
      const bytes = await readFile(join(dirname(file), `${prefix}${number}`)).catch((error: unknown) => {
        if (errorCode(error) === 'ENOENT') return null
        throw error
      })
      if (bytes === null || bytes.length === 0) continue
      if (torn) gap = true
      const parsed = parseRecords(viewOf(bytes))
      records.push(...parsed.records)
      if (parsed.validBytes < bytes.length) torn = true
    }
    if (!gap) return new SnapshotJournal(openSnapshotFile(file), records)
    await pause(5 * (attempt + 1))
  }
  throw new Error(
    `${file}: a journal segment ends in a partial record with data after it in every read (${SNAPSHOT_ATTEMPTS} reads): it is damaged, or being written too fast to copy`,
  )
}
