import { models } from '../../src/storage/models.js'
import { fieldsOf, kindOf, quote, searchText, SEARCH_COLUMN, type ColumnKind } from '../../src/storage/sqljs/columns.js'
import type { FindQuery, ModelName, Scalar, Where } from '../../src/storage/types.js'

// Turns storage calls into parameterised SQL. Field names only ever come from the model's column
// list (checked by `kindOf`) and are quoted; every value travels as a parameter.

export { searchText, SEARCH_COLUMN }

/** A statement and its parameters, as `pg` takes them. */
export interface Statement {
  text: string
  values: unknown[]
}

/** What a table's statements share; built once per (schema, model). */
export interface TableSql {
  model: ModelName
  /** `"schema"."table"`. */
  name: string
  fields: [string, ColumnKind][]
  columns: string
  byId: string
  insert: string
  /** Unique constraints by name, with their fields: to tell which one a conflicting insert hit. */
  unique: { name: string; fields: string[] }[]
  hasSearch: boolean
}

/**
 * Fields that may hold null, per model. Only ordering needs to know: `ORDER BY f NULLS FIRST` on a
 * column that is never null would keep PostgreSQL from reading a (createdAt, id) index in order.
 */
export const nullable: { [M in ModelName]: readonly string[] } = {
  campaigns: [],
  affiliates: ['payoutMethod', 'details'],
  links: ['userId'],
  commissions: ['remarks', 'payoutDate', 'name', 'chargeId', 'invoiceId', 'stripeSubscriptionId', 'linkId', 'referralCode'],
  apiKeys: ['revokedAt'],
  idempotency: [],
}

export function tableSql(schema: string, model: ModelName): TableSql {
  const fields = fieldsOf(model)
  const name = `${quote(schema)}.${quote(model)}`
  const columns = fields.map(([field]) => quote(field)).join(', ')
  const placeholders = [...fields, SEARCH_COLUMN].map((_, i) => `$${i + 1}`).join(', ')
  return {
    model,
    name,
    fields,
    columns,
    byId: `SELECT ${columns} FROM ${name} WHERE "id" = $1`,
    // A collision answers no row instead of aborting the transaction, so work that catches the
    // UniqueViolationError can go on (see PostgresTransaction.insert).
    insert: `INSERT INTO ${name} (${columns}, ${SEARCH_COLUMN}) VALUES (${placeholders}) ON CONFLICT DO NOTHING RETURNING "id"`,
    unique: models[model].unique.map((constraint) => ({ name: constraint.name, fields: [...constraint.fields] as string[] })),
    hasSearch: models[model].search.length > 0,
  }
}

/** A record value as bound to PostgreSQL: booleans, bigints and text[] take JavaScript values as they are. */
export const toSql = (value: unknown): unknown => (value === undefined ? null : value)

/** A row as `pg` answers it, back to the record: every field, in the model's order, and nothing else. */
export function decode(table: TableSql, row: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = {}
  for (const [field] of table.fields) record[field] = row[field] ?? null
  return record
}

/** `where` as SQL conditions; pushes the parameters. An `in` of one value is plain equality, which every index serves. */
export function conditions(model: ModelName, where: Where<ModelName> | undefined, values: unknown[]): string[] {
  const out: string[] = []
  for (const [field, value] of Object.entries(where ?? {})) {
    if (value === undefined) continue
    kindOf(model, field)
    const column = quote(field)
    if (value === null) {
      out.push(`${column} IS NULL`)
    } else if (typeof value === 'object') {
      const distinct = [...new Set<Scalar>(value.in)]
      const present = distinct.filter((v) => v !== null)
      const parts: string[] = []
      if (present.length === 1) {
        values.push(present[0])
        parts.push(`${column} = $${values.length}`)
      } else if (present.length > 1) {
        values.push(present)
        parts.push(`${column} = ANY($${values.length})`)
      }
      if (present.length < distinct.length) parts.push(`${column} IS NULL`)
      out.push(parts.length === 0 ? 'FALSE' : parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`)
    } else {
      values.push(value)
      out.push(`${column} = $${values.length}`)
    }
  }
  return out
}

/** `%`, `_` and the escape character itself, escaped for LIKE (whose default escape is a backslash). */
export const likeEscape = (term: string): string => term.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * The WHERE clause of a find or count. `contains` is matched against the hidden search column,
 * which holds the search fields lower-cased by JavaScript (as the memory storage does), so the
 * term is lower-cased the same way: case folding beyond ASCII agrees with `toLowerCase()`
 * whatever the database's collation. A pg_trgm index serves the LIKE when the extension exists.
 */
export function filter(model: ModelName, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>, values: unknown[]): string {
  const parts = conditions(model, query.where, values)
  if (query.contains) {
    values.push(`%${likeEscape(query.contains.toLowerCase())}%`)
    parts.push(`${SEARCH_COLUMN} LIKE $${values.length}`)
  }
  return parts.length ? ` WHERE ${parts.join(' AND ')}` : ''
}

/**
 * `ORDER BY field, id`, both in the asked direction. Nulls sort as the smallest value, as in the
 * memory and sql.js storages: first ascending, last descending. PostgreSQL's default is the
 * opposite, so nullable fields say so; fields that are never null say nothing, so an index on
 * (…, createdAt, id) still gives the order without a sort.
 */
export function orderBy(model: ModelName, order: FindQuery<ModelName>['orderBy']): string {
  const field = order?.field ?? 'createdAt'
  kindOf(model, field)
  const direction = (order?.direction ?? 'DESC') === 'DESC' ? 'DESC' : 'ASC'
  const nulls = direction === 'ASC' ? ' NULLS FIRST' : ' NULLS LAST'
  return [...new Set([field, 'id'])]
    .map((f) => `${quote(f)} ${direction}${nullable[model].includes(f) ? nulls : ''}`)
    .join(', ')
}

/** The SELECT behind `find`, or null when the query asks for no rows (`limit: 0`). */
export function findStatement(table: TableSql, query: FindQuery<ModelName>): Statement | null {
  if (query.limit !== undefined && query.limit <= 0) return null
  const values: unknown[] = []
  let text = `SELECT ${table.columns} FROM ${table.name}${filter(table.model, query, values)} ORDER BY ${orderBy(table.model, query.orderBy)}`
  if (query.limit !== undefined) {
    values.push(query.limit)
    text += ` LIMIT $${values.length}`
  }
  const offset = Math.max(0, query.offset ?? 0)
  if (offset > 0) {
    values.push(offset)
    text += ` OFFSET $${values.length}`
  }
  return { text, values }
}

export function countStatement(table: TableSql, query: Pick<FindQuery<ModelName>, 'where' | 'contains'>): Statement {
  const values: unknown[] = []
  return { text: `SELECT count(*) AS "n" FROM ${table.name}${filter(table.model, query, values)}`, values }
}

/** `UPDATE … SET f = f + $n …` for the given deltas, answering the row; null when no delta is given. */
export function incrementStatement(table: TableSql, id: string, deltas: Record<string, number | undefined>): Statement | null {
  const values: unknown[] = []
  const sets: string[] = []
  for (const [field, delta] of Object.entries(deltas)) {
    if (delta === undefined) continue
    if (kindOf(table.model, field) !== 'int') throw new Error(`${table.model}.${field} is not a number field`)
    if (!Number.isSafeInteger(delta)) throw new RangeError(`${table.model}.${field}: a delta must be a safe integer, got ${delta}`)
    values.push(delta)
    sets.push(`${quote(field)} = ${quote(field)} + $${values.length}`)
  }
  if (sets.length === 0) return null
  values.push(id)
  return { text: `UPDATE ${table.name} SET ${sets.join(', ')} WHERE "id" = $${values.length} RETURNING ${table.columns}`, values }
}

/** `UPDATE … SET f = $n …` answering the row; `search` is the new search text when a search field changes. */
export function updateStatement(table: TableSql, id: string, changes: [string, unknown][], search: string | null): Statement {
  const values: unknown[] = []
  const sets = changes.map(([field, value]) => {
    kindOf(table.model, field)
    values.push(toSql(value))
    return `${quote(field)} = $${values.length}`
  })
  if (search !== null) {
    values.push(search)
    sets.push(`${SEARCH_COLUMN} = $${values.length}`)
  }
  values.push(id)
  return { text: `UPDATE ${table.name} SET ${sets.join(', ')} WHERE "id" = $${values.length} RETURNING ${table.columns}`, values }
}

export function deleteManyStatement(table: TableSql, where: Where<ModelName>): Statement {
  const values: unknown[] = []
  const conds = conditions(table.model, where, values)
  return { text: `DELETE FROM ${table.name}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`, values }
}
