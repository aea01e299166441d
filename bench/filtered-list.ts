// A filtered list at 100k: `GET /commissions/list?status=paid&page=2&limit=10` through
// `service.fetch`, where the filter matches a quarter of one workspace's 100k commissions, so the
// page and its exact total (25k) must both come from an index. p50 and p99 over the samples on
// memory, sql.js and (when AFFILIATE_TEST_POSTGRES_URL or AFFILIATE_BENCH_POSTGRES_URL is set)
// PostgreSQL, each with its ratio to the 10 ms goal.
//
//   node --import tsx bench/filtered-list.ts          (BENCH_SAMPLES=500 for steadier tails)
import pg from 'pg'
import { postgresStorage } from '../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, type Storage } from '../src/index.js'
import { commission } from '../src/storage/sample-records.js'
import { fixed, percentile, sample, table } from './stats.js'

const KEY = 'bench-key'
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const SIZE = 100_000
const GOAL_MS = 10
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)
const STATUSES = ['pending', 'processing', 'paid', 'refunded'] as const
const url = process.env.AFFILIATE_BENCH_POSTGRES_URL || process.env.AFFILIATE_TEST_POSTGRES_URL

interface Target {
  name: string
  open(): Promise<Storage>
  /** Runs once the records are in (statistics, say). */
  loaded?(storage: Storage): Promise<void>
  dispose(storage: Storage): Promise<void>
}

async function fill(storage: Storage) {
  const base = Date.UTC(2026, 0, 1)
  for (let start = 0; start < SIZE; start += 5000) {
    await storage.transaction(async (tx) => {
      for (let i = start; i < Math.min(SIZE, start + 5000); i++) {
        const at = new Date(base + i * 1000).toISOString()
        const key = `buyer-${i}@example.com`
        await tx.insert(
          'commissions',
          commission({
            workspaceId: WORKSPACE,
            referredUser: key,
            referredUserKey: key,
            status: STATUSES[i % 4]!,
            createdAt: at,
            updatedAt: at,
          }),
        )
      }
    })
  }
}

async function measure(target: Target) {
  const storage = await target.open()
  try {
    await fill(storage)
    await target.loaded?.(storage)
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([{ key: KEY, userId: WORKSPACE, workspaceIds: [WORKSPACE] }]),
      rateLimit: false,
    })
    const list = async () => {
      const response = await service.fetch(
        new Request('http://bench.local/api/v1/commissions/list?status=paid&page=2&limit=10', { headers: { 'x-auth-service': KEY } }),
      )
      const body = (await response.json()) as { data: { pagination: { total: number } } }
      if (response.status !== 200 || body.data.pagination.total !== SIZE / 4) throw new Error(`unexpected answer ${response.status}`)
    }
    await sample(20, list)
    const times = await sample(SAMPLES, list)
    const p50 = percentile(times, 50)
    return {
      storage: target.name,
      'p50 ms': fixed(p50),
      'p99 ms': fixed(percentile(times, 99)),
      'p50 / goal': fixed(p50 / GOAL_MS, 2),
      goal: p50 <= GOAL_MS ? 'met' : 'NOT met',
    }
  } finally {
    await target.dispose(storage)
  }
}

const targets: Target[] = [
  { name: 'memory', open: async () => memoryStorage(), dispose: async () => {} },
  { name: 'sql.js', open: async () => sqlJsStorage(), dispose: (storage) => storage.close?.() ?? Promise.resolve() },
]
if (url) {
  const pool = new pg.Pool({ connectionString: url })
  const schema = `aff_bench_filtered_${process.pid}`
  targets.push({
    name: 'PostgreSQL',
    open: async () => postgresStorage({ pool, schema }),
    // What autovacuum does within a minute of a load this size: the figures are those of a table with statistics.
    loaded: async () => void (await pool.query(`VACUUM ANALYZE "${schema}"."commissions"`)),
    dispose: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await pool.end()
    },
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = []
  for (const target of targets) rows.push(await measure(target))
  console.log(
    `\nfiltered list at 100k (status=paid: 25k of one workspace's 100k commissions, page 2 of 10, exact total), ${SAMPLES} samples; goal p50 <= ${GOAL_MS} ms`,
  )
  table(rows)
  if (!url) console.log('  PostgreSQL skipped: set AFFILIATE_TEST_POSTGRES_URL (or AFFILIATE_BENCH_POSTGRES_URL)')
}
