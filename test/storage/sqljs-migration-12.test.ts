import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { campaign } from '../../src/storage/sample-records.js'
import { rewindFile } from '../support/sqljs-rewind.js'

// sql.js migration 12 (reward rules, customers, sales): a file written by version 11 upgrades in
// place; its campaigns get no recurring window and no per-customer limit.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-migration-12-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('a version 11 file gains the campaign reward fields (null) and the customer, sale and refund tables', async () => {
  const file = join(dir, 'db.sqlite')
  const record = campaign({ recurringMonths: 3, maxCommissionsPerCustomer: 2 })
  const first = sqlJsStorage({ persist: fileJournal(file) })
  await first.transaction((tx) => tx.insert('campaigns', record))
  await first.close()
  let tables: unknown[] = []
  await rewindFile(file, 11, (db) => {
    tables =
      db.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('customers', 'sales', 'saleRefunds')")[0]?.values ?? []
  })
  expect(tables).toEqual([])
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  try {
    expect(await storage.transaction((tx) => tx.get('campaigns', record.id))).toStrictEqual({
      ...record,
      recurringMonths: null,
      maxCommissionsPerCustomer: null,
    })
    expect(await storage.transaction((tx) => tx.count('customers', {}))).toBe(0)
    expect(await storage.transaction((tx) => tx.count('sales', {}))).toBe(0)
  } finally {
    await storage.close()
  }
})
