import { fileURLToPath } from 'node:url'
import { columnKind, type FieldSpec } from '../src/domain/describe.js'
import { descriptions } from '../src/domain/descriptions/index.js'
import { models } from '../src/storage/models.js'
import type { ModelName } from '../src/storage/types.js'

// The DDL of a model as its description says it, for SQLite (sql.js) and PostgreSQL: what a new
// migration adds. `npm run ddl -- <model> [field...]` prints the columns of new fields (or, with
// no field, the table of a new model) to paste into both migration lists. Migrations themselves
// stay frozen text, since a released one never changes; test/storage/ddl.test.ts checks that the
// tables they build are the ones these functions describe, so a field and its column cannot drift.

export type Dialect = 'sqlite' | 'postgres'

const TYPES: Record<Dialect, Record<ReturnType<typeof columnKind>, string>> = {
  // STRICT tables: booleans 0/1, lists JSON text (see sqljs/columns.ts).
  sqlite: { text: 'TEXT', int: 'INTEGER', bool: 'INTEGER', list: 'TEXT' },
  // Text compares code points (COLLATE "C"), as JavaScript's `<` does; integers are bigint.
  postgres: { text: 'text COLLATE "C"', int: 'bigint', bool: 'boolean', list: 'text[]' },
}

const name = (dialect: Dialect, identifier: string) => (dialect === 'postgres' ? `"${identifier}"` : identifier)

/** A literal of `value` as the column keeps it. */
function literal(dialect: Dialect, value: unknown): string {
  if (Array.isArray(value)) {
    return dialect === 'sqlite'
      ? `'${JSON.stringify(value).replace(/'/g, "''")}'`
      : `'{${value.map((item) => JSON.stringify(item)).join(',')}}'`
  }
  if (typeof value === 'boolean') return dialect === 'sqlite' ? String(Number(value)) : String(value)
  if (typeof value === 'number') return String(value)
  return `'${String(value ?? '').replace(/'/g, "''")}'`
}

/** What rows stored before the column existed hold: the field's default, else its kind's zero. */
function fill(spec: FieldSpec): unknown {
  if (spec.default !== undefined && spec.default !== null) return spec.default
  return { text: '', timestamp: '', int: 0, money: 0, bool: false, list: [], map: '{}' }[spec.kind]
}

function fieldSpec(model: ModelName, field: string): FieldSpec {
  const spec = (descriptions[model].fields as Record<string, FieldSpec>)[field]
  if (!spec) throw new Error(`${model} has no field ${field}`)
  return spec
}

/** A column's definition: its type, NOT NULL unless nullable, and with `filled` the default that fills existing rows. */
export function columnSql(dialect: Dialect, model: ModelName, field: string, filled = false): string {
  const spec = fieldSpec(model, field)
  const type = `${name(dialect, field)} ${TYPES[dialect][columnKind(spec)]}`
  if (spec.nullable) return type
  return filled ? `${type} NOT NULL DEFAULT ${literal(dialect, fill(spec))}` : `${type} NOT NULL`
}

const table = (dialect: Dialect, model: ModelName, schema: string) => (dialect === 'postgres' ? `${schema}.${name(dialect, model)}` : model)

/** `ALTER TABLE … ADD COLUMN` for new fields of a model (`schema`: PostgreSQL's, as migrations write `${s}`). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: `${s}` is the placeholder the migrations' SQL fills with the schema
export function addColumnsSql(dialect: Dialect, model: ModelName, fields: readonly string[], schema = '${s}'): string {
  return fields
    .map((field) => `ALTER TABLE ${table(dialect, model, schema)} ADD COLUMN ${columnSql(dialect, model, field, true)};`)
    .join('\n')
}

/** Each index a model's look-ups need, as `[name, columns, unique]` (see `models`). */
function indexesOf(model: ModelName): [string, string[], boolean][] {
  const definition = models[model]
  const listed = (fields: readonly string[]) => [...fields, 'createdAt', 'id']
  return [
    [`${model}_created`, ['createdAt', 'id'], false],
    ...definition.indexes.map((fields): [string, string[], boolean] => [`${model}_${fields.join('_')}`, listed(fields), false]),
    ...definition.unique.map((constraint): [string, string[], boolean] => [constraint.name, [...constraint.fields], true]),
    ...definition.ordered.map(({ where, orderBy }): [string, string[], boolean] => [
      `${model}_${[...where, orderBy].join('_')}`,
      [...where, orderBy, 'id'],
      false,
    ]),
  ]
}

/** `CREATE TABLE` of a new model with its search column and every index its look-ups need. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: as above
export function createTableSql(dialect: Dialect, model: ModelName, schema = '${s}'): string {
  const columns = models[model].fields.map(({ name: field }) =>
    field === 'id'
      ? `${name(dialect, 'id')} ${TYPES[dialect].text} PRIMARY KEY${dialect === 'sqlite' ? ' NOT NULL' : ''}`
      : columnSql(dialect, model, field),
  )
  const search = `${name(dialect, '_search')} ${TYPES[dialect].text} NOT NULL`
  const create = `CREATE TABLE ${table(dialect, model, schema)} (\n  ${[...columns, search].join(',\n  ')}\n)${dialect === 'sqlite' ? ' STRICT' : ''};`
  const indexes = indexesOf(model).map(
    ([index, fields, unique]) =>
      `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${index} ON ${table(dialect, model, schema)} (${fields.map((field) => name(dialect, field)).join(', ')});`,
  )
  return [create, ...indexes].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [model, ...fields] = process.argv.slice(2)
  if (!model || !(model in models)) {
    console.error(`usage: npm run ddl -- <model> [field...]; models: ${Object.keys(models).join(', ')}`)
    process.exit(1)
  }
  for (const dialect of ['sqlite', 'postgres'] as const) {
    console.log(`-- ${dialect}`)
    console.log(fields.length ? addColumnsSql(dialect, model as ModelName, fields) : createTableSql(dialect, model as ModelName))
  }
}
