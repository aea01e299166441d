import type pg from 'pg'
import { afterAll, beforeAll, describe } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { describeStorageConformance } from '../../src/testing/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, truncateAll, uniqueName } from '../support/services.js'

describe.skipIf(!postgresUrl)(needs('PostgreSQL storage', POSTGRES_VAR), () => {
  const schema = uniqueName('conformance')
  let pool: pg.Pool
  beforeAll(async () => {
    pool = await testPool()
    await postgresStorage({ pool, schema }).ready()
  })
  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
  })

  // One schema for the file, emptied before each case: each case gets an empty storage.
  describeStorageConformance('postgres', async () => {
    await truncateAll(pool, schema)
    return postgresStorage({ pool, schema })
  })
})
