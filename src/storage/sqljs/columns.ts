import { models, type ColumnKind } from '../models.js'
import type { ModelName } from '../types.js'
import type { SqlValue } from './sql-js-types.js'

// How records become SQLite values and back. SQLite has no booleans or arrays, so `bool` is 0/1
// and `list` is JSON text; the column kinds (from the records' one description) say how to turn
// them back, so records round-trip exactly.

/** A model's fields with their column kinds, in a fixed order. */
export function fieldsOf(model: ModelName): [string, ColumnKind][] {
  return models[model].fields.map((field) => [field.name, field.kind])
}

/** A record value as bound to SQLite. */
export function toSql(kind: ColumnKind, value: unknown): SqlValue {
  if (value === null || value === undefined) return null
  switch (kind) {
    case 'bool':
      return value ? 1 : 0
    case 'list':
      return JSON.stringify(value)
    default:
      return value as SqlValue
  }
}

/** A stored value back as the record holds it. */
export function fromSql(kind: ColumnKind, value: SqlValue): unknown {
  if (value === null) return null
  switch (kind) {
    case 'bool':
      return value === 1
    case 'list':
      return JSON.parse(value as string)
    default:
      return value
  }
}
