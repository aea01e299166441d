import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileJournal, frame } from '../../adapters/node/file-journal.js'
import { exportRecords, sqlJsStorage } from '../../src/index.js'
import { click } from '../../src/storage/sample-records.js'
import { fillProgram } from '../support/records-program.js'

// `fileJournal(path, { readOnly: true })`: a still copy of a file another storage is serving (what
// `affiliate-service export` reads while `npm start` runs), never written. (Beside another process
// writing and folding its journal: test/programs/records-cli.test.ts.)

const dir = mkdtempSync(join(tmpdir(), 'affiliate-snapshot-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const clock = { now: () => Date.parse('2026-03-01T12:00:00.000Z') }
const lines = async (storage: Parameters<typeof exportRecords>[0]) => {
  const out: string[] = []
  for await (const line of exportRecords(storage, { clock })) out.push(line)
  return out
}

describe('a read-only snapshot of a served sql.js file', () => {
  it('holds every acknowledged write made before it opened and none after, refuses writes, and changes nothing on disk', async () => {
    const file = join(dir, 'served.sqlite')
    const served = sqlJsStorage({ persist: fileJournal(file) })
    try {
      await fillProgram(served)
      const before = await lines(served)
      const snapshot = sqlJsStorage({ persist: fileJournal(file, { readOnly: true }) })
      await snapshot.ready()
      const files = readdirSync(dir).sort()
      const lock = readFileSync(`${file}.lock`, 'utf8')
      await served.transaction((tx) => tx.insert('clicks', click()))
      expect(await lines(snapshot)).toEqual(before)
      await expect(snapshot.transaction((tx) => tx.insert('clicks', click()))).rejects.toThrow(
        'This database was opened read-only (a snapshot of the file): it takes no writes',
      )
      await snapshot.close()
      expect(readdirSync(dir).sort()).toEqual(files)
      expect(readFileSync(`${file}.lock`, 'utf8')).toBe(lock)
      expect(await served.transaction((tx) => tx.count('clicks', {}))).toBe(JSON.parse(before.at(-1)!).models.clicks.count + 1)
    } finally {
      await served.close()
    }
  })

  it('reads again, then refuses, a journal whose segment ends mid-record with data after it (a gap)', async () => {
    const file = join(dir, 'gap.sqlite')
    const served = sqlJsStorage({ persist: fileJournal(file) })
    await served.transaction((tx) => tx.insert('clicks', click()))
    await served.close()
    const record = frame(new TextEncoder().encode('{"seq":2,"writes":[]}'))
    writeFileSync(`${file}.journal-7`, record.subarray(0, record.length - 3))
    writeFileSync(`${file}.journal-8`, record)
    await expect(sqlJsStorage({ persist: fileJournal(file, { readOnly: true }) }).ready()).rejects.toThrow(
      `${file}: a journal segment ends in a partial record with data after it in every read (20 reads): it is damaged, or being written too fast to copy`,
    )
  })

  it('reads a file of schema version 1 with its journal, upgraded in memory alone, as opening it for writing does', async () => {
    const fixtures = join(import.meta.dirname, '..', 'fixtures')
    for (const name of ['sqljs-v1.sqlite', 'sqljs-v1.sqlite.journal-1']) copyFileSync(join(fixtures, name), join(dir, name))
    const file = join(dir, 'sqljs-v1.sqlite')
    const bytes = readFileSync(file)
    const snapshot = sqlJsStorage({ persist: fileJournal(file, { readOnly: true }) })
    const read = await lines(snapshot)
    await snapshot.close()
    // The migrations and the replay wrote pages, past the file's end too: in memory only.
    expect(readFileSync(file).equals(bytes)).toBe(true)
    expect(readdirSync(dir).filter((name) => name.startsWith('sqljs-v1'))).toEqual(['sqljs-v1.sqlite', 'sqljs-v1.sqlite.journal-1'])
    const upgraded = sqlJsStorage({ persist: fileJournal(file) })
    try {
      expect(read).toEqual(await lines(upgraded))
      expect(read.length).toBeGreaterThan(3)
    } finally {
      await upgraded.close()
    }
  })

  it('refuses a file that does not exist, plainly', async () => {
    const missing = join(dir, 'nothing-here.sqlite')
    await expect(sqlJsStorage({ persist: fileJournal(missing, { readOnly: true }) }).ready()).rejects.toThrow(
      `${missing} does not exist: there is no database to read`,
    )
    expect(readdirSync(dir)).not.toContain('nothing-here.sqlite')
  })
})
