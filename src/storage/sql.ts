import type { FieldSpec } from '../domain/describe.js'
import { descriptions } from '../domain/descriptions/index.js'
import { kindOf, models } from './models.js'
import { isRange, type DriverQuery, type DriverWhere, type ModelName, type Scalar } from './types.js'

// The SQL both SQL storages share: identifiers, the hidden search column, and `where`, `contains`
// and ORDER BY as SQL, in either dialect. Field names only ever come from the model's fields
// (checked by `kindOf`) and are quoted; every value travels as a parameter.

export type Dialect = 'sqlite' | 'postgres'

export const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`

/**
 * The hidden column holding the lower-cased search fields. `contains` is matched against it after
 * the term is lower-cased the same way, so the match is JavaScript's `toLowerCase()` for every
 * script, whatever the database's own case folding.
 */
export const SEARCH_COLUMN = '_search'

/** Between search fields, so a term cannot match across two of them (sql.js cannot bind NUL). */
const SEARCH_SEPARATOR = '\u001f'

export const searchText = (model: ModelName, record: Record<string, unknown>): string =>
  models[model].search.map((field) => String(record[field] ?? '').toLowerCase()).join(SEARCH_SEPARATOR)

/**
 * Longer sqlite `in` lists are bound as one JSON array (`IN (SELECT value FROM json_each(?))`): the
 * SQL is the same whatever the length, so its prepared statement is reused, where a list of `?` per
 * value makes new SQL (and a prepare) for every length. The tracker's visitor look-ups vary in
 * length with every round: preparing them cost more than the clicks' writes (BENCHMARKS.md, row 8d).
 */
const SQLITE_LIST_LIMIT = 8

/** A value JSON surely carries to SQLite unchanged: a string without surrogates, or a finite number. */
const jsonExact = (value: unknown): boolean =>
  (typeof value === 'string' && !/[\uD800-\uDFFF]/.test(value)) || (typeof value === 'number' && Number.isFinite(value))

/** Parameters of one statement, and how the dialect names them. */
export class Params {
  readonly values: unknown[] = []
  constructor(readonly dialect: Dialect) {}

  /** Adds a value; answers its placeholder. sqlite keeps booleans as 0/1. */
  add(value: unknown): string {
    this.values.push(this.dialect === 'sqlite' && typeof value === 'boolean' ? (value ? 1 : 0) : value)
    return this.dialect === 'sqlite' ? '?' : `$${this.values.length}`
  }
}

export interface ConditionOptions {
  /** The table (as SQL: quoted, or an alias) to name each column with, when the statement joins another. */
  table?: string
  /** The rows are found by id (a join on it): sqlite then writes the other columns as `+"field"`, which no index serves. */
  byId?: boolean
}

/**
 * `where` as SQL conditions, all of which must hold. An `in` of one value is plain equality, which every index serves.
 *
 * When `where` names records by `id`, SQLite is told to find them by the primary key: its other
 * columns are written `+"field"` (the same value, but no index serves it). Without statistics
 * SQLite otherwise guesses that `"payoutId" IS NULL` is as narrow as an id list, walks the
 * `payoutId` index over every unclaimed commission, and a payout run's claims grow with the square
 * of the commissions.
 */
export function conditions(model: ModelName, where: DriverWhere | undefined, params: Params, options: ConditionOptions = {}): string[] {
  const out: string[] = []
  const byId = params.dialect === 'sqlite' && (options.byId ?? where?.id != null)
  const wide = params.dialect === 'sqlite' && !byId && workspaceIsWidest(model, where)
  const qualifier = options.table === undefined ? '' : `${options.table}.`
  for (const field in where) {
    const value = where[field]
    if (value === undefined) continue
    kindOf(model, field)
    const column =
      (byId && field !== 'id') || (wide && field === WORKSPACE) ? `+${qualifier}${quote(field)}` : `${qualifier}${quote(field)}`
    if (value === null) {
      out.push(`${column} IS NULL`)
    } else if (isRange(value)) {
      const bounds: string[] = []
      if (value.gt !== undefined) bounds.push(`${column} > ${params.add(value.gt)}`)
      if (value.gte !== undefined) bounds.push(`${column} >= ${params.add(value.gte)}`)
      if (value.lt !== undefined) bounds.push(`${column} < ${params.add(value.lt)}`)
      if (value.lte !== undefined) bounds.push(`${column} <= ${params.add(value.lte)}`)
      if (bounds.length === 0) throw new TypeError(`the range on ${field} has no bound`)
      // A null field compares as unknown in SQL, so it is in no range, as in the memory storage.
      out.push(...bounds)
    } else if (typeof value === 'object') {
      const distinct = [...new Set<Scalar>(value.in)]
      const present = distinct.filter((v) => v !== null)
      const parts: string[] = []
      if (present.length === 1) parts.push(`${column} = ${params.add(present[0])}`)
      else if (present.length > 1) {
        parts.push(
          params.dialect === 'postgres'
            ? `${column} = ANY(${params.add(present)})`
            : present.length > SQLITE_LIST_LIMIT && present.every(jsonExact)
              ? `${column} IN (SELECT value FROM json_each(${params.add(JSON.stringify(present))}))`
              : `${column} IN (${present.map((v) => params.add(v)).join(', ')})`,
        )
      }
      if (present.length < distinct.length) parts.push(`${column} IS NULL`)
      out.push(parts.length === 0 ? 'FALSE' : parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`)
    } else {
      out.push(`${column} = ${params.add(value)}`)
    }
  }
  return out
}

const WORKSPACE = 'workspaceId'

/** An equality (or `in`) on values that are all present: what an index look-up narrows by. */
const presentEquality = (value: DriverWhere[string]): boolean =>
  value !== undefined &&
  value !== null &&
  (typeof value !== 'object' || (!isRange(value) && value.in.length > 0 && !value.in.includes(null)))

/**
 * Whether SQLite should be kept off the workspace's indexes: `where` names the workspace and also a
 * record it holds (an affiliate, a campaign, a payout: a field an index of its own leads with,
 * compared with present values, and not one of a few values like a status or a flag). A workspace
 * holds every record of its kind, so the other index is the narrower walk; but without statistics
 * SQLite cannot tell, and counting one affiliate's commissions walked all 100k of its workspace's
 * (the admin's affiliate page, 57 ms). A `where` holding a null is left as it is: SQLite takes
 * `IS NULL` for a narrow look-up too (see above), and the workspace's index is the one that keeps
 * it off the null's. PostgreSQL has statistics, the memory storage measures its lists: only SQLite
 * is told, with `+"workspaceId"`, which no index serves.
 */
function workspaceIsWidest(model: ModelName, where: DriverWhere | undefined): boolean {
  if (where === undefined || !presentEquality(where[WORKSPACE])) return false
  if (Object.values(where).some((value) => value === null)) return false
  const { indexes } = models[model]
  const named = (field: string) => presentEquality(where[field])
  const fields: Record<string, FieldSpec> = descriptions[model].fields
  return Object.keys(where).some(
    (field) =>
      field !== WORKSPACE &&
      field !== 'id' &&
      named(field) &&
      fields[field]?.kind !== 'bool' &&
      fields[field]?.values === undefined &&
      indexes.some((index) => index[0] === field),
  )
}

/** `%`, `_` and the escape character itself, escaped for LIKE (whose default escape in PostgreSQL is a backslash). */
export const likeEscape = (term: string): string => term.replace(/[\\%_]/g, (c) => `\\${c}`)

/** The condition `contains` adds: sqlite `instr` (no pattern characters to escape), PostgreSQL LIKE (which pg_trgm serves). */
export function containsCondition(term: string, params: Params): string {
  const lower = term.toLowerCase()
  return params.dialect === 'sqlite'
    ? `instr(${SEARCH_COLUMN}, ${params.add(lower)}) > 0`
    : `${SEARCH_COLUMN} LIKE ${params.add(`%${likeEscape(lower)}%`)}`
}

/** The WHERE clause (with its leading space) of a find or count, or ''. */
export function whereClause(model: ModelName, query: Pick<DriverQuery, 'where' | 'contains'>, params: Params): string {
  const parts = conditions(model, query.where, params)
  if (query.contains) parts.push(containsCondition(query.contains, params))
  return parts.length ? ` WHERE ${parts.join(' AND ')}` : ''
}

/**
 * `field, id`, both in the asked direction (default `createdAt` descending). Nulls sort as the
 * smallest value, as in the memory storage and SQLite: first ascending, last descending.
 * PostgreSQL's default is the opposite, so there nullable fields say so; fields that are never
 * null say nothing, so an index on (…, createdAt, id) still gives the order without a sort.
 */
export function orderBy(model: ModelName, order: DriverQuery['orderBy'], dialect: Dialect): string {
  const field = order?.field ?? 'createdAt'
  kindOf(model, field)
  const direction = (order?.direction ?? 'DESC') === 'DESC' ? 'DESC' : 'ASC'
  const nulls = dialect === 'postgres' ? (direction === 'ASC' ? ' NULLS FIRST' : ' NULLS LAST') : ''
  const nullable = (name: string) => models[model].fields.some((f) => f.name === name && f.nullable)
  return [...new Set([field, 'id'])].map((f) => `${quote(f)} ${direction}${nullable(f) ? nulls : ''}`).join(', ')
}
