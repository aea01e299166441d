import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { addColumnsSql, createTableSql } from '../../scripts/ddl.js'
import { modelNames } from '../../src/storage/models.js'
import type { InitSqlJs, SqlJsDatabase } from '../../src/storage/sqljs/sql-js-types.js'
import { migrations } from '../../src/storage/sqljs/migrations.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

// The tables the frozen migrations build are the ones the models' descriptions say (scripts/ddl.ts
// writes the DDL of new fields and models from them): the same columns, types and nullability. A
// field described one way and migrated another fails here. (That each look-up is served by an index
// is test/storage/sqljs-schema.test.ts's and postgres-plans.test.ts's.)

const loadSqlJs = async () => ((await import('sql.js' as string)) as { default: InitSqlJs }).default()

describe('SQLite (sql.js)', () => {
  let migrated: SqlJsDatabase
  let derived: SqlJsDatabase
  const rows = (db: SqlJsDatabase, sql: string) => db.exec(sql)[0]?.values ?? []
  const columns = (db: SqlJsDatabase, table: string) =>
    rows(db, `PRAGMA table_info("${table}")`)
      .map(([, name, type, notNull]) => `${name as string} ${type as string}${notNull ? ' NOT NULL' : ''}`)
      .sort()

  beforeAll(async () => {
    const SQL = await loadSqlJs()
    migrated = new SQL.Database()
    // `_counts` and the triggers filling it are sql.js's own, outside any model: made as migration 4 does.
    for (const migration of migrations) migrated.exec(migration.sql)
    derived = new SQL.Database()
    for (const model of modelNames) derived.exec(createTableSql('sqlite', model))
  })
  afterAll(() => {
    migrated.close()
    derived.close()
  })

  it.each(modelNames)('%s: the migrated table has the columns the description says', (model) => {
    expect(columns(migrated, model)).toEqual(columns(derived, model))
  })

  it("adds a new field's column with the default that fills existing rows", async () => {
    expect(addColumnsSql('sqlite', 'campaigns', ['currency', 'recurringMonths', 'allowedUrlParameters', 'isDefault'])).toBe(
      [
        "ALTER TABLE campaigns ADD COLUMN currency TEXT NOT NULL DEFAULT 'USD';",
        'ALTER TABLE campaigns ADD COLUMN recurringMonths INTEGER;',
        `ALTER TABLE campaigns ADD COLUMN allowedUrlParameters TEXT NOT NULL DEFAULT '["ref"]';`,
        'ALTER TABLE campaigns ADD COLUMN isDefault INTEGER NOT NULL DEFAULT 0;',
      ].join('\n'),
    )
    expect(addColumnsSql('postgres', 'campaigns', ['allowedUrlParameters', 'isDefault'], 's')).toBe(
      `ALTER TABLE s."campaigns" ADD COLUMN "allowedUrlParameters" text[] NOT NULL DEFAULT '{"ref"}';\nALTER TABLE s."campaigns" ADD COLUMN "isDefault" boolean NOT NULL DEFAULT false;`,
    )
  })
})

describe.skipIf(!postgresUrl)(needs('PostgreSQL', POSTGRES_VAR), () => {
  const [migratedSchema, derivedSchema] = [uniqueName('ddl_migrated'), uniqueName('ddl_derived')]
  let pool: Awaited<ReturnType<typeof testPool>>
  const columns = async (schema: string, table: string) =>
    (
      await pool.query<{ name: string; type: string; nullable: string; collation: string | null }>(
        `SELECT column_name AS name, data_type AS type, is_nullable AS nullable, collation_name AS collation
           FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`,
        [schema, table],
      )
    ).rows
      .map((c) => `${c.name} ${c.type}${c.collation ? ` ${c.collation}` : ''}${c.nullable === 'NO' ? ' NOT NULL' : ''}`)
      .sort()

  beforeAll(async () => {
    pool = await testPool(2)
    await postgresStorage({ pool, schema: migratedSchema }).ready()
    await pool.query(`CREATE SCHEMA "${derivedSchema}"`)
    for (const model of modelNames) await pool.query(createTableSql('postgres', model, `"${derivedSchema}"`))
  })
  afterAll(async () => {
    await dropSchema(pool, migratedSchema)
    await dropSchema(pool, derivedSchema)
    await pool.end()
  })

  it.each(modelNames)('%s: the migrated table has the columns the description says', async (model) => {
    expect(await columns(migratedSchema, model)).toEqual(await columns(derivedSchema, model))
  })
})
