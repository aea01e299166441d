// The growth figures of bench/growth.ts (by-id read, list page 2, filtered list, contains search,
// commission create; p50/p99 at 1k and 100k affiliates, 100k/1k ratios) for the PostgreSQL storage,
// measured in the same run, each size in a fresh schema. Then, on the same data, what a list page
// costs split in two: the page of rows alone, and the exact total (`count`) it also asks for.
//
//   AFFILIATE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/postgres.ts
//
// Without the variable (or AFFILIATE_BENCH_POSTGRES_URL) it says so and does nothing.
import pg from 'pg'
import { postgresStorage } from '../adapters/postgres.js'
import type { Storage } from '../src/index.js'
import { growthBench, type StorageUnderTest } from './growth.js'
import { fixed, percentile, sample, table } from './stats.js'

const url = process.env.AFFILIATE_BENCH_POSTGRES_URL || process.env.AFFILIATE_TEST_POSTGRES_URL
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)
const WORKSPACE = '11111111-1111-4111-8111-111111111111'

interface Opened {
  schema: string
  loaded: boolean
}

export async function postgresBench(connectionString: string) {
  const pool = new pg.Pool({ connectionString })
  const opened = new Map<Storage, Opened>()
  const split: Record<string, string | number>[] = []

  /**
   * The storage, but the first read after the bulk load waits for VACUUM ANALYZE: what autovacuum
   * does within a minute of a load this size, so the figures are those of a table with statistics.
   */
  const analyzedAfterLoad = (inner: Storage, state: Opened): Storage => ({
    async transaction(work, options) {
      if (options?.readOnly && !state.loaded) {
        state.loaded = true
        for (const table of ['affiliates', 'commissions', 'campaigns']) await pool.query(`VACUUM ANALYZE "${state.schema}"."${table}"`)
      }
      return inner.transaction(work, options)
    },
  })

  /** Before a schema is dropped: the page of rows alone and its count alone. */
  async function splitFigures(storage: Storage) {
    const size = await storage.transaction((tx) => tx.count('affiliates', {}), { readOnly: true })
    const where = { workspaceId: { in: [WORKSPACE] } }
    const page = () =>
      storage.transaction(
        (tx) => tx.find('affiliates', { where, orderBy: { field: 'createdAt', direction: 'DESC' }, offset: 10, limit: 10 }),
        {
          readOnly: true,
        },
      )
    const count = () => storage.transaction((tx) => tx.count('affiliates', { where }), { readOnly: true })
    const figures: Record<string, string | number> = { affiliates: size }
    for (const [name, run] of [
      ['page rows', page],
      ['page count', count],
    ] as const) {
      await sample(20, run)
      const times = await sample(SAMPLES, run)
      figures[`${name} p50`] = fixed(percentile(times, 50))
      figures[`${name} p99`] = fixed(percentile(times, 99))
    }
    split.push(figures)
  }

  const target: StorageUnderTest = {
    name: 'PostgreSQL (pg, SERIALIZABLE)',
    async open(size) {
      const state = { schema: `aff_bench_${size}_${process.pid}_${crypto.randomUUID().slice(0, 8)}`, loaded: false }
      const storage = postgresStorage({ pool, schema: state.schema })
      await storage.ready()
      const wrapped = analyzedAfterLoad(storage, state)
      opened.set(wrapped, state)
      return wrapped
    },
    async footprint(storage) {
      const { schema } = opened.get(storage)!
      const { rows } = await pool.query<{ bytes: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
        [schema],
      )
      return Number(rows[0]!.bytes)
    },
    async dispose(storage) {
      const state = opened.get(storage)!
      if (state.loaded) await splitFigures(storage)
      await pool.query(`DROP SCHEMA "${state.schema}" CASCADE`)
      opened.delete(storage)
    },
  }

  try {
    const summary = await growthBench([target])
    console.log('\nA list page split in two (affiliates of one workspace, createdAt DESC, page 2 of 10), ms')
    table(split)
    return summary
  } finally {
    await pool.end()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!url)
    console.log('bench/postgres.ts: skipped, set AFFILIATE_TEST_POSTGRES_URL (or AFFILIATE_BENCH_POSTGRES_URL) to a PostgreSQL database')
  else await postgresBench(url)
}
