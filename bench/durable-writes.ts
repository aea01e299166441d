// Durable writes against native SQLite: the sql.js file storage (`fileJournal`) and better-sqlite3
// (WAL, `synchronous=FULL`), the same schema (every migration: tables, indexes, count triggers) and
// the same write: one commission inserted and one counter moved on its affiliate, in one
// transaction, acknowledged only once on disk. Measured in the same run, alternating, several
// rounds each; the ratios are what to read.
//
// - Single writer: p50 latency of one write after another.
// - 16 writers: writes/s with 16 async loops each writing one after another. sql.js: transactions
//   run one at a time in memory, and the commits that arrive while an fsync runs share the next
//   one (group commit). better-sqlite3 is synchronous: each of its 16 loops runs a transaction
//   (fsync included) on the event loop and then yields one microtask, so it cannot overlap fsyncs
//   and its 16-writer figure is its one-writer throughput; that is what a Node server using it gets.
//
// Goals (issue 17): 16-writer throughput >= 1.0x better-sqlite3's, single-writer p50 <= 2x its.
//
//   node --import tsx bench/durable-writes.ts      (BENCH_SAMPLES, BENCH_SECONDS, BENCH_ROUNDS)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import type { CommissionRecord } from '../src/domain/records.js'
import { sqlJsStorage, type SqlJsStorage } from '../src/index.js'
import { searchText, SEARCH_COLUMN, quote } from '../src/storage/sql.js'
import { fieldsOf, toSql } from '../src/storage/sqljs/columns.js'
import { migrations } from '../src/storage/sqljs/migrations.js'
import { affiliate, commission } from '../src/storage/sample-records.js'
import { fileJournal } from '../adapters/node/file-journal.js'
import { fixed, percentile, sample, table } from './stats.js'

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WRITERS = 16

let serial = 0
/** A fresh commission of `affiliateId`, with the values that vary per sale varying. */
function sale(affiliateId: string): CommissionRecord {
  const i = ++serial
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
  return commission({
    affiliateId,
    referredUser: `Buyer${i}@example.com`,
    referredUserKey: `buyer${i}@example.com`,
    invoiceId: `in_${i}`,
    commissionDate: at,
    createdAt: at,
    updatedAt: at,
  })
}

interface Side {
  name: string
  /** One durable write; resolves once it is on disk. */
  write(): Promise<void>
  close(): Promise<void>
}

async function sqlJsSide(file: string): Promise<Side> {
  const storage: SqlJsStorage = sqlJsStorage({ persist: fileJournal(file) })
  const owner = affiliate()
  await storage.transaction((tx) => tx.insert('affiliates', owner))
  return {
    name: 'sql.js file',
    write: () =>
      storage.transaction(async (tx) => {
        await tx.insert('commissions', sale(owner.id))
        await tx.increment('affiliates', owner.id, { totalSignups: 1, totalEarningsMinor: 250 })
      }),
    close: () => storage.close(),
  }
}

function betterSqliteSide(file: string): Side {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  const settings = `journal_mode=${db.pragma('journal_mode', { simple: true })}, synchronous=${db.pragma('synchronous', { simple: true })}`
  if (settings !== 'journal_mode=wal, synchronous=2') throw new Error(`better-sqlite3 did not take the settings: ${settings}`)
  db.exec(migrations.map((migration) => migration.sql).join('\n'))
  const row = (model: 'affiliates' | 'commissions', record: Record<string, unknown>) => [
    ...fieldsOf(model).map(([field, kind]) => toSql(kind, record[field])),
    searchText(model, record),
  ]
  const insertSql = (model: 'affiliates' | 'commissions') => {
    const names = [...fieldsOf(model).map(([field]) => quote(field)), SEARCH_COLUMN]
    return `INSERT INTO ${quote(model)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`
  }
  const owner = affiliate()
  db.prepare(insertSql('affiliates')).run(row('affiliates', owner))
  const insert = db.prepare(insertSql('commissions'))
  const increment = db.prepare(
    'UPDATE affiliates SET "totalSignups" = "totalSignups" + ?, "totalEarningsMinor" = "totalEarningsMinor" + ? WHERE "id" = ?',
  )
  const write = db.transaction(() => {
    insert.run(row('commissions', sale(owner.id)))
    increment.run(1, 250, owner.id)
  })
  return {
    name: 'better-sqlite3 (WAL, synchronous=FULL)',
    write: async () => write(),
    close: async () => void db.close(),
  }
}

/** Writes/s of `writers` loops writing one after another for about SECONDS. */
async function concurrent(side: Side, writers: number): Promise<number> {
  let count = 0
  const start = performance.now()
  const deadline = start + SECONDS * 1000
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < deadline) {
        await side.write()
        count++
      }
    }),
  )
  return (count * 1000) / (performance.now() - start)
}

const median = (values: number[]) => percentile(values, 50)

export async function durableWritesBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-durable-'))
  try {
    const sides = [await sqlJsSide(join(dir, 'sqljs.sqlite')), betterSqliteSide(join(dir, 'native.sqlite'))]
    // Warm-up: long enough for sql.js's WebAssembly to reach its optimised tier.
    for (const side of sides) for (let i = 0; i < 1000; i++) await side.write()
    const p50s = new Map<Side, number[]>(sides.map((side) => [side, []]))
    const rates = new Map<Side, number[]>(sides.map((side) => [side, []]))
    // Alternating rounds, so a noisy second of the shared machine does not land on one side only.
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        p50s.get(side)!.push(percentile(await sample(Math.ceil(SAMPLES / ROUNDS), () => side.write()), 50))
        rates.get(side)!.push(await concurrent(side, WRITERS))
      }
    }
    for (const side of sides) await side.close()

    const [ours, native] = sides as [Side, Side]
    const figure = (side: Side) => ({ p50: median(p50s.get(side)!), rate: median(rates.get(side)!) })
    const [a, b] = [figure(ours), figure(native)]
    console.log(
      `\ndurable writes (commission insert + affiliate counter, one transaction), median of ${ROUNDS} rounds: ` +
        `p50 of ${Math.ceil(SAMPLES / ROUNDS)} writes one after another; writes/s of ${WRITERS} writers over ${SECONDS} s`,
    )
    table(
      sides.map((side) => ({
        storage: side.name,
        'single-writer p50 (ms)': fixed(figure(side).p50, 3),
        [`writes/s, ${WRITERS} writers`]: fixed(figure(side).rate, 0),
        'rounds (writes/s)': rates
          .get(side)!
          .map((rate) => fixed(rate, 0))
          .join(' '),
      })),
    )
    const throughputRatio = a.rate / b.rate
    const latencyRatio = a.p50 / b.p50
    console.log(
      `${WRITERS}-writer throughput, sql.js / better-sqlite3: ${fixed(throughputRatio, 2)}x (goal >= 1.0: ${throughputRatio >= 1 ? 'met' : 'not met'})`,
    )
    console.log(
      `single-writer p50, sql.js / better-sqlite3: ${fixed(latencyRatio, 2)}x (goal <= 2: ${latencyRatio <= 2 ? 'met' : 'not met'})`,
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await durableWritesBench()
