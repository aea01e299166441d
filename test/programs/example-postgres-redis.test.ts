// examples/postgres-redis runs by its documented command (`npm run example:postgres-redis`) on the
// test PostgreSQL and Redis, in a schema and key prefix of its own: a key made at first start is
// printed and works, records are kept, the default limit refuses a burst, SIGTERM stops it cleanly.
import type pg from 'pg'
import type { RedisClientType } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimeEnv, scriptCommand, startProgram } from '../support/run-command.js'
import {
  deleteKeys,
  dropSchema,
  needs,
  POSTGRES_VAR,
  postgresUrl,
  REDIS_VAR,
  redisUrl,
  testPool,
  testRedis,
  uniqueName,
} from '../support/services.js'

describe.skipIf(!postgresUrl || !redisUrl)(needs('examples/postgres-redis', POSTGRES_VAR, REDIS_VAR), () => {
  const schema = uniqueName('example')
  let pool: pg.Pool
  let redis: RedisClientType

  beforeAll(async () => {
    pool = await testPool(1)
    redis = await testRedis()
  })
  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
    await deleteKeys(redis, `${schema}:`)
    await redis.close()
  })

  it('serves the API on PostgreSQL and Redis by `npm run example:postgres-redis`', { timeout: 60_000 }, async () => {
    const { command, args, env } = scriptCommand('example:postgres-redis')
    const program = await startProgram(
      command,
      args,
      runtimeEnv({ ...env, PORT: '0', DATABASE_URL: postgresUrl!, REDIS_URL: redisUrl!, AFFILIATE_SCHEMA: schema }),
      /listening on (http:\/\/127\.0\.0\.1:\d+\/api\/v1)/,
    )
    try {
      const made = /Made an API key for workspace (\S+); it is shown once: (\S+)/.exec(program.output())
      expect(made, program.output()).not.toBeNull()
      const [, workspaceId, key] = made!
      const headers = { 'x-auth-service': key!, 'content-type': 'application/json' }
      const created = await fetch(`${program.url}/campaigns`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          campaignName: 'Launch',
          workspaceId,
          commissionType: 'percentage',
          amount: 20,
          url: 'https://shop.example.com/',
        }),
      })
      expect(created.status).toBe(201)
      const stored = await pool.query(`SELECT "campaignName" FROM "${schema}".campaigns`)
      expect(stored.rows).toEqual([{ campaignName: 'Launch' }])
      // The default limit (5 tokens, 5 per second), counted in Redis: ten at once cannot all pass.
      const burst = await Promise.all(Array.from({ length: 10 }, () => fetch(`${program.url}/campaigns/list`, { headers })))
      expect(burst.filter((r) => r.status === 429).length).toBeGreaterThan(0)
      await Promise.all(burst.map((r) => r.body?.cancel()))
      expect(await redis.keys(`${schema}:limit:*`)).not.toEqual([])
    } finally {
      expect(await program.stop()).toBe(0)
    }
  })
})
