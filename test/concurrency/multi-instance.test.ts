// Several instances for real: two Node processes serve the API on one PostgreSQL schema and one
// Redis prefix, made fresh for this run. A burst with one key over both is held to one bucket,
// commission creates over both keep counters exact, and a retry sent to the other one replays.
import type pg from 'pg'
import type { RedisClientType } from 'redis'
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
import { checkedFetch } from '../support/openapi-check.js'

const WORKSPACE = '55555555-5555-4555-8555-555555555555'
const KEY = 'instances-key'
const BURST_KEY = 'instances-burst-key'
// Nothing refills within a test run (one token per 1000 s), and the in-flight cap is out of the
// way: whatever the timing, the instances together may admit exactly CAPACITY requests of a key.
const CAPACITY = 50
const RATE_LIMIT = { capacity: CAPACITY, refillPerSecond: 0.001, maxInFlight: 1_000 }

describe.skipIf(!postgresUrl || !redisUrl)(needs('Two instances on one PostgreSQL and one Redis', POSTGRES_VAR, REDIS_VAR), () => {
  const schema = uniqueName('instances')
  const prefix = `${uniqueName('instances')}:`
  let pool: pg.Pool
  let redis: RedisClientType
  let instances: Started[] = []

  beforeAll(async () => {
    // Fail here, plainly, when a service does not answer.
    pool = await testPool(2)
    redis = await testRedis()
    const env = {
      ...process.env,
      INSTANCE_SCHEMA: schema,
      INSTANCE_PREFIX: prefix,
      INSTANCE_KEYS: JSON.stringify([
        { key: KEY, userId: WORKSPACE, workspaceIds: [WORKSPACE] },
        { key: BURST_KEY, userId: WORKSPACE, workspaceIds: [WORKSPACE] },
      ]),
      INSTANCE_RATE_LIMIT: JSON.stringify(RATE_LIMIT),
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
    expect(codes).toEqual(instances.map(() => 0))
  })

  /** A request to instance `i` (0 or 1) with `key`; answers the status, headers and body text. */
  async function call(
    i: number,
    method: string,
    path: string,
    options: { body?: unknown; key?: string; headers?: Record<string, string> } = {},
  ) {
    const response = await checkedFetch(`${instances[i]!.url}${path}`, {
      method,
      headers: { 'x-auth-service': options.key ?? KEY, 'content-type': 'application/json', ...options.headers },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined }
  }
  const data = <T>(response: { status: number; body: { data: T } }, status = 200): T => {
    expect(response.status, JSON.stringify(response.body)).toBe(status)
    return response.body.data
  }

  it('a burst with one key across both instances admits exactly the bucket’s capacity in total', async () => {
    const unknown = '99999999-9999-4999-8999-999999999999'
    const get = (i: number) => call(i, 'GET', `/campaigns?campaignId=${unknown}`, { key: BURST_KEY })
    // One request to each instance first, in turn, so both have taken from the bucket whatever the
    // burst's timing (in the burst itself, one instance may be quick enough to take every token).
    // An admitted request answers 404 (no such campaign); a refused one 429.
    expect((await get(0)).status).toBe(404)
    expect((await get(1)).status).toBe(404)
    // Then 1.5x the capacity to each instance at once. One bucket admits what is left of it in total;
    // a bucket per instance would admit CAPACITY - 1 on each.
    const responses = await Promise.all(Array.from({ length: 3 * CAPACITY }, (_, i) => get(i % 2)))
    const admitted = responses.filter((r) => r.status === 404)
    const refused = responses.filter((r) => r.status === 429)
    expect(admitted.length + refused.length).toBe(responses.length)
    expect(admitted).toHaveLength(CAPACITY - 2)
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // Spent on both, now that the burst is over.
    expect(await Promise.all([get(0), get(1)]).then((rs) => rs.map((r) => r.status))).toEqual([429, 429])
  })

  it('concurrent commission creates spread over both instances keep every counter exact', async () => {
    const campaign = data<{ id: string }>(
      await call(0, 'POST', '/campaigns', {
        body: { campaignName: 'Shared', workspaceId: WORKSPACE, commissionType: 'fixed', amount: 5, url: 'https://shop.example.com/' },
      }),
      201,
    )
    const affiliate = data<{ id: string }>(
      await call(1, 'POST', '/affiliates', { body: { email: 'partner@example.com', campaignId: campaign.id } }),
      201,
    )
    const link = data<{ referralCode: string }>(await call(0, 'POST', '/links', { body: { affiliateId: affiliate.id } }), 201)
    const creates = 24
    const responses = await Promise.all(
      Array.from({ length: creates }, (_, i) =>
        call(i % 2, 'POST', '/commissions', {
          body: {
            campaignId: campaign.id,
            affiliateId: affiliate.id,
            referredUser: `buyer-${i % 5}@example.com`,
            amount: `${i + 1}.${String(i).padStart(2, '0')}`,
            referralCode: link.referralCode,
          },
        }),
      ),
    )
    expect(responses.map((r) => r.status)).toEqual(Array(creates).fill(201))
    const cents = Array.from({ length: creates }, (_, i) => (i + 1) * 100 + i).reduce((a, b) => a + b, 0)
    const after = data<{ totalEarnings: number; totalSignups: number }>(await call(1, 'GET', `/affiliates?affiliateId=${affiliate.id}`))
    expect(Math.round(after.totalEarnings * 100)).toBe(cents)
    expect(after.totalSignups).toBe(5)
    const links = data<{ items: { totalEarnings: number; totalSignups: number }[] }>(
      await call(0, 'GET', `/links?affiliateId=${affiliate.id}`),
    )
    expect(links.items.map((l) => [Math.round(l.totalEarnings * 100), l.totalSignups])).toEqual([[cents, 5]])
  })

  it('an idempotent retry sent to the other instance replays the first answer', async () => {
    const body = {
      campaignName: 'Once',
      workspaceId: WORKSPACE,
      commissionType: 'percentage',
      amount: 10,
      url: 'https://shop.example.com/',
    }
    const headers = { 'idempotency-key': 'instances-retry-1' }
    const first = await call(0, 'POST', '/campaigns', { body, headers })
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const retry = await call(1, 'POST', '/campaigns', { body, headers })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.text).toBe(first.text)
    const named = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".campaigns WHERE "campaignName" = 'Once'`)
    expect(named.rows[0].n).toBe(1)
  })
})
