import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { models, modelNames } from '../../src/storage/models.js'
import { conditions, Params } from '../../src/storage/sql.js'
import type { InitSqlJs, SqlJsDatabase } from '../../src/storage/sqljs/sql-js-types.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { updateEachSql } from '../../src/storage/sqljs/transaction.js'
import { fileJournal } from '../../adapters/node/file-journal.js'

// The schema the migrations build must serve the models: a column per field, an index per
// look-up field (ordered for the default list order), a unique index per constraint.
const dir = mkdtempSync(join(tmpdir(), 'affiliate-schema-'))
let db: SqlJsDatabase
beforeAll(async () => {
  const file = join(dir, 'schema.sqlite')
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  await storage.ready()
  await storage.close()
  const SQL = await ((await import('sql.js' as string)) as { default: InitSqlJs }).default()
  db = new SQL.Database(readFileSync(file))
})
afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const rows = (sql: string) => db.exec(sql)[0]?.values ?? []
const indexes = (table: string) =>
  rows(`PRAGMA index_list("${table}")`).map(([, name, unique]) => ({
    name: name as string,
    unique: unique === 1,
    columns: rows(`PRAGMA index_info("${name as string}")`).map((row) => row[2] as string),
  }))
const plan = (sql: string) =>
  rows(`EXPLAIN QUERY PLAN ${sql}`)
    .map((row) => row[3] as string)
    .join(' | ')

describe.each(modelNames)('the %s table', (model) => {
  it('has a column for every field of the record type', () => {
    const present = rows(`PRAGMA table_info("${model}")`).map((row) => row[1] as string)
    expect(present.sort()).toEqual([...models[model].fields.map((field) => field.name), '_search'].sort())
  })

  it('has a unique index, named as the constraint, for each unique constraint', () => {
    for (const constraint of models[model].unique) {
      const index = indexes(model).find((candidate) => candidate.name === constraint.name)
      expect(index, constraint.name).toMatchObject({ unique: true, columns: constraint.fields })
    }
  })

  it('answers a look-up by each index of the model through an index, in list order without sorting', () => {
    for (const fields of models[model].indexes) {
      const where = fields.map((field) => `"${field}" = 'x'`).join(' AND ')
      const query = plan(`SELECT * FROM "${model}" WHERE ${where} ORDER BY "createdAt" DESC, "id" DESC LIMIT 10`)
      expect(query, fields.join()).toMatch(/USING (COVERING )?INDEX/)
      const unique = models[model].unique.some((constraint) => constraint.fields.join() === fields.join())
      if (!unique) expect(query, fields.join()).not.toContain('TEMP B-TREE')
    }
    // Click records are never listed by time: their ids are time-ordered, and pruning walks them in
    // id order (migration 11 dropped the index on createdAt). Every other model's list is served in order.
    const listOrder = model === 'clicks' ? '"id" ASC' : '"createdAt" DESC, "id" DESC'
    expect(plan(`SELECT * FROM "${model}" ORDER BY ${listOrder} LIMIT 10`)).not.toContain('TEMP B-TREE')
  })
})

it('serves each ordered list of the models from an index, without sorting', () => {
  const lists = modelNames.flatMap((model) => models[model].ordered.map((list) => [model, list] as const))
  expect(lists.length).toBeGreaterThan(0)
  for (const [model, { where, orderBy }] of lists) {
    const conds = where.map((field) => `"${field}" = 'x'`).join(' AND ')
    for (const direction of ['DESC', 'ASC']) {
      const query = plan(`SELECT * FROM "${model}" WHERE ${conds} ORDER BY "${orderBy}" ${direction}, "id" ${direction} LIMIT 5`)
      expect(query, `${model} by ${orderBy} ${direction}`).toMatch(/USING (COVERING )?INDEX/)
      expect(query, `${model} by ${orderBy} ${direction}`).not.toContain('TEMP B-TREE')
    }
  }
})

it("counts and lists one affiliate's commissions of a workspace through the affiliate's index, not the workspace's", () => {
  const sql = (where: Record<string, string | null>, tail = '') => {
    const params = new Params('sqlite')
    return plan(
      `SELECT count(*) FROM "commissions" WHERE ${conditions('commissions', where, params).join(' AND ')}${tail}`.replace(/\?/g, "'x'"),
    )
  }
  const narrow: Record<string, string>[] = [
    { workspaceId: 'w', affiliateId: 'a' },
    { workspaceId: 'w', affiliateId: 'a', kind: 'sale' },
    { workspaceId: 'w', status: 'paid', campaignId: 'c' },
  ]
  for (const where of narrow) {
    const query = sql(where)
    expect(query, JSON.stringify(where)).toMatch(/USING (COVERING )?INDEX commissions_(affiliateId|campaignId)/)
  }
  // The workspace's own indexes serve a status or a kind; with a null (a payout run's unclaimed), the workspace's status index stays the one used.
  expect(sql({ workspaceId: 'w', status: 'pending' })).toContain('commissions_workspaceId_status')
  expect(sql({ workspaceId: 'w', kind: 'clawback' })).toContain('commissions_workspaceId_kind')
  expect(sql({ workspaceId: 'w', status: 'pending', payoutId: null, campaignId: 'c' })).toContain('commissions_workspaceId_status')
  // A status, a flag or a null is no narrower than the workspace.
  expect(conditions('commissions', { workspaceId: 'w', payoutId: null }, new Params('sqlite'))).toEqual([
    '"workspaceId" = ?',
    '"payoutId" IS NULL',
  ])
  expect(conditions('affiliates', { workspaceId: 'w', isBanned: true }, new Params('sqlite'))).toEqual([
    '"workspaceId" = ?',
    '"isBanned" = ?',
  ])
  expect(conditions('affiliates', { workspaceId: 'w', campaignId: 'c' }, new Params('sqlite'))).toEqual([
    '+"workspaceId" = ?',
    '"campaignId" = ?',
  ])
  expect(conditions('affiliates', { workspaceId: 'w', campaignId: 'c' }, new Params('postgres'))).toEqual([
    '"workspaceId" = $1',
    '"campaignId" = $2',
  ])
})

it("a payout run's claim finds its commissions by primary key, not by the unclaimed ones' payoutId index", () => {
  const params = new Params('sqlite')
  const ids = Array.from({ length: 500 }, (_, i) => `id-${i}`)
  const where = conditions('commissions', { id: { in: ids }, status: 'pending', payoutId: null }, params).join(' AND ')
  const query = plan(`UPDATE "commissions" SET "status" = 'processing' WHERE ${where}`.replace(/\?/g, "'x'"))
  expect(query).toMatch(/USING (INTEGER )?PRIMARY KEY|USING INDEX sqlite_autoindex_commissions_1/)
  expect(query).not.toContain('commissions_payoutId')
})

it("a payout run's batched claim (updateEach) joins its rows on the primary key and walks no index of the guard", () => {
  const [sql] = updateEachSql('commissions', ['status', 'payoutId', 'updatedAt'], '[]', { status: 'pending', payoutId: null })
  const query = plan(sql.replace(/\?/g, "'[]'"))
  expect(query).toMatch(/USING (INTEGER )?PRIMARY KEY|USING INDEX sqlite_autoindex_commissions_1/)
  expect(query).not.toContain('commissions_payoutId')
  expect(query).not.toContain('commissions_workspaceId_status')
  expect(query).not.toMatch(/SCAN commissions/)
})

it('prunes click records by a range of their time-ordered ids through the primary key, without sorting', () => {
  const params = new Params('sqlite')
  const where = conditions('clicks', { id: { lt: 'x' }, createdAt: { lt: 'x' } }, params).join(' AND ')
  const query = plan(`SELECT * FROM "clicks" WHERE ${where} ORDER BY "id" ASC LIMIT 500`.replace(/\?/g, "'x'"))
  expect(query).toMatch(/SEARCH clicks USING PRIMARY KEY \(id<\?\)/)
  expect(query).not.toContain('TEMP B-TREE')
})
