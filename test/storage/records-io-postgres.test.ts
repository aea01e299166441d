import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { memoryKind, roundTrip, sqlJsFileKind, type Opened, type StorageKind } from '../support/records-round-trip.js'

// exportRecords and importRecords between PostgreSQL and every storage, both ways: the record
// lines come back byte for byte (see records-io.test.ts for the in-process pairs).

describe.skipIf(!postgresUrl)(needs('export and import on PostgreSQL', POSTGRES_VAR), () => {
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-records-pg-'))
  const schemas: string[] = []
  let pool: pg.Pool
  beforeAll(async () => {
    pool = await testPool()
  })
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true })
    for (const schema of schemas) await dropSchema(pool, schema)
    await pool.end()
  })

  const postgresKind: StorageKind = {
    name: 'PostgreSQL',
    make: async () => {
      const schema = uniqueName('records')
      schemas.push(schema)
      const storage = postgresStorage({ pool, schema })
      await storage.ready()
      // The pool is shared by the whole file: closing one storage must not end it.
      return Object.assign(storage, { close: async () => {} }) as Opened
    },
    sequenceInRecords: false,
  }
  const others = [memoryKind, sqlJsFileKind(dir)]
  const pairs: [StorageKind, StorageKind][] = [
    [postgresKind, postgresKind],
    ...others.flatMap((other): [StorageKind, StorageKind][] => [
      [other, postgresKind],
      [postgresKind, other],
    ]),
  ]
  for (const [from, to] of pairs) it(`${from.name} to ${to.name}: the record lines come back byte for byte`, () => roundTrip(from, to))
})
