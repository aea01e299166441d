import { chunked, fieldGroups } from '../batch.js'
import { kindOf, models, type ColumnKind } from '../models.js'
import { conditions, orderBy, Params, quote, searchText, SEARCH_COLUMN, whereClause } from '../sql.js'
import {
  UniqueViolationError,
  type DriverDeltas,
  type DriverPatch,
  type DriverQuery,
  type DriverTransaction,
  isRange,
  type DriverWhere,
  type ModelName,
  type RecordPage,
  type StoredRecord,
} from '../types.js'
import { fieldsOf, fromSql, toSql } from './columns.js'
import type { Connection } from './connection.js'
import { COUNTED, COUNTED_PAIRS, PAIR_SEPARATOR } from './migrations.js'
import type { SearchChanges, SearchIndex } from './search-index.js'
import type { SqlValue } from './sql-js-types.js'

/** A write as run, kept so the file journal can replay it: SQL text and its parameters. */
export type Write = [sql: string, params: SqlValue[]]

type Filter = Pick<DriverQuery, 'where' | 'contains'>

interface TableSql {
  fields: [string, ColumnKind][]
  select: string
  insert: string
  /** One INSERT of every row of a bound JSON array of arrays (each row's values in `fields` order, then the search text). */
  insertMany: string
  hasSearch: boolean
  byId: string
  /** Where `id` is among the selected columns. */
  idAt: number
  /** "UNIQUE constraint failed: <columns>" as SQLite words it, to the constraint's name. */
  constraints: Map<string, string>
}

/**
 * The rows of a batch: a JSON array bound as one parameter. The statement runs with it bound as
 * UTF-8 bytes (encoded natively, where binding text copies it character by character in
 * JavaScript) and the cast reads them back as the text; the journal keeps the text, which the
 * same statement takes when replayed.
 */
const JSON_ROWS = 'jsonb_each(CAST(? AS TEXT))'
const utf8 = new TextEncoder()

/** Rows per statement of a batch, so that one statement's JSON stays tens of MB, far below SQLite's limit on a value's length. */
const BATCH_ROWS = 50_000

const tableSql = new Map<ModelName, TableSql>()

function sqlOf(model: ModelName): TableSql {
  let table = tableSql.get(model)
  if (table) return table
  const fields = fieldsOf(model)
  const names = fields.map(([field]) => quote(field))
  const select = `SELECT ${names.join(', ')} FROM ${quote(model)}`
  table = {
    fields,
    select,
    insert: `INSERT INTO ${quote(model)} (${[...names, SEARCH_COLUMN].join(', ')}) VALUES (${fields.map(() => '?').join(', ')}, ?)`,
    insertMany: `INSERT INTO ${quote(model)} (${[...names, SEARCH_COLUMN].join(', ')}) SELECT ${[...names, SEARCH_COLUMN].map((_, i) => `value ->> ${i}`).join(', ')} FROM ${JSON_ROWS}`,
    hasSearch: models[model].search.length > 0,
    byId: `${select} WHERE "id" = ?`,
    idAt: fields.findIndex(([field]) => field === 'id'),
    constraints: new Map(
      models[model].unique.map((constraint) => [constraint.fields.map((field) => `${model}.${field}`).join(', '), constraint.name]),
    ),
  }
  tableSql.set(model, table)
  return table
}

function decode(table: TableSql, row: readonly SqlValue[]): StoredRecord {
  const record: Record<string, unknown> = {}
  table.fields.forEach(([field, kind], i) => {
    record[field] = fromSql(kind, row[i] ?? null)
  })
  return record as StoredRecord
}

const sqlite = () => new Params('sqlite')

/** Value lists of one condition, when every value is a string (what `_counts` keys hold). */
const stringValues = (value: DriverWhere[string]): string[] | null => {
  if (value !== undefined && isRange(value)) return null
  const values = value !== null && typeof value === 'object' ? [...new Set(value.in)] : [value]
  return values.every((v) => typeof v === 'string') ? (values as string[]) : null
}

/** Combinations of values a `_counts` look-up may expand to. */
const MAX_COUNTED_KEYS = 64

/**
 * The `_counts` rows that answer a count of this query, as [field, values]: when it has no
 * `contains` and its conditions are one field, or one pair of fields, that the count triggers
 * keep, with string values. Null otherwise.
 */
function countedAs(model: ModelName, query: Filter): [string, string[]] | null {
  if (query.contains) return null
  // Only the tables the count triggers keep: models added after migration 6 (rollups, clicks,
  // settings, the outbox's tables) are counted by SQL.
  const counted = (COUNTED as Partial<Record<ModelName, readonly string[]>>)[model]
  if (counted === undefined) return null
  const entries = Object.entries(query.where ?? {}).filter(([, value]) => value !== undefined)
  if (entries.length === 0) return ['', ['']]
  if (entries.length === 1) {
    const [field, value] = entries[0]!
    if (!counted.includes(field)) return null
    const values = stringValues(value)
    return values && [field, values]
  }
  if (entries.length !== 2) return null
  const pairs: readonly (readonly [string, string])[] = model === 'commissions' ? COUNTED_PAIRS.commissions : []
  for (const [a, b] of pairs) {
    const first = entries.find(([field]) => field === a)
    const second = entries.find(([field]) => field === b)
    if (!first || !second) continue
    const as = stringValues(first[1])
    const bs = stringValues(second[1])
    if (!as || !bs || as.length * bs.length > MAX_COUNTED_KEYS) return null
    // A value holding the separator could read as another pair: such counts take the SQL way.
    if ([...as, ...bs].some((v) => v.includes(PAIR_SEPARATOR))) return null
    return [`${a},${b}`, as.flatMap((x) => bs.map((y) => `${x}${PAIR_SEPARATOR}${y}`))]
  }
  return null
}

/**
 * The statement of an `updateEach` setting `fields` from the bound rows (`[id, value, …]`, as
 * JSON), joined on the primary key (the other columns of `where` as `+"field"`, which no index
 * serves, so SQLite never walks an index of the guard instead), where `where` still holds.
 */
export function updateEachSql(model: ModelName, fields: readonly string[], rows: string, where: DriverWhere): Write {
  const name = quote(model)
  const params = sqlite()
  params.values.push(rows)
  const sets = fields.map((field, i) => `${quote(field)} = j.value ->> ${i + 1}`)
  const conds = conditions(model, where, params, { table: name, byId: true })
  const sql = `UPDATE ${name} SET ${sets.join(', ')} FROM ${JSON_ROWS} AS j WHERE ${[`${name}."id" = j.value ->> 0`, ...conds].join(' AND ')}`
  return [sql, params.values as SqlValue[]]
}

/**
 * One transaction on a sql.js database. The caller has opened it with BEGIN and commits or rolls
 * back; this class runs the statements, keeps the writes for the journal, and refuses work once
 * `open` is false.
 */
export class SqlJsTransaction implements DriverTransaction {
  open = true
  readonly writes: Write[] = []
  /** What this transaction did to search texts; the search index takes it on commit. */
  readonly searchChanges: SearchChanges = new Map()

  constructor(
    private readonly connection: Connection,
    private readonly search: SearchIndex,
  ) {}

  private table(model: ModelName): TableSql {
    if (!this.open) throw new Error('This transaction has already finished')
    if (!Object.hasOwn(models, model)) throw new Error(`Unknown model ${model}`)
    return sqlOf(model)
  }

  /** Runs a write and keeps it for the journal; `bound`, when given, is what runs (the same values, bound otherwise). */
  private write(model: ModelName, table: TableSql, sql: string, params: SqlValue[], id?: string, bound: SqlValue[] = params): number {
    let changed: number
    try {
      changed = this.connection.run(sql, bound)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      const failed = /UNIQUE constraint failed: (.*)$/.exec(message)?.[1]
      if (failed !== undefined) {
        const constraint = table.constraints.get(failed)
        if (constraint) throw new UniqueViolationError(constraint)
        if (failed === `${model}.id`)
          throw new Error(
            id === undefined ? `A ${model} record with one of these ids already exists` : `A ${model} record with id ${id} already exists`,
          )
      }
      throw error
    }
    if (changed > 0) this.writes.push([sql, params])
    return changed
  }

  private noteSearch(model: ModelName, id: string | null, text: string | null): void {
    if (id === null) {
      this.searchChanges.set(model, 'unknown')
      return
    }
    let changes = this.searchChanges.get(model)
    if (changes === 'unknown') return
    if (!changes) this.searchChanges.set(model, (changes = new Map()))
    changes.set(id, text)
  }

  /**
   * The ids of the records matching `query` (which has `contains`), in the page order. From the
   * search index when this transaction has not changed the model's search texts and the term is
   * narrow (the index finds the candidates; SQL applies the rest by id); by a scan otherwise.
   */
  private searchedIds(model: ModelName, table: TableSql, query: Filter, order: string): string[] {
    const params = sqlite()
    const term = query.contains!.toLowerCase()
    const candidates = table.hasSearch && !this.searchChanges.has(model) ? this.search.matching(model, term) : null
    let sql: string
    if (candidates === null) {
      sql = `SELECT "id" FROM ${quote(model)}${whereClause(model, query, params)} ORDER BY ${order}`
    } else {
      if (candidates.length === 0) return []
      const conds = conditions(model, query.where, params)
      sql = `SELECT "id" FROM ${quote(model)} WHERE ${[`"id" IN (${candidates.map(() => '?').join(', ')})`, ...conds].join(' AND ')} ORDER BY ${order}`
      params.values.unshift(...candidates)
    }
    return this.connection.all(sql, params.values).map((row) => row[0] as string)
  }

  private read(table: TableSql, id: string): StoredRecord | null {
    const row = this.connection.all(table.byId, [id])[0]
    return row ? decode(table, row) : null
  }

  /** The rows with these ids, in this order. */
  private readIds(table: TableSql, ids: string[]): StoredRecord[] {
    if (ids.length === 0) return []
    const rows = this.connection.all(`${table.select} WHERE "id" IN (${ids.map(() => '?').join(', ')})`, ids)
    const byId = new Map(rows.map((row) => [row[table.idAt] as string, row]))
    return ids.map((id) => decode(table, byId.get(id)!))
  }

  async get(model: ModelName, id: string) {
    return this.read(this.table(model), id)
  }

  async find(model: ModelName, query: DriverQuery) {
    return (await this.page(model, query, false)).items
  }

  /** `find` reading only the given columns (a search reads whole records, by `find`). */
  async select(model: ModelName, fields: readonly string[], query: DriverQuery) {
    if (query.contains) return this.find(model, query)
    this.table(model)
    const columns = [...new Set(['id', ...fields])].map((field) => [field, kindOf(model, field)] as const)
    if (query.limit !== undefined && query.limit <= 0) return []
    const params = sqlite()
    const where = whereClause(model, query, params)
    params.values.push(query.limit ?? -1, Math.max(0, query.offset ?? 0))
    const sql = `SELECT ${columns.map(([field]) => quote(field)).join(', ')} FROM ${quote(model)}${where} ORDER BY ${orderBy(model, query.orderBy, 'sqlite')} LIMIT ? OFFSET ?`
    return this.connection.all(sql, params.values).map((row) => {
      const record: Record<string, unknown> = {}
      columns.forEach(([field, kind], i) => {
        record[field] = fromSql(kind, row[i] ?? null)
      })
      return record as StoredRecord
    })
  }

  async findPage(model: ModelName, query: DriverQuery) {
    return this.page(model, query, true)
  }

  /** A page, and its total when `counted`; the total is -1 otherwise. */
  private async page(model: ModelName, query: DriverQuery, counted: boolean): Promise<RecordPage<StoredRecord>> {
    const table = this.table(model)
    const limit = query.limit ?? -1
    const order = orderBy(model, query.orderBy, 'sqlite')
    const offset = Math.max(0, query.offset ?? 0)
    if (query.contains) {
      // A search mostly matches few: find every matching id once (which is the total), and read
      // only the page's rows.
      const ids = this.searchedIds(model, table, query, order)
      const page = limit < 0 ? ids.slice(offset) : ids.slice(offset, offset + Math.max(0, limit))
      return { items: this.readIds(table, page), total: ids.length }
    }
    const total = counted ? await this.count(model, query) : -1
    if (query.limit !== undefined && limit <= 0) return { items: [], total }
    const params = sqlite()
    const where = whereClause(model, query, params)
    params.values.push(limit, offset)
    const rows = this.connection.all(`${table.select}${where} ORDER BY ${order} LIMIT ? OFFSET ?`, params.values)
    return { items: rows.map((row) => decode(table, row)), total }
  }

  async count(model: ModelName, query: Filter) {
    const table = this.table(model)
    const counted = countedAs(model, query)
    if (counted !== null) {
      const [field, values] = counted
      const sql = `SELECT coalesce(sum(n), 0) FROM _counts WHERE model = ? AND field = ? AND value IN (${values.map(() => '?').join(', ')})`
      return this.connection.all(sql, [model, field, ...values])[0]![0] as number
    }
    if (query.contains) return this.searchedIds(model, table, query, '"id"').length
    const params = sqlite()
    const where = whereClause(model, query, params)
    return this.connection.all(`SELECT count(*) FROM ${quote(model)}${where}`, params.values)[0]![0] as number
  }

  async insert(model: ModelName, record: StoredRecord) {
    const table = this.table(model)
    const params = table.fields.map(([field, kind]) => toSql(kind, record[field]))
    const text = searchText(model, record)
    params.push(text)
    this.write(model, table, table.insert, params, record.id)
    if (table.hasSearch) this.noteSearch(model, record.id, text)
  }

  async update(model: ModelName, id: string, patch: Record<string, unknown>) {
    const table = this.table(model)
    const current = this.read(table, id)
    if (!current) return null
    const changes = Object.entries(patch).filter(([, value]) => value !== undefined)
    if (changes.length === 0) return current
    const sets: string[] = []
    const params: SqlValue[] = []
    for (const [field, value] of changes) {
      sets.push(`${quote(field)} = ?`)
      params.push(toSql(kindOf(model, field), value))
    }
    const next = { ...current, ...Object.fromEntries(changes) }
    const search: readonly string[] = models[model].search
    let text: string | null = null
    if (table.hasSearch && changes.some(([field]) => search.includes(field))) {
      text = searchText(model, next)
      sets.push(`${SEARCH_COLUMN} = ?`)
      params.push(text)
    }
    params.push(id)
    const changed = this.write(model, table, `UPDATE ${quote(model)} SET ${sets.join(', ')} WHERE "id" = ?`, params)
    if (changed > 0 && text !== null) this.noteSearch(model, id, text)
    return this.read(table, next.id)
  }

  async increment(model: ModelName, id: string, deltas: Record<string, number | undefined>) {
    const table = this.table(model)
    const sets: string[] = []
    const params: SqlValue[] = []
    for (const [field, delta] of Object.entries(deltas)) {
      if (delta === undefined) continue
      if (kindOf(model, field) !== 'int') throw new Error(`${model}.${field} is not a number field`)
      sets.push(`${quote(field)} = ${quote(field)} + ?`)
      params.push(delta)
    }
    if (sets.length === 0) return this.read(table, id)
    params.push(id)
    const changed = this.write(model, table, `UPDATE ${quote(model)} SET ${sets.join(', ')} WHERE "id" = ?`, params)
    return changed ? this.read(table, id) : null
  }

  async updateMany(model: ModelName, where: DriverWhere, patch: Record<string, unknown>) {
    const table = this.table(model)
    const changes = Object.entries(patch).filter(([, value]) => value !== undefined)
    const search: readonly string[] = models[model].search
    if (changes.some(([field]) => search.includes(field))) throw new Error(`updateMany cannot change a searched field of ${model}`)
    if (changes.length === 0) return this.count(model, { where })
    const params = sqlite()
    const sets = changes.map(([field, value]) => `${quote(field)} = ${params.add(toSql(kindOf(model, field), value))}`)
    const conds = conditions(model, where, params)
    const sql = `UPDATE ${quote(model)} SET ${sets.join(', ')}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`
    return this.write(model, table, sql, params.values as SqlValue[])
  }

  /**
   * One statement per {@link BATCH_ROWS} records: their values travel as one bound JSON array,
   * which `jsonb_each` turns back into rows. A failing statement is undone as a whole by SQLite,
   * several run in a savepoint.
   */
  async insertMany(model: ModelName, records: readonly StoredRecord[]) {
    const table = this.table(model)
    if (records.length === 0) return
    const rows: SqlValue[][] = []
    const texts: string[] = []
    for (const record of records) {
      const row = table.fields.map(([field, kind]) => toSql(kind, record[field]))
      const text = searchText(model, record)
      row.push(text)
      rows.push(row)
      texts.push(text)
    }
    this.runAll(
      model,
      table,
      chunked(rows, BATCH_ROWS).map((chunk): Write => [table.insertMany, [JSON.stringify(chunk)]]),
    )
    if (table.hasSearch)
      records.forEach((record, i) => {
        this.noteSearch(model, record.id, texts[i]!)
      })
  }

  /**
   * One `UPDATE … FROM jsonb_each(?)` per set of patched fields (a claim has one): each row of the
   * bound JSON array is `[id, value, …]`, joined on the primary key, with `where` checked by the
   * same statement. Several statements run in a savepoint, so a failure undoes all of them.
   */
  async updateEach(model: ModelName, changes: readonly DriverPatch[], where: DriverWhere) {
    const table = this.table(model)
    const search: readonly string[] = models[model].search
    const statements: Write[] = []
    for (const group of fieldGroups(changes, (change) => change.patch).groups) {
      const kinds = group.fields.map((field) => kindOf(model, field))
      if (group.fields.some((field) => search.includes(field))) throw new Error(`updateEach cannot change a searched field of ${model}`)
      const rows = group.changes.map(({ id, patch }) => [id, ...group.fields.map((field, i) => toSql(kinds[i]!, patch[field]))])
      for (const chunk of chunked(rows, BATCH_ROWS)) statements.push(updateEachSql(model, group.fields, JSON.stringify(chunk), where))
    }
    return this.runAll(model, table, statements)
  }

  /** `incrementEach` as `updateEach` runs it: `SET f = f + delta` per set of fields. */
  async incrementEach(model: ModelName, changes: readonly DriverDeltas[]) {
    const table = this.table(model)
    const { groups, empty } = fieldGroups(changes, (change) => change.deltas)
    // Nothing to add: the record counts when it exists, as `increment` answers it.
    const found = empty.filter(({ id }) => this.read(table, id)).length
    const name = quote(model)
    const statements: Write[] = []
    for (const { fields, changes: group } of groups) {
      for (const field of fields) if (kindOf(model, field) !== 'int') throw new Error(`${model}.${field} is not a number field`)
      const sets = fields.map((field, i) => `${quote(field)} = ${name}.${quote(field)} + (j.value ->> ${i + 1})`)
      const rows = group.map(({ id, deltas }) => [id, ...fields.map((field) => deltas[field]!)])
      for (const chunk of chunked(rows, BATCH_ROWS))
        statements.push([
          `UPDATE ${name} SET ${sets.join(', ')} FROM ${JSON_ROWS} AS j WHERE ${name}."id" = j.value ->> 0`,
          [JSON.stringify(chunk)],
        ])
    }
    return found + this.runAll(model, table, statements)
  }

  /** A write whose first parameter is the JSON text of its rows (see `JSON_ROWS`). */
  private writeRows(model: ModelName, table: TableSql, [sql, params]: Write): number {
    return this.write(model, table, sql, params, undefined, [utf8.encode(params[0] as string), ...params.slice(1)])
  }

  /** Runs writes all or none: one alone (SQLite undoes a failed statement), several in a savepoint. */
  private runAll(model: ModelName, table: TableSql, statements: Write[]): number {
    if (statements.length === 0) return 0
    if (statements.length === 1) return this.writeRows(model, table, statements[0]!)
    const mark = this.writes.length
    this.connection.exec('SAVEPOINT affiliate_batch')
    try {
      let changed = 0
      for (const statement of statements) changed += this.writeRows(model, table, statement)
      this.connection.exec('RELEASE affiliate_batch')
      return changed
    } catch (error) {
      this.connection.exec('ROLLBACK TO affiliate_batch; RELEASE affiliate_batch')
      this.writes.length = mark
      throw error
    }
  }

  async delete(model: ModelName, id: string) {
    const table = this.table(model)
    const deleted = this.write(model, table, `DELETE FROM ${quote(model)} WHERE "id" = ?`, [id]) > 0
    if (deleted && table.hasSearch) this.noteSearch(model, id, null)
    return deleted
  }

  async deleteMany(model: ModelName, where: DriverWhere) {
    const table = this.table(model)
    const params = sqlite()
    const conds = conditions(model, where, params)
    const sql = `DELETE FROM ${quote(model)}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`
    const deleted = this.write(model, table, sql, params.values as SqlValue[])
    // Which ids went is not known here: the index forgets the model and rebuilds it on the next search.
    if (deleted > 0 && table.hasSearch) this.noteSearch(model, null, null)
    return deleted
  }
}
