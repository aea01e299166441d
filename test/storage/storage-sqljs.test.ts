import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { describeStorageConformance } from '../../src/testing/index.js'
import { fileJournal } from '../../adapters/node/file-journal.js'

const dir = mkdtempSync(join(tmpdir(), 'affiliate-conformance-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

describeStorageConformance('sql.js in memory', () => sqlJsStorage())
describeStorageConformance('sql.js in a file', () => sqlJsStorage({ persist: fileJournal(join(dir, `db-${++files}.sqlite`)) }))
describeStorageConformance('sql.js with load/save', () => {
  let saved: Uint8Array | null = null
  return sqlJsStorage({ load: async () => saved, save: async (bytes) => void (saved = bytes) })
})
