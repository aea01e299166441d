import { defaultOnError } from '../../on-error.js'
import { defineStorage } from '../define.js'
import { modelNames } from '../models.js'
import { quote, SEARCH_COLUMN } from '../sql.js'
import type { DriverTransaction, Storage, StorageHealth, TransactionOptions } from '../types.js'
import { fieldsOf } from './columns.js'
import { Connection } from './connection.js'
import { migrations, SCHEMA_VERSION } from './migrations.js'
import type { SqlJsJournal, SqlJsPersistence } from './persistence.js'
import { SearchIndex } from './search-index.js'
import type { InitSqlJs, SqlJsConfig, SqlJsStatic } from './sql-js-types.js'
import { SqlJsTransaction, type Write } from './transaction.js'

export interface SqlJsStorageOptions {
  /**
   * Where the database is kept between runs, as a snapshot plus a journal of every acknowledged
   * write. On Node, Bun and Deno: `fileJournal(path)` from `affiliate-service/node`, which fsyncs
   * each write before its transaction resolves. Leave it out (and `load`) for an in-memory database.
   * @default undefined (in memory)
   * @example sqlJsStorage({ persist: fileJournal('./data/affiliate.sqlite') })
   */
  persist?: SqlJsPersistence
  /**
   * For hosts without a file system: answers the bytes `save` last stored, or null at first.
   * Use with `save`; not with `persist`.
   * @example sqlJsStorage({ load: () => idb.get('db'), save: (bytes) => idb.set('db', bytes) })
   */
  load?: () => Promise<Uint8Array | null | undefined>
  /**
   * Stores the whole database; called after every write transaction, which resolves only once
   * `save` has. Its cost grows with the database, so prefer `persist` where there is a file system.
   */
  save?: (bytes: Uint8Array) => Promise<void>
  /**
   * Where sql.js finds `sql-wasm.wasm`, as in `initSqlJs({ locateFile })`. sql.js loads once per
   * process, so the first storage opened decides (and a failed load stays failed).
   * @default sql.js's own look-up: beside its `sql-wasm.js` on Node
   * @example locateFile: (file) => `https://cdn.example.com/sql.js/1.16.0/${file}`
   */
  locateFile?: (file: string) => string
  /** The wasm bytes themselves, for hosts that cannot fetch or read files. Like `locateFile`, the first storage opened decides. */
  wasmBinary?: ArrayBuffer | Uint8Array
  /**
   * With `persist`: fold the journal into the file once it holds at least this many bytes and at
   * least as many as the file itself (so the cost of folding, spread over the writes that filled
   * the journal, stays the same however large the database grows).
   * @default 8388608 (8 MiB)
   */
  checkpointBytes?: number
}

/** A sql.js storage: the Storage contract plus opening and closing. */
export interface SqlJsStorage extends Storage {
  /**
   * Opens the database now: loads sql.js, takes the file's lock, replays the journal, upgrades
   * the schema. Transactions wait for this anyway; call it to fail fast at start-up. A failed open
   * is not kept: for a pause (250 ms, doubling per failure up to 10 s) calls fail at once with its
   * error, then the next call tries again.
   */
  ready(): Promise<void>
  /** Open, being opened, or why it cannot be (for `GET /health`); starts opening it when nobody has. */
  health(): StorageHealth
  /** Waits for transactions in flight, folds the journal into the file, releases the lock. */
  close(): Promise<void>
}

let sqlJs: Promise<SqlJsStatic> | undefined

/**
 * sql.js initialises once per process and answers every later `initSqlJs` with that first module
 * (its own cache): so the first storage to open decides where the wasm comes from.
 */
function loadSqlJs(options: SqlJsStorageOptions): Promise<SqlJsStatic> {
  sqlJs ??= (async () => {
    // `as string` keeps the type checker from resolving sql.js (it ships no types of its own);
    // bundlers still see a literal and leave the import lazy, so the wasm loads only when used.
    const module = (await import('sql.js' as string)) as { default: InitSqlJs }
    const config: SqlJsConfig = {}
    if (options.locateFile) config.locateFile = options.locateFile
    if (options.wasmBinary) config.wasmBinary = options.wasmBinary
    return module.default(config)
  })()
  return sqlJs
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

interface JournalRecord {
  seq: number
  writes: Write[]
}

const SEQ = "SELECT value FROM affiliate_meta WHERE key = 'seq'"
const SET_SEQ = "UPDATE affiliate_meta SET value = ? WHERE key = 'seq'"

/** The database's schema version; refuses one this code does not know. */
function schemaVersion(connection: Connection): number {
  const version = connection.all('PRAGMA user_version')[0]![0] as number
  if (version > SCHEMA_VERSION) {
    throw new Error(
      `This database has schema version ${version}, newer than this affiliate-service (${SCHEMA_VERSION}): upgrade the package`,
    )
  }
  return version
}

/** Runs the migrations the database has not seen, in one transaction; true when any ran. */
function migrate(connection: Connection): boolean {
  const version = schemaVersion(connection)
  const pending = migrations.filter((migration) => migration.version > version)
  if (pending.length === 0) return false
  connection.exec('BEGIN')
  try {
    for (const migration of pending) connection.exec(migration.sql)
    connection.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`)
    connection.exec('COMMIT')
  } catch (error) {
    connection.exec('ROLLBACK')
    throw error
  }
  return true
}

/** Fails at open, with a plain message, when a table lacks a column the models need. */
function checkColumns(connection: Connection): void {
  for (const model of modelNames) {
    const present = new Set(connection.all(`PRAGMA table_info(${quote(model)})`).map((row) => row[1] as string))
    const missing = [...fieldsOf(model).map(([field]) => field), SEARCH_COLUMN].filter((field) => !present.has(field))
    if (missing.length) {
      throw new Error(`The database's ${model} table lacks ${missing.join(', ')}: a migration is missing for this model change`)
    }
  }
}

/** Applies journal records after the snapshot's sequence number, each in its own transaction. */
function replay(connection: Connection, records: readonly Uint8Array[]): number {
  let seq = connection.all(SEQ)[0]![0] as number
  for (const bytes of records) {
    const record = JSON.parse(decoder.decode(bytes)) as JournalRecord
    if (record.seq <= seq) continue
    if (record.seq !== seq + 1) {
      throw new Error(`The journal skips from transaction ${seq} to ${record.seq}: the file is damaged`)
    }
    connection.exec('BEGIN')
    try {
      for (const [sql, params] of record.writes) connection.run(sql, params)
      connection.run(SET_SEQ, [record.seq])
      connection.exec('COMMIT')
    } catch (error) {
      connection.exec('ROLLBACK')
      throw new Error(`Replaying transaction ${record.seq} of the journal failed: ${String(error)}`)
    }
    seq = record.seq
  }
  return seq
}

const DEFAULT_CHECKPOINT_BYTES = 8 * 1024 * 1024

/**
 * The open database and the one-at-a-time queue its transactions run in.
 *
 * With a journal, memory runs ahead of the disk by the commits whose append is in flight: a
 * transaction commits in memory, the next one runs (and may read it) while its record is synced,
 * and commits that queue up behind one fsync share the next (group commit, in the journal). The
 * rule that keeps this safe:
 * - A write is answered only once its own record is durable, and records become durable in commit
 *   order, so an answered write never depends on one that could still be lost.
 * - A read is answered only once every write before it is durable (it may have seen them).
 * - If an append fails, the journal refuses every later append and checkpoint, and this engine
 *   every later transaction, reads included, until a restart rebuilds memory from the disk. So
 *   the writes in the failed group and those behind it all fail; one of them may still turn out
 *   to be on disk after the restart (its bytes were written before the fsync failed), like any
 *   commit whose answer was lost, but nothing acknowledged is ever missing.
 */
class Engine {
  private seq = 0
  /** Resolves once every acknowledged-so-far write is durable. */
  private durable: Promise<void> = Promise.resolve()
  /** Set when the disk stopped matching memory; every later transaction fails with it. */
  private failure: Error | null = null
  private checkpointing: Promise<void> | null = null
  /** Committed search texts, for `contains` (see SearchIndex). */
  private readonly search: SearchIndex

  constructor(
    private readonly connection: Connection,
    private readonly options: SqlJsStorageOptions,
    private readonly journal: SqlJsJournal | null,
    seq: number,
    /** Where failures of background work (a checkpoint) go: the service's `onError`. */
    private readonly report: (error: unknown) => void,
  ) {
    this.seq = seq
    this.search = new SearchIndex(connection)
  }

  /**
   * Runs one transaction; called inside the queue. Answers the result and a promise of its
   * durability, which the caller awaits outside the queue: so the next transaction runs while
   * this one's fsync is under way, and one fsync can cover several commits.
   */
  async run<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<{ result: T; durable: Promise<void> }> {
    if (this.failure) throw this.failure
    const tx = new SqlJsTransaction(this.connection, this.search)
    this.connection.run('BEGIN')
    let result: T
    try {
      result = await work(tx)
    } catch (error) {
      tx.open = false
      this.rollback()
      throw error
    }
    tx.open = false
    if (tx.writes.length > 0 && this.journal?.readOnly) {
      this.rollback()
      throw new Error('This database was opened read-only (a snapshot of the file): it takes no writes')
    }
    if (tx.writes.length === 0) {
      this.rollback()
      // A read may have seen writes whose fsync is still under way: answer only once they are durable.
      return { result, durable: this.durable }
    }
    const seq = this.seq + 1
    try {
      if (this.journal) this.connection.run(SET_SEQ, [seq])
      this.connection.run('COMMIT')
    } catch (error) {
      this.rollback()
      throw error
    }
    this.search.commit(tx.searchChanges)
    this.seq = seq
    if (this.journal) {
      const record: JournalRecord = { seq, writes: tx.writes }
      this.durable = this.journal.append(encoder.encode(JSON.stringify(record))).catch((error: unknown) => {
        this.failure ??= new Error(`affiliate-service: writing the journal failed, restart to recover: ${String(error)}`, {
          cause: error,
        })
        throw this.failure
      })
      this.maybeCheckpoint()
    } else if (this.options.save) {
      // Inside the queue: the next transaction waits for this save, so saves never overlap.
      try {
        await this.options.save(this.connection.db.export())
      } catch (error) {
        // Memory holds a write the saved copy lacks: refuse everything until a restart reloads it.
        this.failure ??= new Error(`affiliate-service: save failed, restart to recover: ${String(error)}`, { cause: error })
        throw this.failure
      }
    }
    return { result, durable: this.durable }
  }

  /**
   * Ends the open transaction without its writes. Some SQLite errors (out of memory, say) have
   * rolled it back already; the ROLLBACK then fails, and that must not hide the first error.
   */
  private rollback(): void {
    try {
      this.connection.run('ROLLBACK')
    } catch {
      // Already rolled back by SQLite.
    }
  }

  /** Called between transactions, where exporting is allowed. */
  private maybeCheckpoint(): void {
    const journal = this.journal!
    const threshold = Math.max(this.options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES, journal.snapshotBytes)
    if (this.checkpointing || journal.journalBytes < threshold) return
    this.checkpointing = journal
      .checkpoint(this.connection.db.export())
      // A failed fold loses nothing (the journal still holds every record) and the next one
      // retries; but until one succeeds the journal grows with every write (a full disk, say),
      // so the host hears of each failure.
      .catch((error: unknown) =>
        this.report(
          new Error(
            `affiliate-service: folding the journal into the database file failed (the journal keeps growing until a fold succeeds): ${String(error)}`,
            { cause: error },
          ),
        ),
      )
      .finally(() => (this.checkpointing = null))
  }

  /**
   * Folds the journal into the file now; called between transactions. With `rewrite` the file is
   * written even when the journal is empty: after a migration, so that no record is journaled
   * under the new schema on top of a file of the old one.
   */
  async checkpoint(rewrite = false): Promise<void> {
    if (!this.journal || this.journal.readOnly) return
    await this.checkpointing
    await this.durable
    if (rewrite || this.journal.journalBytes > 0 || this.journal.snapshotBytes === 0) {
      await this.journal.checkpoint(this.connection.db.export())
    }
  }

  async close(): Promise<void> {
    try {
      if (this.journal && !this.failure) await this.checkpoint()
    } finally {
      await this.journal?.close()
      this.connection.close()
    }
  }
}

/** Refuses options this version no longer takes, saying what to write instead. */
function checkOptions(options: SqlJsStorageOptions): void {
  if ('file' in options) {
    throw new TypeError(
      "sqlJsStorage: the `file` option is gone; write sqlJsStorage({ persist: fileJournal(path) }) with `import { fileJournal } from 'affiliate-service/node'`",
    )
  }
}

async function open(options: SqlJsStorageOptions, report: (error: unknown) => void): Promise<Engine> {
  if (options.persist !== undefined && (options.load || options.save)) {
    throw new Error('sqlJsStorage: give either `persist` or `load`/`save`, not both')
  }
  if (Boolean(options.load) !== Boolean(options.save)) throw new Error('sqlJsStorage: `load` and `save` go together')
  const SQL = await loadSqlJs(options)
  const journal = options.persist ? await options.persist.open() : null
  try {
    const bytes = journal ? journal.snapshot : ((await options.load?.()) ?? null)
    const connection = new Connection(new SQL.Database(bytes))
    // The database lives in sql.js's in-memory file system and durability comes from the journal
    // or `save`, never from SQLite's own files: keep the rollback journal in memory rather than
    // creating, writing and deleting a journal file per transaction, and hold the lock for good
    // rather than taking it (and checking for a hot journal) per transaction. Neither is stored
    // in the file, which stays a plain SQLite database.
    connection.exec('PRAGMA journal_mode = MEMORY; PRAGMA locking_mode = EXCLUSIVE')
    try {
      schemaVersion(connection)
      const seq = journal && bytes ? replay(connection, journal.records) : 0
      const migrated = migrate(connection)
      checkColumns(connection)
      const engine = new Engine(connection, options, journal, seq, report)
      // Journal records are SQL for the schema they were written under, so after a migration
      // the file must be rewritten before any record is appended under the new schema.
      if (journal && (migrated || !bytes)) await engine.checkpoint(migrated)
      if (options.save && migrated) await options.save(connection.db.export())
      return engine
    } catch (error) {
      connection.close()
      throw error
    }
  } catch (error) {
    await journal?.close()
    throw error
  }
}

/**
 * SQLite compiled to WebAssembly (sql.js), in memory or kept in a file. sql.js is loaded on first
 * use, so importing the package never loads the wasm. Transactions run one at a time with SQLite's
 * own atomicity and unique indexes; records round-trip exactly (booleans, nulls, string arrays).
 *
 * - `sqlJsStorage()`: in memory, gone when the process ends.
 * - `sqlJsStorage({ persist: fileJournal(path) })`: durable (see `persist`); `npm start` uses it.
 * - `sqlJsStorage({ load, save })`: for hosts without a file system.
 *
 * Close it on shutdown (`await storage.close()`) to fold the journal into the file.
 *
 * @example
 * const storage = sqlJsStorage({ persist: fileJournal('./data/affiliate.sqlite') })
 * await storage.ready()
 * const service = createAffiliateService({ storage, keyStore })
 */
/** The first pause before a failed open is tried again; it doubles per failure, up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 250
const MAX_RETRY_MS = 10_000

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export function sqlJsStorage(options: SqlJsStorageOptions = {}): SqlJsStorage {
  checkOptions(options)
  let opening: Promise<Engine> | null = null
  let opened = false
  /** The last failed open, while its pause lasts: calls fail with it at once, then the open is tried again. */
  let failed: { error: unknown } | null = null
  /** Why the last open failed, kept while the next ones are tried, until one opens. */
  let lastError: unknown
  let retryDelay = FIRST_RETRY_MS
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let tail: Promise<unknown> = Promise.resolve()
  let closed: Promise<void> | null = null
  // Background failures go to whoever asked (the service's onError), else to the default onError.
  const reporters = new Set<(error: unknown) => void>()
  const report = (error: unknown) => {
    if (reporters.size === 0) defaultOnError(error, { source: 'storage' })
    for (const reporter of reporters) reporter(error)
  }
  // A failed open (a file another process holds, say) is not kept: after a pause that doubles up to
  // MAX_RETRY_MS, the next call (a request, `ready`, `health`) tries again. Never by itself: a
  // storage nobody uses any more must not take the file.
  const engine = (): Promise<Engine> => {
    if (opening) return opening
    if (failed) return Promise.reject(failed.error)
    const attempt = open(options, report)
    opening = attempt
    attempt.then(
      () => {
        opened = true
        lastError = undefined
        retryDelay = FIRST_RETRY_MS
      },
      (error: unknown) => {
        opening = null
        failed = { error }
        lastError = error
        retryTimer = setTimeout(() => {
          retryTimer = undefined
          failed = null
        }, retryDelay)
        // Node: the pause alone does not keep the process alive.
        ;(retryTimer as { unref?: () => void }).unref?.()
        retryDelay = Math.min(retryDelay * 2, MAX_RETRY_MS)
      },
    )
    return attempt
  }
  const enqueue = <T>(job: () => Promise<T>): Promise<T> => {
    const result = tail.then(job)
    tail = result.catch(() => undefined)
    return result
  }
  return defineStorage({
    // The database lives in this process (a file is held by its lock): nobody else writes to it.
    exclusive: true,
    transaction<T>(work: (tx: DriverTransaction) => Promise<T>, _options?: TransactionOptions): Promise<T> {
      if (closed) return Promise.reject(new Error('This storage is closed'))
      return enqueue(async () => (await engine()).run(work)).then(async ({ result, durable }) => {
        await durable
        return result
      })
    },
    async ready() {
      await engine()
    },
    reportErrorsTo(reporter: (error: unknown) => void) {
      reporters.add(reporter)
    },
    health(): StorageHealth {
      if (closed) return { ok: false, reason: 'the storage is closed' }
      if (opened) return { ok: true }
      // Not asked for yet, or its pause after a failure is over: start opening, so health turns ok by being asked.
      if (!failed) engine().catch(() => undefined)
      if (lastError !== undefined) return { ok: false, reason: `the database cannot be opened (trying again): ${messageOf(lastError)}` }
      return { ok: false, reason: 'the database is being opened' }
    },
    close() {
      if (retryTimer !== undefined) clearTimeout(retryTimer)
      closed ??= enqueue(async () => {
        if (opening) await (await opening.catch(() => null))?.close()
      })
      return closed
    },
  })
}
