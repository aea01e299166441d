import { models } from '../models.js'
import {
  UniqueViolationError,
  type FindQuery,
  type ModelName,
  type StorageTransaction,
  type Where,
} from '../types.js'
import { fieldsOf, fromSql, kindOf, quote, scalarToSql, searchText, SEARCH_COLUMN, toSql, type ColumnKind } from './columns.js'
import type { Connection } from './connection.js'
import type { SearchChanges } from './search-index.js'
import type { SqlValue } from './sql-js-types.js'

/** A write as run, kept so the file journal can replay it: SQL text and its parameters. */
export type Write = [sql: string, params: SqlValue[]]

interface TableSql {
  fields: [string, ColumnKind][]
  select: string
  insert: string
  hasSearch: boolean
  byId: string
  /** "UNIQUE constraint failed: <columns>" as SQLite words it, to the constraint's name. */
  constraints: Map<string, string>
}

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
    hasSearch: models[model].search.length > 0,
    byId: `${select} WHERE "id" = ?`,
    constraints: new Map(
      models[model].unique.map((constraint) => [
        constraint.fields.map((field) => `${model}.${field as string}`).join(', '),
        constraint.name,
      ]),
    ),
  }
  tableSql.set(model, table)
  return table
}

function decode(table: TableSql, row: readonly SqlValue[]): Record<string, unknown> {
  const record: Record<string, unknown> = {}
  table.fields.forEach(([field, kind], i) => (record[field] = fromSql(kind, row[i] ?? null)))
  return record
}

/** `where` as SQL conditions with their parameters; field names are checked against the model. */
function conditions(model: ModelName, where: Where<ModelName> | undefined, params: SqlValue[]): string[] {
  const out: string[] = []
  for (const [field, value] of Object.entries(where ?? {})) {
    if (value === undefined) continue
    kindOf(model, field)
    const column = quote(field)
    if (value === null) {
      out.push(`${column} IS NULL`)
    } else if (typeof value === 'object') {
      const values = [...new Set(value.in)]
      const present = values.filter((v) => v !== null)
      const parts: string[] = []
      if (present.length) {
        parts.push(`${column} IN (${present.map(() => '?').join(', ')})`)
        params.push(...present.map(scalarToSql))
      }
      if (present.length < values.length) parts.push(`${column} IS NULL`)
      out.push(parts.length ? `(${parts.join(' OR ')})` : '0')
    } else {
      out.push(`${column} = ?`)
      params.push(scalarToSql(value))
    }
  }
  return out
}

function filter(model: ModelName, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>, params: SqlValue[]): string {
  const parts = conditions(model, query.where, params)
  if (query.contains) {
    parts.push(`instr(${SEARCH_COLUMN}, ?) > 0`)
    params.push(query.contains.toLowerCase())
  }
  return parts.length ? ` WHERE ${parts.join(' AND ')}` : ''
}

const countKey = (model: ModelName, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>): string =>
  JSON.stringify([model, query.where ?? {}, query.contains ?? ''])

/**
 * The `_counts` rows that answer a count of this query, as [field, values]: when it has no
 * `contains` and at most one condition, on an indexed field with string values. Null otherwise.
 */
function countedAs(model: ModelName, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>): [string, string[]] | null {
  if (query.contains) return null
  const entries = Object.entries(query.where ?? {}).filter(([, value]) => value !== undefined)
  if (entries.length === 0) return ['', ['']]
  if (entries.length > 1) return null
  const [field, value] = entries[0]!
  if (!models[model].indexes.includes(field as never)) return null
  const values = value !== null && typeof value === 'object' ? [...new Set(value.in)] : [value]
  return values.every((v) => typeof v === 'string') ? [field, values as string[]] : null
}

/**
 * One transaction on a sql.js database. The caller has opened it with BEGIN and commits or rolls
 * back; this class runs the statements, keeps the writes for the journal, and refuses work once
 * `open` is false.
 */
export class SqlJsTransaction implements StorageTransaction {
  open = true
  readonly writes: Write[] = []
  /** What this transaction did to search texts; the search index takes it on commit. */
  readonly searchChanges: SearchChanges = new Map()

  constructor(private readonly connection: Connection) {}

  private table(model: ModelName): TableSql {
    if (!this.open) throw new Error('This transaction has already finished')
    if (!(model in models)) throw new Error(`Unknown model ${model}`)
    return sqlOf(model)
  }

  private write(model: ModelName, table: TableSql, sql: string, params: SqlValue[], id?: string): number {
    let changed: number
    try {
      changed = this.connection.run(sql, params)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      const failed = /UNIQUE constraint failed: (.*)$/.exec(message)?.[1]
      if (failed !== undefined) {
        const constraint = table.constraints.get(failed)
        if (constraint) throw new UniqueViolationError(constraint)
        if (failed === `${model}.id`) throw new Error(`A ${model} record with id ${id} already exists`)
      }
      throw error
    }
    if (changed > 0) {
      this.writes.push([sql, params])
      this.connection.version++
    }
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
  private searchedIds(model: ModelName, table: TableSql, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>, order: string): string[] {
    const params: SqlValue[] = []
    const term = query.contains!.toLowerCase()
    const candidates = table.hasSearch && !this.searchChanges.has(model) ? this.connection.search.matching(model, term) : null
    let sql: string
    if (candidates === null) {
      sql = `SELECT "id" FROM ${quote(model)}${filter(model, query, params)} ORDER BY ${order}`
    } else {
      if (candidates.length === 0) return []
      const conds = conditions(model, query.where, params)
      sql = `SELECT "id" FROM ${quote(model)} WHERE ${[`"id" IN (${candidates.map(() => '?').join(', ')})`, ...conds].join(' AND ')} ORDER BY ${order}`
      params.unshift(...candidates)
    }
    return this.connection.all(sql, params).map((row) => row[0] as string)
  }

  private read(table: TableSql, id: string): Record<string, unknown> | null {
    const row = this.connection.all(table.byId, [id])[0]
    return row ? decode(table, row) : null
  }

  async get(model: ModelName, id: string) {
    return this.read(this.table(model), id) as never
  }

  async find(model: ModelName, query: FindQuery<ModelName>) {
    const table = this.table(model)
    const limit = query.limit ?? -1
    if (query.limit !== undefined && limit <= 0) return [] as never
    const field = query.orderBy?.field ?? 'createdAt'
    kindOf(model, field)
    const direction = (query.orderBy?.direction ?? 'DESC') === 'DESC' ? 'DESC' : 'ASC'
    const order = [...new Set([field, 'id'])].map((f) => `${quote(f)} ${direction}`).join(', ')
    const offset = Math.max(0, query.offset ?? 0)
    if (query.contains) {
      // A searched page has to know every match for its total, and a search mostly matches few, so
      // filling the page would walk them all again: find every matching id once, remember how many
      // there were for the `count` that follows, and read only the page's rows. (A plain filter
      // matches many: its page stops early on the index, and only count walks.)
      const ids = this.searchedIds(model, table, query, order)
      this.connection.lastTotal = { key: countKey(model, query), version: this.connection.version, total: ids.length }
      const page = limit < 0 ? ids.slice(offset) : ids.slice(offset, offset + limit)
      if (page.length === 0) return [] as never
      const rows = this.connection.all(`${table.select} WHERE "id" IN (${page.map(() => '?').join(', ')})`, page)
      const byId = new Map(rows.map((row) => [row[table.fields.findIndex(([f]) => f === 'id')] as string, row]))
      return page.map((id) => decode(table, byId.get(id)!)) as never
    }
    const params: SqlValue[] = []
    const where = filter(model, query, params)
    params.push(limit, offset)
    const rows = this.connection.all(`${table.select}${where} ORDER BY ${order} LIMIT ? OFFSET ?`, params)
    return rows.map((row) => decode(table, row)) as never
  }

  async count(model: ModelName, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>) {
    this.table(model)
    const counted = countedAs(model, query)
    if (counted !== null) {
      const [field, values] = counted
      const sql = `SELECT coalesce(sum(n), 0) FROM _counts WHERE model = ? AND field = ? AND value IN (${values.map(() => '?').join(', ')})`
      return this.connection.all(sql, [model, field, ...values])[0]![0] as number
    }
    const remembered = this.connection.lastTotal
    if (remembered && remembered.version === this.connection.version && remembered.key === countKey(model, query)) return remembered.total
    if (query.contains) return this.searchedIds(model, this.table(model), query, '"id"').length
    const params: SqlValue[] = []
    const where = filter(model, query, params)
    return this.connection.all(`SELECT count(*) FROM ${quote(model)}${where}`, params)[0]![0] as number
  }

  async insert(model: ModelName, record: object) {
    const table = this.table(model)
    const values = record as Record<string, unknown>
    const params = table.fields.map(([field, kind]) => toSql(kind, values[field]))
    const text = searchText(model, values)
    params.push(text)
    this.write(model, table, table.insert, params, values.id as string)
    if (table.hasSearch) this.noteSearch(model, values.id as string, text)
  }

  async update(model: ModelName, id: string, patch: object) {
    const table = this.table(model)
    const current = this.read(table, id)
    if (!current) return null
    const changes = Object.entries(patch).filter(([, value]) => value !== undefined)
    if (changes.length === 0) return current as never
    const sets: string[] = []
    const params: SqlValue[] = []
    for (const [field, value] of changes) {
      sets.push(`${quote(field)} = ?`)
      params.push(toSql(kindOf(model, field), value))
    }
    const next = { ...current, ...Object.fromEntries(changes) }
    let text: string | null = null
    if (table.hasSearch && changes.some(([field]) => models[model].search.includes(field as never))) {
      text = searchText(model, next)
      sets.push(`${SEARCH_COLUMN} = ?`)
      params.push(text)
    }
    params.push(id)
    const changed = this.write(model, table, `UPDATE ${quote(model)} SET ${sets.join(', ')} WHERE "id" = ?`, params)
    if (changed > 0 && text !== null) this.noteSearch(model, id, text)
    return this.read(table, next.id as string) as never
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
    if (sets.length === 0) return this.read(table, id) as never
    params.push(id)
    const changed = this.write(model, table, `UPDATE ${quote(model)} SET ${sets.join(', ')} WHERE "id" = ?`, params)
    return (changed ? this.read(table, id) : null) as never
  }

  async delete(model: ModelName, id: string) {
    const table = this.table(model)
    const deleted = this.write(model, table, `DELETE FROM ${quote(model)} WHERE "id" = ?`, [id]) > 0
    if (deleted && table.hasSearch) this.noteSearch(model, id, null)
    return deleted
  }

  async deleteMany(model: ModelName, where: Where<ModelName>) {
    const table = this.table(model)
    const params: SqlValue[] = []
    const conds = conditions(model, where, params)
    const sql = `DELETE FROM ${quote(model)}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`
    const deleted = this.write(model, table, sql, params)
    // Which ids went is not known here: the index forgets the model and rebuilds it on the next search.
    if (deleted > 0 && table.hasSearch) this.noteSearch(model, null, null)
    return deleted
  }
}
