// Two Node processes serve the API on one PostgreSQL schema, each delivering webhooks in the
// background (serve() starts the dispatcher): 500 events, written through both, reach a healthy
// receiver exactly once each (counted once both have stopped, so a late duplicate cannot be missed).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type pg from 'pg'
import type { RedisClientType } from 'redis'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProgram, type Started } from '../support/run-command.js'
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

const WORKSPACE = '66666666-6666-4666-8666-666666666666'
const KEY = 'webhook-instances-key'
const EVENTS = 500

describe.skipIf(!postgresUrl || !redisUrl)(needs('Webhook delivery from two instances on one PostgreSQL', POSTGRES_VAR, REDIS_VAR), () => {
  const schema = uniqueName('webhooks')
  const prefix = `${uniqueName('webhooks')}:`
  let pool: pg.Pool
  let redis: RedisClientType
  let instances: Started[] = []
  let server: Server
  const received: string[] = []
  let allReceived!: () => void
  /** Settles when every event has reached the receiver at least once. */
  const everyEvent = new Promise<void>((resolve) => (allReceived = resolve))
  let secret = ''
  let receiverUrl = ''

  beforeAll(async () => {
    pool = await testPool(2)
    redis = await testRedis()
    server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        new Webhook(secret).verify(body, req.headers as Record<string, string>)
        received.push(String(req.headers['webhook-id']))
        if (new Set(received).size === EVENTS) allReceived()
        setTimeout(() => res.writeHead(200).end('ok'), 2)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
    const env = {
      ...process.env,
      INSTANCE_SCHEMA: schema,
      INSTANCE_PREFIX: prefix,
      INSTANCE_KEYS: JSON.stringify([{ key: KEY, userId: WORKSPACE, workspaceIds: [WORKSPACE] }]),
      INSTANCE_RATE_LIMIT: JSON.stringify({ capacity: 100_000, refillPerSecond: 100_000, maxInFlight: 1_000 }),
      INSTANCE_WEBHOOKS: JSON.stringify({ allowHttp: true, allowPrivateAddresses: true }),
    }
    const start = () => startProgram(process.execPath, ['--import', 'tsx', 'test/support/instance.ts'], env, /instance listening on (\S+)/)
    instances = await Promise.all([start(), start()])
  }, 60_000)

  afterAll(async () => {
    const codes = await Promise.all(instances.map((instance) => instance.stop()))
    await dropSchema(pool, schema)
    await pool.end()
    await deleteKeys(redis, prefix)
    await redis.close()
    server?.closeAllConnections()
    server?.close()
    expect(codes).toEqual(instances.map(() => 0))
  })

  /** Resolves once `n` deliveries are recorded as succeeded (checked every 20 ms, at most 60 s). */
  const recorded = async (n: number) => {
    for (let i = 0; i < 3000; i++) {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}"."webhookDeliveries" WHERE status = 'succeeded'`)
      if (rows[0].n >= n) return
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`fewer than ${n} deliveries were recorded as succeeded in 60 s`)
  }

  const call = async (i: number, method: string, path: string, body: unknown) => {
    const response = await fetch(`${instances[i]!.url}${path}`, {
      method,
      headers: { 'x-auth-service': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } }
  }

  it(`${EVENTS} events written through both instances are each delivered exactly once`, { timeout: 120_000 }, async () => {
    const created = await call(0, 'POST', '/webhooks', { workspaceId: WORKSPACE, url: receiverUrl, events: ['campaign.created'] })
    expect(created.status).toBe(201)
    secret = created.body.data.secret as string
    let next = 0
    const writer = async (i: number) => {
      while (next < EVENTS) {
        const n = next++
        const answer = await call(i % 2, 'POST', '/campaigns', {
          campaignName: `C${n}`,
          workspaceId: WORKSPACE,
          commissionType: 'percentage',
          amount: 10,
          url: 'https://shop.example.com/',
        })
        expect(answer.status).toBe(201)
      }
    }
    await Promise.all(Array.from({ length: 8 }, (_, i) => writer(i)))
    await everyEvent
    // Then every delivery recorded as a success (the last answers may still be on their way back), read
    // from the table the instances write; then both stopped: nothing more can be sent, so any
    // duplicate has already reached the receiver.
    await recorded(EVENTS)
    expect(await Promise.all(instances.map((instance) => instance.stop()))).toEqual([0, 0])
    expect(new Set(received).size).toBe(EVENTS)
    expect(received).toHaveLength(EVENTS)
    const rows = await pool.query(
      `SELECT status, attempts, count(*)::int AS n FROM "${schema}"."webhookDeliveries" GROUP BY status, attempts`,
    )
    expect(
      rows.rows.map((r: { status: string; attempts: string | number; n: number }) => ({ ...r, attempts: Number(r.attempts) })),
    ).toEqual([{ status: 'succeeded', attempts: 1, n: EVENTS }])
    const events = await pool.query(`SELECT count(*)::int AS n, count(DISTINCT sequence)::int AS sequences FROM "${schema}".events`)
    expect(events.rows[0]).toEqual({ n: EVENTS, sequences: EVENTS })
  })
})
