import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { exportRecords, importRecords, memoryStorage, RecordsImportError, sqlJsStorage, type Storage } from '../../src/index.js'
import { modelNames } from '../../src/storage/models.js'
import type { ModelName, StorageTransaction } from '../../src/storage/types.js'
import { fillProgram } from '../support/records-program.js'

// What an import refuses, and what it leaves behind when it fails half-way: an empty storage, or
// a message naming exactly the records still to drop.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-import-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const fileStorage = async () => {
  const storage = sqlJsStorage({ persist: fileJournal(join(dir, `db-${++files}.sqlite`)) })
  await storage.ready()
  return storage
}

let backup: string[]
beforeAll(async () => {
  const source = memoryStorage()
  await fillProgram(source)
  backup = []
  for await (const line of exportRecords(source)) backup.push(line)
})

/** Every model's record count, those with none left out. */
async function held(storage: Storage): Promise<Partial<Record<ModelName, number>>> {
  const out: Partial<Record<ModelName, number>> = {}
  for (const model of modelNames) {
    const count = await storage.transaction((tx) => tx.count(model, {}))
    if (count > 0) out[model] = count
  }
  return out
}

const failure = async (promise: Promise<unknown>): Promise<RecordsImportError> => {
  const error = await promise.then(
    () => null,
    (error: unknown) => error,
  )
  expect(error).toBeInstanceOf(RecordsImportError)
  return error as RecordsImportError
}

/**
 * A storage whose `insertMany` throws on its `failAt`-th call (a disk that fills up half-way) and
 * whose `deleteMany` throws for the models in `undeletable` (the clean-up failing too).
 */
function failing(storage: Storage, options: { failAt: number; undeletable?: ModelName[]; inserted?: number[] }): Storage {
  let inserts = 0
  const wrap = (tx: StorageTransaction): StorageTransaction =>
    new Proxy(tx, {
      get(target, property) {
        if (property === 'insertMany') {
          return (async (model, records) => {
            if (++inserts === options.failAt) throw new Error('No space left on device')
            await target.insertMany(model, records)
            options.inserted?.push(records.length)
          }) satisfies StorageTransaction['insertMany']
        }
        if (property === 'deleteMany') {
          return (async (model, where) => {
            if (options.undeletable?.includes(model)) throw new Error('the connection was lost')
            return target.deleteMany(model, where)
          }) satisfies StorageTransaction['deleteMany']
        }
        const value: unknown = Reflect.get(target, property)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  return { ...storage, transaction: (work, options) => storage.transaction((tx) => work(wrap(tx)), options) }
}

describe('importRecords refuses', () => {
  it('a storage that already holds records, writing nothing', async () => {
    const target = await fileStorage()
    try {
      await target.transaction((tx) =>
        tx.insert('settings', { id: 'mine', value: 'kept', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' }),
      )
      const error = await failure(importRecords(target, backup))
      expect(error.code).toBe('not_empty')
      expect(error.message).toBe(
        'The storage already holds records: settings (1). Import only into an empty one (a new database file or PostgreSQL schema); nothing was written.',
      )
      expect(await held(target)).toEqual({ settings: 1 })
    } finally {
      await target.close()
    }
  })

  const refusals: [string, () => string[], RegExp, number | 'last' | undefined][] = [
    ['a file that is not an export', () => ['{"hello":"world"}', ...backup.slice(1)], /^Line 1: not an affiliate-service records file/, 1],
    [
      'a file of another schema',
      () => [backup[0]!.replace(/"schemaVersion":"[0-9a-f]+"/, '"schemaVersion":"0000000000000000"'), ...backup.slice(1)],
      /^Line 1: the file's records are described by schema "0000000000000000", this affiliate-service's by [0-9a-f]{16}: import it with the affiliate-service version that exported it/,
      1,
    ],
    [
      'a file cut short (no trailer)',
      () => backup.slice(0, -1),
      /^The file ends at line \d+ without its trailer: it was cut short\. Export it again\./,
      'last',
    ],
    [
      'a line that is not JSON',
      () => [...backup.slice(0, 5), '{"model":"campaigns","rec', ...backup.slice(6)],
      /^Line 6: not JSON: the file is damaged or was cut/,
      6,
    ],
    [
      'a record missing a field',
      () => backup.map((line, i) => (i === 1 ? line.replace(/,"updatedAt":"[^"]+"/, '') : line)),
      /^Line 2: the campaigns record "[^"]+" has updatedAt = nothing, not a text/,
      2,
    ],
    [
      'a line dropped',
      () => backup.filter((_, i) => i !== 3),
      /^The file holds \d+ campaigns records where its trailer says \d+: it is damaged\./,
      undefined,
    ],
    [
      'a record edited after the export',
      () => backup.map((line) => line.replace('"campaignName":"Campaign a"', '"campaignName":"Campaign z"')),
      /^Read back, the storage's campaigns records differ from the file's: \d+ records with SHA-256 [0-9a-f]{64}, where the file has \d+ with [0-9a-f]{64}\./,
      undefined,
    ],
  ]
  for (const [what, lines, message, line] of refusals) {
    it(`${what}, and leaves the storage empty`, async () => {
      const target = await fileStorage()
      try {
        const error = await failure(importRecords(target, lines(), { batchSize: 3 }))
        expect(error.code).toBe(what.includes('edited') ? 'verification_failed' : 'invalid_records')
        expect(error.message).toMatch(message)
        expect(error.message).toMatch(/ The storage was emptied again: nothing of this import is kept\.$/)
        expect(error.line).toBe(line === 'last' ? backup.length - 1 : line)
        expect(error.remaining).toEqual({})
        expect(await held(target)).toEqual({})
      } finally {
        await target.close()
      }
    })
  }
})

describe('an import that fails half-way', () => {
  it('empties the storage again: nothing of it is kept', async () => {
    const target = await fileStorage()
    try {
      const inserted: number[] = []
      const error = await failure(importRecords(failing(target, { failAt: 6, inserted }), backup, { batchSize: 3 }))
      expect(error.code).toBe('storage_failed')
      expect(error.message).toMatch(
        /^The storage refused the \w+ records of lines \d+ to \d+: No space left on device\. The storage was emptied again: nothing of this import is kept\.$/,
      )
      // Five batches had been written before the sixth failed, and the error says how many records they held.
      expect(inserted).toHaveLength(5)
      expect(Object.values(error.written).reduce((a, b) => a + b, 0)).toBe(inserted.reduce((a, b) => a + b, 0))
      expect(error.remaining).toEqual({})
      expect(await held(target)).toEqual({})
      // And it takes the same file again, whole.
      await importRecords(target, backup)
    } finally {
      await target.close()
    }
  })

  it('says exactly which records to drop when emptying the storage fails too', async () => {
    const target = await fileStorage()
    try {
      const error = await failure(
        importRecords(failing(target, { failAt: 6, undeletable: ['campaigns', 'affiliates'] }), backup, { batchSize: 3 }),
      )
      const left = await held(target)
      // What the message names is what the storage holds: nothing more, nothing less.
      expect(Object.keys(left)).toEqual(['campaigns', 'affiliates'])
      expect(error.remaining).toEqual(left)
      expect(error.message).toMatch(
        new RegExp(
          `No space left on device\\. Emptying the storage again failed too, so it still holds these records of this import: campaigns \\(${left.campaigns}\\), affiliates \\(${left.affiliates}\\)\\. Drop them \\(or the whole database\\) before importing again\\.$`,
        ),
      )
    } finally {
      await target.close()
    }
  })
})
