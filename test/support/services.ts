// Where the tests that need a real PostgreSQL or Redis find them. Each is named by an environment
// variable: when it is unset those tests are reported as skipped (the suite's name says which
// variable to set); when it is set and the service does not answer, they fail.
import pg from 'pg'
import { modelNames } from '../../src/storage/models.js'
import { createClient, type RedisClientType } from 'redis'

export const POSTGRES_VAR = 'AFFILIATE_TEST_POSTGRES_URL'
export const REDIS_VAR = 'AFFILIATE_TEST_REDIS_URL'

/** e.g. postgres://postgres@127.0.0.1:5432/test */
export const postgresUrl: string | undefined = process.env[POSTGRES_VAR] || undefined
/** e.g. redis://127.0.0.1:6379 */
export const redisUrl: string | undefined = process.env[REDIS_VAR] || undefined

/** A suite name that says what it needs when it is skipped. */
export const needs = (what: string, ...variables: string[]) => `${what} (needs ${variables.join(' and ')}; skipped when unset)`

/** A name no other run uses: a schema or a Redis key prefix of its own, so runs never see each other's data. */
export const uniqueName = (tag: string): string => `aff_test_${tag}_${process.pid}_${crypto.randomUUID().slice(0, 8)}`

/** A pool on the test database that has answered once, so an unreachable server fails here, plainly. */
export async function testPool(max = 10): Promise<pg.Pool> {
  if (!postgresUrl) throw new Error(`${POSTGRES_VAR} is not set`)
  const pool = new pg.Pool({ connectionString: postgresUrl, max, connectionTimeoutMillis: 5_000 })
  pool.on('error', () => undefined)
  try {
    await pool.query('SELECT 1')
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw new Error(`PostgreSQL at ${postgresUrl} (${POSTGRES_VAR}) does not answer: ${String(error)}`, { cause: error })
  }
  return pool
}

export const dropSchema = (pool: pg.Pool, schema: string) => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)

/** Empties every table of an affiliate-service schema (fast: one TRUNCATE). */
export const truncateAll = (pool: pg.Pool, schema: string) =>
  pool.query(`TRUNCATE ${modelNames.map((t) => `"${schema}"."${t}"`).join(', ')}`)

/** A node-redis client on the test Redis that has answered PING, so an unreachable server fails here, plainly. */
export async function testRedis(): Promise<RedisClientType> {
  if (!redisUrl) throw new Error(`${REDIS_VAR} is not set`)
  const client = createClient({ url: redisUrl, socket: { connectTimeout: 5_000, reconnectStrategy: false } }) as RedisClientType
  client.on('error', () => undefined)
  try {
    await client.connect()
    await client.ping()
  } catch (error) {
    throw new Error(`Redis at ${redisUrl} (${REDIS_VAR}) does not answer: ${String(error)}`, { cause: error })
  }
  return client
}

/** Deletes every key under `prefix` (SCAN, so Redis is never blocked). */
export async function deleteKeys(client: RedisClientType, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const reply = await client.scan(cursor, { MATCH: `${prefix}*`, COUNT: 500 })
    cursor = String(reply.cursor)
    if (reply.keys.length) await client.del(reply.keys)
  } while (cursor !== '0')
}
