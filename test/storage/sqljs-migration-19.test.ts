import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { rewindFile } from '../support/sqljs-rewind.js'
import { checkMigrated, olderRecords, writeOlder } from './stripe-migration.js'

// sql.js migration 19 (Stripe as it sends events today): a file written by version 18 upgrades in
// place; see stripe-migration.ts for what it must make of the records.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-migration-19-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('a version 18 file: customers attributed, one customer per Stripe customer, commissions carrying their sale', async () => {
  const file = join(dir, 'db.sqlite')
  const records = olderRecords()
  const first = sqlJsStorage({ persist: fileJournal(file) })
  await writeOlder(first, records)
  await first.close()
  await rewindFile(file, 18, (db) => db.exec(`UPDATE customers SET stripeCustomerId = 'cus_dup' WHERE id = '${records.later.id}'`))
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  try {
    await checkMigrated(storage, records)
  } finally {
    await storage.close()
  }
})
