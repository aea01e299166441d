// Durable writes of the sql.js file storage at 1k and at 100k records, and reopening the file.
// Every figure at 100k is printed as a ratio to the same figure at 1k, measured in the same run.
// Goal: a durable write costs the same at 100k as at 1k (the journal appends only the
// transaction; folding it into the file runs in the background). For contrast, the same write
// through the load/save form, which rewrites the whole file per write, grows with the database.
//
//   node --import tsx bench/storage-writes.ts        (BENCH_SAMPLES=1000 for steadier tails)
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { open, rename } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AffiliateRecord } from '../src/domain/records.js'
import { sqlJsStorage, type SqlJsStorage } from '../src/index.js'
import { fixed, percentile, sample, table } from './stats.js'
import { fileJournal } from '../adapters/node/file-journal.js'

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300)
const SIZES = [1_000, 100_000] as const
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const CAMPAIGN = '22222222-2222-4222-8222-222222222222'

let serial = 0
function affiliate(): AffiliateRecord {
  const i = ++serial
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
  return {
    id: crypto.randomUUID(),
    workspaceId: WORKSPACE,
    campaignId: CAMPAIGN,
    email: `user-${i}@example.com`,
    emailKey: `user-${i}@example.com`,
    firstName: `First${i}`,
    lastName: `Last${i}`,
    notes: 'a note of some length',
    payoutEmail: `pay-${i}@example.com`,
    payoutMethod: 'PAYPAL',
    details: null,
    isActive: true,
    isBanned: false,
    portalDevices: [],
    refundWindow: [],
    totalOpens: 0,
    totalClicks: 0,
    totalSignups: 0,
    totalEarningsMinor: 0,
    createdAt: at,
    updatedAt: at,
  }
}

/** One write as the API makes them: a new record and a counter moved on another, in one transaction. */
const write = (storage: SqlJsStorage, counterId: string) =>
  storage.transaction(async (tx) => {
    await tx.insert('affiliates', affiliate())
    await tx.increment('affiliates', counterId, { totalSignups: 1, totalEarningsMinor: 1250 })
  })

async function fill(storage: SqlJsStorage, size: number): Promise<string> {
  let first = ''
  for (let start = 0; start < size; start += 5000) {
    await storage.transaction(async (tx) => {
      for (let i = start; i < Math.min(size, start + 5000); i++) {
        const record = affiliate()
        first ||= record.id
        await tx.insert('affiliates', record)
      }
    })
  }
  return first
}

/** Writes bytes to `file` the way a whole-file save must to survive a crash: temp file, fsync, rename. */
async function saveWhole(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(`${file}.tmp`, 'w')
  try {
    await handle.write(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(`${file}.tmp`, file)
}

interface Figures {
  [metric: string]: number
}

async function measure(size: number, dir: string): Promise<Figures> {
  const file = join(dir, `bench-${size}.sqlite`)
  const filling = sqlJsStorage({ persist: fileJournal(file) })
  const counterId = await fill(filling, size)
  await filling.close()
  const fileBytes = statSync(file).size

  let start = performance.now()
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  await storage.ready()
  const reopen = performance.now() - start

  for (let i = 0; i < 20; i++) await write(storage, counterId)
  const latencies = await sample(SAMPLES, () => write(storage, counterId))

  // Sixteen clients at once: one fsync covers the commits that queued behind the previous one.
  const writers = 16
  const each = Math.max(10, Math.floor(SAMPLES / writers))
  start = performance.now()
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let i = 0; i < each; i++) await write(storage, counterId)
    }),
  )
  const concurrent = (writers * each * 1000) / (performance.now() - start)

  // Folding the journal into the file: what runs in the background once the journal is as large
  // as the file, so it is paid once per (file size) of journal, not per write.
  start = performance.now()
  await storage.close()
  const fold = performance.now() - start

  // The same writes through the load/save form, which saves the whole database per write.
  const wholeFile = join(dir, `whole-${size}.sqlite`)
  const { readFile } = await import('node:fs/promises')
  const whole = sqlJsStorage({ load: async () => new Uint8Array(await readFile(file)), save: (bytes) => saveWhole(wholeFile, bytes) })
  await whole.ready()
  const wholeLatencies = await sample(Math.max(10, Math.floor(SAMPLES / 10)), () => write(whole, counterId))
  await whole.close()

  return {
    'write p50 (ms)': percentile(latencies, 50),
    'write p99 (ms)': percentile(latencies, 99),
    'writes/s, 16 concurrent': concurrent,
    'reopen (ms)': reopen,
    'fold into file (ms)': fold,
    'file (MB)': fileBytes / 1e6,
    'whole-file save per write p50 (ms)': percentile(wholeLatencies, 50),
  }
}

export async function storageWritesBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-bench-'))
  try {
    const results: Figures[] = []
    for (const size of SIZES) results.push(await measure(size, dir))
    const [small, large] = results as [Figures, Figures]
    console.log(`\nsql.js file storage, durable writes (fsync per acknowledged write), ${SAMPLES} samples`)
    table(
      Object.keys(small).map((metric) => ({
        metric,
        '1k': fixed(small[metric]!, 2),
        '100k': fixed(large[metric]!, 2),
        '100k / 1k': fixed(large[metric]! / small[metric]!, 2),
      })),
    )
    const goal = large['write p50 (ms)']! / small['write p50 (ms)']!
    console.log(`durable write p50 at 100k is ${fixed(goal, 2)}x the 1k figure (goal: at most 2x)`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await storageWritesBench()
