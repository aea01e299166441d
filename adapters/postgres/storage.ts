import pg from 'pg'
import type { CustomTypesConfig, Pool, PoolClient } from 'pg'
import { defineStorage } from '../../src/storage/define.js'
import type { DriverTransaction, ModelName, Storage, TransactionOptions } from '../../src/storage/types.js'
import { DEFAULT_SCHEMA } from '../deployment.js'
import { migrate, type MigrateResult } from './migrations.js'
import { quote, tableSql, type TableSql } from './sql.js'
import { isRetryable, PostgresTransaction, type Context } from './transaction.js'

export interface PostgresStorageOptions {
  /**
   * A `pg` Pool to run on. The storage never ends it: `close()` leaves it to you.
   * Give this or `connectionString`.
   * @example postgresStorage({ pool: new pg.Pool({ connectionString, max: 20 }) })
   */
  pool?: Pool
  /**
   * Where to connect, for a pool the storage makes (pg's defaults, 10 connections) and ends on `close()`.
   * @example postgresStorage({ connectionString: 'postgres://app@db.internal:5432/app' })
   */
  connectionString?: string
  /**
   * The schema holding the tables, made when missing. Several services (or test runs) can share a
   * database, each in its own schema.
   * @default 'affiliate_service'
   */
  schema?: string
  /**
   * Run pending migrations at start. With `false` the storage only checks that the schema is at its
   * version and refuses to start otherwise, for deployments that migrate in a separate step.
   * @default true
   */
  migrate?: boolean
  /**
   * How many times a transaction is tried when PostgreSQL answers a serialization failure (40001)
   * or a deadlock (40P01): `work` runs again from the start, after a random pause that grows with
   * each try. From try {@link ALONE_AFTER} + 1 on it runs alone among the schema's writes (see
   * `postgresStorage`), where contention cannot fail it; the last failure is thrown when every try
   * failed.
   * @default 30
   */
  maxAttempts?: number
}

/** The PostgreSQL storage: the Storage contract, plus start-up and shutdown. */
export interface PostgresStorage extends Storage {
  /** Connects and migrates (under an advisory lock). Transactions wait for it anyway; call it to fail fast at start. */
  ready(): Promise<MigrateResult>
  /** Waits for transactions in flight, then ends the pool if the storage made it. */
  close(): Promise<void>
  /** The pool in use, for health checks or sharing with your own queries. */
  readonly pool: Pool
  /** The schema the tables live in. */
  readonly schema: string
}

export { DEFAULT_SCHEMA }
/** @default 30 */
export const DEFAULT_MAX_ATTEMPTS = 30

const INT8 = 20
const int8 = (value: string): number => {
  const number = Number(value)
  // Records hold JavaScript numbers, so a stored integer is always a safe one; say so loudly if not.
  if (!Number.isSafeInteger(number)) throw new RangeError(`PostgreSQL answered ${value}, beyond a safe JavaScript integer`)
  return number
}
/** bigint columns and count(*) as numbers, for this storage's queries only: the pool's own parsers are left alone. */
const types: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? int8 : pg.types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
}

const BEGIN = 'BEGIN ISOLATION LEVEL SERIALIZABLE'
const BEGIN_READ_ONLY = 'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY'

/** Failed tries after which a write runs alone (see `postgresStorage`). */
export const ALONE_AFTER = 3
/** The first key of the advisory lock that lets a write run alone; the second is the schema's oid. */
const WRITE_LOCK = 0x61667772 // 'afwr'

/** Random pause before try `attempt + 1`: up to 4 ms, doubling per try, at most 250 ms. Full jitter spreads the retries of transactions that collided. */
const backoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(250, 2 * 2 ** attempt)))

/** How a try begins: read-only; a write beside others (holding the write lock shared); or alone (holding it exclusively). */
type Mode = 'read' | 'write' | 'alone'

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown; retryable: boolean }

/**
 * Keeps the records in PostgreSQL through `pg` (node-postgres), so several instances of the
 * service can share one database.
 *
 * - **Serializable.** Every transaction runs at `SERIALIZABLE` isolation. When PostgreSQL answers a
 *   serialization failure or a deadlock, the transaction is rolled back and `work` runs again from
 *   the start (see `maxAttempts`), as the Storage contract allows: the service's work only touches
 *   storage through its transaction and is safe to repeat.
 * - **No write fails from contention alone.** Writes that move the same rows (an affiliate's
 *   earnings, a day's report counters) fail each other under load; after {@link ALONE_AFTER} failed
 *   tries a write runs alone: it takes an advisory lock of the schema exclusively before it begins,
 *   which every write otherwise holds shared for its transaction, so it starts once the writes in
 *   flight have ended and the next ones wait for its commit. Nothing it reads or writes can then be
 *   changed beside it, so it commits. Read-only transactions never wait for it.
 * - **Constraints in the database.** Unique indexes enforce referral codes, e-mails per campaign,
 *   invoice and charge ids per workspace (nulls never collide), idempotency scopes and key hashes;
 *   a collision is a `UniqueViolationError` naming the constraint, and the transaction stays usable.
 * - **Counters** move with `UPDATE … SET f = f + $1 … RETURNING`, inside the transaction.
 * - **Versioned migrations** run at start in a schema of their own (default `affiliate_service`),
 *   each in a transaction, recorded in `affiliate_migrations`, under an advisory lock so instances
 *   starting together take turns.
 * - **Indexes** on (workspaceId, createdAt, id) and the other look-ups serve every list page from an
 *   index; `contains` uses pg_trgm GIN indexes when the extension can be had.
 *
 * `pg` is an optional peer dependency: install it (`npm i pg`) to use this entry point.
 *
 * @example
 * import { postgresStorage } from 'affiliate-service/postgres'
 *
 * const storage = postgresStorage({ connectionString: process.env.DATABASE_URL })
 * await storage.ready()
 * const service = createAffiliateService({ storage, keyStore: storageKeyStore(storage) })
 */
export function postgresStorage(options: PostgresStorageOptions): PostgresStorage {
  if (Boolean(options.pool) === Boolean(options.connectionString)) {
    throw new Error('postgresStorage: give either `pool` or `connectionString`')
  }
  const schema = options.schema ?? DEFAULT_SCHEMA
  if (schema.length === 0 || schema.length > 63) throw new Error('postgresStorage: `schema` must be 1 to 63 characters')
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new RangeError('postgresStorage: `maxAttempts` must be a whole number of at least 1')
  const owned = !options.pool
  const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString })
  // An idle connection that drops (a server restart) is reported here; without a listener the
  // process would crash. The next query takes a fresh connection and answers the error there.
  if (owned) pool.on('error', () => undefined)

  const tables = new Map<ModelName, TableSql>()
  const context: Context = {
    table(model) {
      let table = tables.get(model)
      if (!table) tables.set(model, (table = tableSql(schema, model)))
      return table
    },
    types,
    schema: quote(schema),
  }

  /** The schema's oid, the second key of the write lock; known once `ready` has run. */
  let lockId = 0
  let opening: Promise<MigrateResult> | null = null
  let closed: Promise<void> | null = null
  const inFlight = new Set<Promise<unknown>>()

  const ready = (): Promise<MigrateResult> =>
    (opening ??= (async () => {
      const client = await pool.connect()
      try {
        const result = await migrate(client, schema, { apply: options.migrate ?? true })
        lockId = (await client.query<{ id: number }>('SELECT $1::regnamespace::oid::int AS id', [quote(schema)])).rows[0]!.id
        client.release()
        return result
      } catch (error) {
        client.release(error as Error)
        throw error
      }
    })().catch((error: unknown) => {
      opening = null
      throw error
    }))

  async function attempt<T>(work: (tx: DriverTransaction) => Promise<T>, mode: Mode): Promise<Outcome<T>> {
    const client: PoolClient = await pool.connect()
    let broken: Error | undefined
    let alone = false
    try {
      if (mode === 'alone') {
        // Session-level, taken before BEGIN: the snapshot is then newer than every write that ran beside.
        await client.query(`SELECT pg_advisory_lock(${WRITE_LOCK}, ${lockId})`)
        alone = true
      }
      // One round trip: BEGIN, then the write lock shared until the transaction ends.
      await client.query(
        mode === 'read'
          ? BEGIN_READ_ONLY
          : mode === 'alone'
            ? BEGIN
            : `${BEGIN}; SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK}, ${lockId})`,
      )
      const tx = new PostgresTransaction(client, context)
      let value: T
      try {
        value = await work(tx)
      } catch (error) {
        tx.open = false
        await client.query('ROLLBACK')
        return { ok: false, error, retryable: tx.retryable }
      }
      tx.open = false
      if (tx.failure !== undefined) {
        // The work caught a database error and went on, but PostgreSQL had aborted the transaction
        // at that error: nothing after it happened, so the work cannot be said to have committed.
        await client.query('ROLLBACK')
        return { ok: false, error: tx.failure, retryable: tx.retryable }
      }
      const commit = await client.query('COMMIT')
      if (commit.command !== 'COMMIT')
        return { ok: false, error: new Error('PostgreSQL rolled the transaction back at COMMIT'), retryable: false }
      return { ok: true, value }
    } catch (error) {
      // A serialization failure at COMMIT ends the transaction and leaves the connection usable;
      // any other failure of BEGIN, COMMIT or ROLLBACK may have left it broken, so it is dropped.
      if (isRetryable(error)) return { ok: false, error, retryable: true }
      broken = error as Error
      throw error
    } finally {
      if (alone && !broken) {
        try {
          await client.query(`SELECT pg_advisory_unlock(${WRITE_LOCK}, ${lockId})`)
        } catch (error) {
          // Dropping the connection ends the session, and its lock with it.
          broken = error as Error
        }
      }
      client.release(broken)
    }
  }

  async function run<T>(work: (tx: DriverTransaction) => Promise<T>, transactionOptions?: TransactionOptions): Promise<T> {
    await ready()
    const readOnly = transactionOptions?.readOnly === true
    for (let tries = 1; ; tries++) {
      const outcome = await attempt(work, readOnly ? 'read' : tries > ALONE_AFTER ? 'alone' : 'write')
      if (outcome.ok) return outcome.value
      if (!outcome.retryable || tries >= maxAttempts) throw outcome.error
      await backoff(tries)
    }
  }

  return defineStorage({
    pool,
    schema,
    ready,
    transaction<T>(work: (tx: DriverTransaction) => Promise<T>, transactionOptions?: TransactionOptions): Promise<T> {
      if (closed) return Promise.reject(new Error('This storage is closed'))
      const running = run(work, transactionOptions)
      inFlight.add(running)
      const forget = () => void inFlight.delete(running)
      running.then(forget, forget)
      return running
    },
    close() {
      closed ??= (async () => {
        await Promise.allSettled([...inFlight])
        if (owned) await pool.end()
      })()
      return closed
    },
  })
}
