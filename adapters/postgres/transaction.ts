import type { CustomTypesConfig, PoolClient, QueryResult, QueryResultRow } from 'pg'
import { chunked, fieldGroups } from '../../src/storage/batch.js'
import { kindOf, models } from '../../src/storage/models.js'
import {
  UniqueViolationError,
  type DriverDeltas,
  type DriverPatch,
  type DriverQuery,
  type DriverTransaction,
  type DriverWhere,
  type ModelName,
  type StoredRecord,
} from '../../src/storage/types.js'
import {
  BATCH_ROWS,
  countStatement,
  insertManyStatement,
  updateEachStatement,
  decode,
  deleteManyStatement,
  updateManyStatement,
  findStatement,
  incrementStatement,
  quote,
  searchText,
  toSql,
  updateStatement,
  type Statement,
  type TableSql,
} from './sql.js'

/**
 * The first key of the advisory locks that order sequences (the second is the database sequence's
 * oid, so schemas in one database do not wait for each other).
 */
export const SEQUENCE_LOCK = 0x61667371 // 'afsq'

/** The database sequence behind `takeSequence(name)` (migration 13 made `events_seq`). */
export const sequenceName = (schema: string, name: string): string => `${schema}.${quote(`${name}_seq`)}`

/** SQLSTATEs after which the whole transaction may succeed if run again. */
const RETRYABLE = new Set(['40001', '40P01'])

/** A PostgreSQL error's SQLSTATE, when it is one. */
export const sqlState = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined

export const isRetryable = (error: unknown): boolean => RETRYABLE.has(sqlState(error) ?? '')

/** What the storage hands each transaction: how to reach a table's statements and how to parse rows. */
export interface Context {
  table(model: ModelName): TableSql
  /** `pg`'s per-query type parsers: bigint (int8) as a JavaScript number. */
  types: CustomTypesConfig
  /** The quoted schema name. */
  schema: string
}

/**
 * One attempt at a transaction on one pooled connection, already inside BEGIN. Remembers the first
 * database error so the storage can tell, once `work` settles, whether PostgreSQL aborted the
 * transaction (a serialization failure or deadlock: run `work` again) even if `work` caught it.
 */
export class PostgresTransaction implements DriverTransaction {
  open = true
  /** The first error PostgreSQL answered that was not handled here; the transaction is aborted then. */
  failure: unknown = undefined
  retryable = false

  constructor(
    private readonly client: PoolClient,
    private readonly context: Context,
  ) {}

  private table(model: ModelName): TableSql {
    if (!this.open) throw new Error('This transaction has already finished')
    if (!Object.hasOwn(models, model)) throw new Error(`Unknown model ${model}`)
    return this.context.table(model)
  }

  /**
   * Settles when no savepoint section (see `guarded`) that started before now is open. Statements
   * wait for it, so one that `work` sends alongside (Promise.all) can never fall between a
   * SAVEPOINT and its ROLLBACK TO and be undone with it.
   */
  private barrier: Promise<void> = Promise.resolve()

  /** Runs one statement; any error marks the transaction failed (PostgreSQL has aborted it). */
  private async run<R extends QueryResultRow = Record<string, unknown>>(statement: Statement): Promise<QueryResult<R>> {
    await this.barrier
    return this.send<R>(statement)
  }

  private async send<R extends QueryResultRow = Record<string, unknown>>(statement: Statement): Promise<QueryResult<R>> {
    if (!this.open) throw new Error('This transaction has already finished')
    try {
      return await this.client.query<R>({ text: statement.text, values: statement.values, types: this.context.types })
    } catch (error) {
      this.fail(error)
      throw error
    }
  }

  fail(error: unknown): void {
    this.failure ??= error
    if (isRetryable(error)) this.retryable = true
  }

  async get(model: ModelName, id: string) {
    const table = this.table(model)
    const { rows } = await this.run({ text: table.byId, values: [id] })
    return rows[0] ? decode(table, rows[0]) : null
  }

  async find(model: ModelName, query: DriverQuery) {
    const table = this.table(model)
    const statement = findStatement(table, query)
    if (!statement) return []
    const { rows } = await this.run(statement)
    return rows.map((row) => decode(table, row))
  }

  /** `find` reading only the given columns. */
  async select(model: ModelName, fields: readonly string[], query: DriverQuery) {
    const table = this.table(model)
    const names = [...new Set(['id', ...fields])]
    for (const field of names) kindOf(model, field)
    const statement = findStatement(table, query, names.map((field) => quote(field)).join(', '))
    if (!statement) return []
    const { rows } = await this.run(statement)
    return rows.map((row) => {
      const record: Record<string, unknown> = {}
      for (const field of names) record[field] = row[field] ?? null
      return record as StoredRecord
    })
  }

  async count(model: ModelName, query: Pick<DriverQuery, 'where' | 'contains'>) {
    const table = this.table(model)
    const { rows } = await this.run<{ n: number }>(countStatement(table, query))
    return Number(rows[0]!.n)
  }

  /** The page's rows and its total: two statements, each served by an index where one fits. */
  async findPage(model: ModelName, query: DriverQuery) {
    const items = await this.find(model, query)
    return { items, total: await this.count(model, query) }
  }

  /**
   * `INSERT … ON CONFLICT DO NOTHING`: a collision answers no row rather than an error, so the
   * transaction stays usable and work may catch the UniqueViolationError and go on. The holder of
   * the value is then visible to this transaction (were it committed by one running alongside,
   * PostgreSQL answers a serialization failure instead and the work runs again), so a look-up
   * per constraint names the one that was hit.
   */
  async insert(model: ModelName, record: StoredRecord) {
    const table = this.table(model)
    const values = record
    const params = table.fields.map(([field]) => toSql(values[field]))
    params.push(searchText(model, values))
    const { rowCount } = await this.run({ text: table.insert, values: params })
    if (rowCount === 1) return
    if ((await this.run({ text: `SELECT 1 FROM ${table.name} WHERE "id" = $1`, values: [values.id] })).rowCount) {
      throw new Error(`A ${model} record with id ${String(values.id)} already exists`)
    }
    for (const constraint of table.unique) {
      const keys = constraint.fields.map((field) => values[field])
      if (keys.some((key) => key === null || key === undefined)) continue
      const where = constraint.fields.map((field, i) => `${quote(field)} = $${i + 1}`).join(' AND ')
      if ((await this.run({ text: `SELECT 1 FROM ${table.name} WHERE ${where} LIMIT 1`, values: keys })).rowCount) {
        throw new UniqueViolationError(constraint.name)
      }
    }
    throw new Error(`Inserting into ${model} conflicted with a record this transaction cannot see`)
  }

  async update(model: ModelName, id: string, patch: Record<string, unknown>) {
    const table = this.table(model)
    const changes = Object.entries(patch).filter(([, value]) => value !== undefined)
    if (changes.length === 0) return this.get(model, id)
    const touches = (fields: readonly string[]) => changes.some(([field]) => fields.includes(field))
    let search: string | null = null
    if (table.hasSearch && touches(models[model].search)) {
      // The search text joins every search field, so the ones not in the patch are read first.
      const current = await this.get(model, id)
      if (!current) return null
      search = searchText(model, { ...current, ...Object.fromEntries(changes) })
    }
    const statement = updateStatement(table, id, changes, search)
    const unique = table.unique.filter((constraint) => touches(constraint.fields))
    const { rows } = unique.length
      ? (
          await this.guarded(
            [statement],
            unique.map((c) => c.name),
          )
        )[0]!
      : await this.run(statement)
    return rows[0] ? decode(table, rows[0]) : null
  }

  /**
   * Runs statements that may break a unique constraint inside a savepoint, so that a violation of
   * one of `constraints` (or, for a batch of `batchOf` records, of its primary key) undoes all of
   * them and only them, and the transaction stays usable, as with `insert`.
   */
  private async guarded(statements: readonly Statement[], constraints: readonly string[], batchOf?: ModelName): Promise<QueryResult[]> {
    const primaryKey = batchOf === undefined ? undefined : `${batchOf}_pkey`
    const before = this.barrier
    let close!: () => void
    this.barrier = new Promise<void>((resolve) => (close = resolve))
    try {
      await before
      await this.send({ text: 'SAVEPOINT affiliate_unique', values: [] })
      try {
        const results: QueryResult[] = []
        for (const statement of statements) {
          if (!this.open) throw new Error('This transaction has already finished')
          results.push(await this.client.query({ text: statement.text, values: statement.values, types: this.context.types }))
        }
        await this.send({ text: 'RELEASE SAVEPOINT affiliate_unique', values: [] })
        return results
      } catch (error) {
        const constraint = (error as { constraint?: string }).constraint
        if (sqlState(error) === '23505' && constraint !== undefined && (constraints.includes(constraint) || constraint === primaryKey)) {
          await this.send({ text: 'ROLLBACK TO SAVEPOINT affiliate_unique', values: [] })
          if (constraint === primaryKey) throw new Error(`A ${batchOf} record with one of these ids already exists`)
          throw new UniqueViolationError(constraint)
        }
        this.fail(error)
        throw error
      }
    } finally {
      close()
    }
  }

  async increment(model: ModelName, id: string, deltas: Record<string, number | undefined>) {
    const table = this.table(model)
    const statement = incrementStatement(table, id, deltas)
    if (!statement) return this.get(model, id)
    const { rows } = await this.run(statement)
    return rows[0] ? decode(table, rows[0]) : null
  }

  async updateMany(model: ModelName, where: DriverWhere, patch: Record<string, unknown>) {
    const table = this.table(model)
    const changes = Object.entries(patch).filter(([, value]) => value !== undefined)
    if (changes.some(([field]) => (models[model].search as readonly string[]).includes(field))) {
      throw new Error(`updateMany cannot change a searched field of ${model}`)
    }
    if (changes.length === 0) return this.count(model, { where })
    const statement = updateManyStatement(table, where, changes)
    const unique = table.unique.filter((constraint) => changes.some(([field]) => constraint.fields.includes(field)))
    const { rowCount } = unique.length
      ? (
          await this.guarded(
            [statement],
            unique.map((c) => c.name),
          )
        )[0]!
      : await this.run(statement)
    return rowCount ?? 0
  }

  /**
   * One `INSERT … SELECT` per {@link BATCH_ROWS} records, in a savepoint: a collision undoes every
   * one of them and leaves the transaction usable, as `insert` does.
   */
  async insertMany(model: ModelName, records: readonly StoredRecord[]) {
    const table = this.table(model)
    const statements = chunked(records, BATCH_ROWS).map((chunk) => insertManyStatement(table, chunk))
    if (statements.length > 0)
      await this.guarded(
        statements,
        table.unique.map((c) => c.name),
        model,
      )
  }

  /** One `UPDATE … FROM` the bound rows (see `updateEachStatement`) per set of patched fields and {@link BATCH_ROWS} rows. */
  async updateEach(model: ModelName, changes: readonly DriverPatch[], where: DriverWhere) {
    const table = this.table(model)
    const search: readonly string[] = models[model].search
    const statements: Statement[] = []
    const touched = new Set<string>()
    for (const { fields, changes: group } of fieldGroups(changes, (change) => change.patch).groups) {
      if (fields.some((field) => search.includes(field))) throw new Error(`updateEach cannot change a searched field of ${model}`)
      for (const field of fields) touched.add(field)
      const rows = group.map(({ id, patch }) => {
        const row: Record<string, unknown> = { id }
        for (const field of fields) row[field] = toSql(patch[field])
        return row
      })
      for (const chunk of chunked(rows, BATCH_ROWS)) statements.push(updateEachStatement(table, fields, chunk, where))
    }
    const unique = table.unique.filter((constraint) => constraint.fields.some((field) => touched.has(field))).map((c) => c.name)
    return this.batch(model, statements, unique)
  }

  /** `incrementEach` as `updateEach` runs it, adding each row's deltas. */
  async incrementEach(model: ModelName, changes: readonly DriverDeltas[]) {
    const table = this.table(model)
    const { groups, empty } = fieldGroups(changes, (change) => change.deltas)
    // Nothing to add: the record counts when it exists, as `increment` answers it.
    let found = 0
    for (const { id } of empty) if (await this.get(model, id)) found++
    const statements: Statement[] = []
    for (const { fields, changes: group } of groups) {
      const rows = group.map(({ id, deltas }) => {
        const row: Record<string, unknown> = { id }
        for (const field of fields) {
          const delta = deltas[field]!
          if (!Number.isSafeInteger(delta)) throw new RangeError(`${model}.${field}: a delta must be a safe integer, got ${delta}`)
          row[field] = delta
        }
        return row
      })
      for (const chunk of chunked(rows, BATCH_ROWS)) statements.push(updateEachStatement(table, fields, chunk, {}, true))
    }
    return found + (await this.batch(model, statements, []))
  }

  /** Runs statements all or none, answering the rows they changed: one alone unless it may collide, else in a savepoint. */
  private async batch(model: ModelName, statements: Statement[], constraints: string[]): Promise<number> {
    if (statements.length === 0) return 0
    if (statements.length === 1 && constraints.length === 0) return (await this.run(statements[0]!)).rowCount ?? 0
    const results = await this.guarded(statements, constraints, model)
    return results.reduce((sum, result) => sum + (result.rowCount ?? 0), 0)
  }

  /** The sequences whose advisory lock this transaction holds (see `takeSequence`). */
  private readonly locked = new Set<string>()

  /**
   * Numbers from a database sequence, which never makes a transaction fail or wait on a row. For
   * commit order, a transaction first takes the sequence's advisory lock, held until it commits or
   * rolls back: numbers are drawn by one transaction at a time, and that one commits before the next
   * draws. Being last in the work (events are written as it ends), the wait is short and cannot
   * deadlock on rows in the usual case; a deadlock is retried like a serialization failure.
   */
  async takeSequence(name: string, count: number) {
    if (!this.open) throw new Error('This transaction has already finished')
    const sequence = sequenceName(this.context.schema, name)
    // The lock is held while drawing, so no one else draws between nextval and setval: the numbers
    // are consecutive. The first time, the lock is taken by the same statement: its FROM (fenced by
    // OFFSET 0, so it is run first and not folded into the outer query) takes it before any draw.
    const draw = 'setval($1::regclass, nextval($1::regclass) + $2 - 1) - $2 + 1 AS first'
    const text = this.locked.has(name)
      ? `SELECT ${draw}`
      : `SELECT ${draw} FROM (SELECT pg_advisory_xact_lock(${SEQUENCE_LOCK}, $1::regclass::oid::int) OFFSET 0) AS locked`
    const { rows } = await this.run<{ first: number }>({ text, values: [sequence, count] })
    this.locked.add(name)
    return Number(rows[0]!.first)
  }

  async delete(model: ModelName, id: string) {
    const table = this.table(model)
    const { rowCount } = await this.run({ text: `DELETE FROM ${table.name} WHERE "id" = $1`, values: [id] })
    return rowCount === 1
  }

  async deleteMany(model: ModelName, where: DriverWhere) {
    const table = this.table(model)
    const { rowCount } = await this.run(deleteManyStatement(table, where))
    return rowCount ?? 0
  }
}
