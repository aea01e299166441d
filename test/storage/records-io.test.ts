import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { postgresStorage } from '../../adapters/postgres.js'
import { exportRecords, importRecords, memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { modelNames, models } from '../../src/storage/models.js'
import { dropSchema, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { apiCampaignInput, setup } from '../support/helpers.js'
import { fillProgram } from '../support/records-program.js'

// exportRecords and importRecords on every pair of storages: export, import, export again gives
// the same bytes, timestamps, ids, key hashes and secrets included.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-records-'))
let pool: pg.Pool | undefined
const schemas: string[] = []
beforeAll(async () => {
  if (postgresUrl) pool = await testPool()
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (pool) {
    for (const schema of schemas) await dropSchema(pool, schema)
    await pool.end()
  }
})

let files = 0
type Opened = Storage & { close(): Promise<void> }
/** Each kind makes a fresh, empty storage. PostgreSQL keeps the events' sequence in the database, not in a record. */
const kinds: Record<string, { make: () => Promise<Opened>; sequenceInRecords: boolean }> = {
  memory: { make: async () => memoryStorage() as Opened, sequenceInRecords: true },
  'sql.js file': {
    make: async () => {
      const storage = sqlJsStorage({ persist: fileJournal(join(dir, `db-${++files}.sqlite`)) })
      await storage.ready()
      return storage
    },
    sequenceInRecords: true,
  },
  ...(postgresUrl
    ? {
        PostgreSQL: {
          make: async () => {
            const schema = uniqueName('records')
            schemas.push(schema)
            const storage = postgresStorage({ pool: pool!, schema })
            await storage.ready()
            // The pool is shared by the whole file: closing one storage must not end it.
            return Object.assign(storage, { close: async () => {} })
          },
          sequenceInRecords: false,
        },
      }
    : {}),
}

const NOW = '2026-03-01T12:00:00.000Z'
const clock = { now: () => Date.parse(NOW) }

const linesOf = async (lines: AsyncIterable<string>): Promise<string[]> => {
  const out: string[] = []
  for await (const line of lines) out.push(line)
  return out
}

/** Small pages and batches, so that paging over records sharing a createdAt is exercised. */
const exported = (storage: Storage) => linesOf(exportRecords(storage, { clock, pageSize: 3 }))

describe('exportRecords → importRecords → exportRecords', () => {
  for (const from of Object.keys(kinds)) {
    for (const to of Object.keys(kinds)) {
      it(`${from} to ${to}: the record lines come back byte for byte`, async () => {
        const source = await kinds[from]!.make()
        const target = await kinds[to]!.make()
        try {
          await fillProgram(source)
          const first = await exported(source)
          const result = await importRecords(target, first, { clock, batchSize: 4, pageSize: 5 })
          const second = await exported(target)
          expect(first[0]).toBe(JSON.stringify({ format: 'affiliate-service/records', version: 1, schemaVersion: JSON.parse(first[0]!).schemaVersion, exportedAt: NOW }))
          expect(result.models).toEqual(JSON.parse(first.at(-1)!).models)
          const highest = Math.max(...first.filter((line) => line.startsWith('{"model":"events"')).map((line) => JSON.parse(line).record.sequence as number))
          if (kinds[from]!.sequenceInRecords || !kinds[to]!.sequenceInRecords) {
            expect(second).toEqual(first)
          } else {
            // From PostgreSQL to a storage that keeps the events' counter as a record: the import
            // made that record (going on after the highest event), and only it is new.
            const counter = second.find((line) => line.startsWith('{"model":"sequences","record":{"id":"events",'))!
            expect(JSON.parse(counter).record).toEqual({ id: 'events', value: highest, createdAt: NOW, updatedAt: NOW })
            expect(second.slice(1, -1).filter((line) => line !== counter)).toEqual(first.slice(1, -1))
          }
          // The service goes on where the source stopped: the next event is numbered after every imported one.
          const { api } = setup({ storage: target })
          const campaign = await api.campaigns.create(apiCampaignInput({ campaignName: 'After the move' }))
          const later = await target.transaction((tx) => tx.find('events', { where: { sequence: { gt: highest } } }))
          expect(later.map((event) => [event.type, JSON.parse(event.data).id])).toEqual([['campaign.created', campaign.id]])
        } finally {
          await Promise.all([source.close(), target.close()])
        }
      })
    }
  }
})

describe('the records file', () => {
  it("has a header, a line per record (fields in the model's order), and a trailer whose SHA-256 covers each model's lines and their newlines", async () => {
    const storage = memoryStorage()
    await fillProgram(storage)
    const lines = await exported(storage)
    const trailer = JSON.parse(lines.at(-1)!)
    expect(Object.keys(trailer)).toEqual(['trailer', 'models'])
    expect(Object.keys(trailer.models)).toEqual(modelNames)
    for (const model of modelNames) {
      const own = lines.slice(1, -1).filter((line) => JSON.parse(line).model === model)
      const sha256 = createHash('sha256').update(own.map((line) => `${line}\n`).join(''), 'utf8').digest('hex')
      expect(trailer.models[model]).toEqual({ count: own.length, sha256 })
      for (const line of own) expect(Object.keys(JSON.parse(line).record)).toEqual(models[model].fields.map((field) => field.name))
    }
    // Keys stay hashed: the stored hash is in the file, never a key.
    const keys = lines.filter((line) => line.startsWith('{"model":"apiKeys"')).map((line) => JSON.parse(line).record)
    expect(keys.length).toBeGreaterThan(0)
    for (const key of keys) expect(key.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(lines.join('\n')).not.toMatch(/aff_live_[A-Za-z0-9]{32}/)
  })

  it('an empty storage exports a header, the trailer, and the SHA-256 of nothing for each model', async () => {
    const lines = await exported(memoryStorage())
    expect(lines).toHaveLength(2)
    const empty = createHash('sha256').digest('hex')
    expect(JSON.parse(lines[1]!).models).toEqual(Object.fromEntries(modelNames.map((model) => [model, { count: 0, sha256: empty }])))
  })
})
