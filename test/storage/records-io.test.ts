import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { memoryStorage } from '../../src/index.js'
import { modelNames, models } from '../../src/storage/models.js'
import { fillProgram } from '../support/records-program.js'
import { exported, memoryKind, roundTrip, sqlJsFileKind } from '../support/records-round-trip.js'

// exportRecords and importRecords on every pair of the in-process storages: export, import,
// export again gives the same bytes, timestamps, ids, key hashes and secrets included. The pairs
// with PostgreSQL: records-io-postgres.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-records-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const kinds = [memoryKind, sqlJsFileKind(dir)]

describe('exportRecords → importRecords → exportRecords', () => {
  for (const from of kinds) {
    for (const to of kinds) it(`${from.name} to ${to.name}: the record lines come back byte for byte`, () => roundTrip(from, to))
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
      const sha256 = createHash('sha256')
        .update(own.map((line) => `${line}\n`).join(''), 'utf8')
        .digest('hex')
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
