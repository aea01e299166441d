import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { raceSuite } from '../support/race-suite.js'
import { fileJournal } from '../../adapters/node/file-journal.js'

// The suite lives in support/race-suite.ts so other storages' test files can run it too.
export { raceSuite }

raceSuite('memory storage', () => memoryStorage())
raceSuite('sql.js storage (in memory)', () => sqlJsStorage())

const dir = mkdtempSync(join(tmpdir(), 'affiliate-races-'))
const opened: Storage[] = []
let files = 0
afterAll(async () => {
  await Promise.all(opened.map((storage) => storage.close?.()))
  rmSync(dir, { recursive: true, force: true })
})
raceSuite('sql.js storage (file, durable)', () => {
  const storage = sqlJsStorage({ persist: fileJournal(join(dir, `races-${++files}.sqlite`)) })
  opened.push(storage)
  return storage
})
