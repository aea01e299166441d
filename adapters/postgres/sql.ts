import { kindOf, models, type ColumnKind } from '../../src/storage/models.js'
import { conditions, orderBy, Params, quote, searchText, SEARCH_COLUMN, whereClause } from '../../src/storage/sql.js'
import type { DriverQuery, DriverWhere, ModelName, StoredRecord } from '../../src/storage/types.js'

// Turns storage calls into parameterised SQL, through the SQL builder both SQL storages share
// (PostgreSQL dialect). Field names only ever come from the model's fields (checked by `kindOf`)
// and are quoted; every value travels as a parameter.

export { quote, searchText, SEARCH_COLUMN }

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

export function tableSql(schema: string, model: ModelName): TableSql {
  const fields: [string, ColumnKind][] = models[model].fields.map((field) => [field.name, field.kind])
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
export function decode(table: TableSql, row: Record<string, unknown>): StoredRecord {
  const record: Record<string, unknown> = {}
  for (const [field] of table.fields) record[field] = row[field] ?? null
  return record as StoredRecord
}

/** The SELECT behind `find`, or null when the query asks for no rows (`limit: 0`). */
export function findStatement(table: TableSql, query: DriverQuery, columns: string = table.columns): Statement | null {
  if (query.limit !== undefined && query.limit <= 0) return null
  const params = new Params('postgres')
  let text = `SELECT ${columns} FROM ${table.name}${whereClause(table.model, query, params)} ORDER BY ${orderBy(table.model, query.orderBy, 'postgres')}`
  if (query.limit !== undefined) text += ` LIMIT ${params.add(query.limit)}`
  const offset = Math.max(0, query.offset ?? 0)
  if (offset > 0) text += ` OFFSET ${params.add(offset)}`
  return { text, values: params.values }
}

export function countStatement(table: TableSql, query: Pick<DriverQuery, 'where' | 'contains'>): Statement {
  const params = new Params('postgres')
  return { text: `SELECT count(*) AS "n" FROM ${table.name}${whereClause(table.model, query, params)}`, values: params.values }
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

export function deleteManyStatement(table: TableSql, where: DriverWhere): Statement {
  const params = new Params('postgres')
  const conds = conditions(table.model, where, params)
  return { text: `DELETE FROM ${table.name}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`, values: params.values }
}

/** `UPDATE … SET f = $n … WHERE …` over every row matching `where`. */
export function updateManyStatement(table: TableSql, where: DriverWhere, changes: [string, unknown][]): Statement {
  const params = new Params('postgres')
  const sets = changes.map(([field, value]) => {
    kindOf(table.model, field)
    return `${quote(field)} = ${params.add(toSql(value))}`
  })
  const conds = conditions(table.model, where, params)
  return { text: `UPDATE ${table.name} SET ${sets.join(', ')}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`, values: params.values }
}

/** Rows per statement of a batch: one bound JSON document each, so a statement stays a few MB. */
export const BATCH_ROWS = 5000

/** The rows of a bound JSON array of objects named by column, typed as the table's own rows. */
const rowsOf = (table: TableSql, param: string): string => `jsonb_populate_recordset(NULL::${table.name}, ${param}::jsonb)`

/** `INSERT … SELECT` of every record (as JSON objects by field, with the search text), in one statement. */
export function insertManyStatement(table: TableSql, records: readonly StoredRecord[]): Statement {
  const rows = records.map((record) => {
    const row: Record<string, unknown> = {}
    for (const [field] of table.fields) row[field] = toSql(record[field])
    row[SEARCH_COLUMN] = searchText(table.model, record)
    return row
  })
  const columns = `${table.columns}, ${SEARCH_COLUMN}`
  return { text: `INSERT INTO ${table.name} (${columns}) SELECT ${columns} FROM ${rowsOf(table, '$1')}`, values: [JSON.stringify(rows)] }
}

/**
 * `UPDATE … FROM` the bound rows (`{ id, field: value, … }`, the same fields in each), joined on
 * the primary key, each row setting `fields`, where `where` still holds; `deltas` adds instead of setting.
 */
export function updateEachStatement(
  table: TableSql,
  fields: readonly string[],
  rows: readonly Record<string, unknown>[],
  where: DriverWhere,
  deltas = false,
): Statement {
  const params = new Params('postgres')
  const source = rowsOf(table, params.add(JSON.stringify(rows)))
  const sets = fields.map((field) => {
    const kind = kindOf(table.model, field)
    if (deltas && kind !== 'int') throw new Error(`${table.model}.${field} is not a number field`)
    return deltas ? `${quote(field)} = t.${quote(field)} + j.${quote(field)}` : `${quote(field)} = j.${quote(field)}`
  })
  const conds = conditions(table.model, where, params, { table: 't' })
  return {
    text: `UPDATE ${table.name} AS t SET ${sets.join(', ')} FROM ${source} AS j WHERE ${['t."id" = j."id"', ...conds].join(' AND ')}`,
    values: params.values,
  }
}
