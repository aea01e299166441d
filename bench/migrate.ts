// Moving to PostgreSQL (issue 44): `affiliate-service migrate --from <the sql.js file> --to
// <PostgreSQL>` over 1M records, most of them clicks, as a program that outgrew one machine has
// them. Goals (issue 44): at least 20,000 records a second, and a peak resident memory at most
// 300 MiB above the command's start.
//
// 1. A child fills a sql.js file (in batches, straight through the storage): 10 campaigns, 2,000
//    affiliates and links, 40,000 commissions, 10,000 customers and sales, 20,000 events and their
//    counter, 20,000 report rollups, and clicks for the rest, over 30 days.
// 2. The command itself, from the build (`npm run build` first; AFFILIATE_BENCH_DIST=0: the
//    sources through tsx), runs in a child that loads the command's modules, notes its resident
//    size (the start), runs it, and reads its peak (`maxRSS`) when it exits: the copy, the
//    verification that reads every model back from PostgreSQL, and the close. Its records per
//    second count the whole command; the peak is also given above the bare process.
// 3. For reference, in the same run: `export` of the same file to /dev/null (reading and hashing
//    alone).
//
//   AFFILIATE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- migrate
//   (BENCH_RECORDS=1000000; AFFILIATE_BENCH_POSTGRES_URL names another server)
import { execSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const POSTGRES_URL = process.env.AFFILIATE_BENCH_POSTGRES_URL || process.env.AFFILIATE_TEST_POSTGRES_URL
const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000)
const GOAL_RATE = 20_000
const GOAL_MIB = 300
const MIB = 1024 * 1024
const DAY = 86_400_000
const START = Date.UTC(2026, 0, 1)
const WORKSPACE = '11111111-1111-4111-8111-111111111111'

/** Records of each model but clicks, for `RECORDS` = 1M (scaled with it); clicks are the rest. */
const SHARES = {
  campaigns: 10,
  affiliates: 2_000,
  links: 2_000,
  commissions: 40_000,
  customers: 10_000,
  sales: 10_000,
  events: 20_000,
  rollups: 20_000,
}

/** Child: fills `file` with `records` records (see the top); prints how many of each. */
async function fill(file: string, records: number): Promise<void> {
  const { fileJournal } = await import('../adapters/node/file-journal.js')
  const { sqlJsStorage } = await import('../src/index.js')
  const samples = await import('../src/storage/sample-records.js')
  const { timeUuid } = await import('../src/tracking/click-ids.js')
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  const scale = records / 1_000_000
  const n = Object.fromEntries(Object.entries(SHARES).map(([model, count]) => [model, Math.max(1, Math.round(count * scale))])) as Record<
    keyof typeof SHARES,
    number
  >
  const clicks = records - Object.values(n).reduce((a, b) => a + b, 0) - 1
  const when = (i: number, of: number) => new Date(START + Math.floor((i / of) * 30 * DAY)).toISOString()
  const write = async (model: string, count: number, make: (i: number) => Record<string, unknown>) => {
    for (let start = 0; start < count; start += 50_000) {
      const batch = Array.from({ length: Math.min(50_000, count - start) }, (_, j) => make(start + j))
      await storage.transaction((tx) => tx.insertMany(model as never, batch as never))
    }
  }
  const campaigns = Array.from({ length: n.campaigns }, () => crypto.randomUUID())
  const affiliates = Array.from({ length: n.affiliates }, () => crypto.randomUUID())
  const links = Array.from({ length: n.links }, () => crypto.randomUUID())
  await write('campaigns', n.campaigns, (i) =>
    samples.campaign({ id: campaigns[i]!, workspaceId: WORKSPACE, createdAt: when(i, n.campaigns), updatedAt: when(i, n.campaigns) }),
  )
  await write('affiliates', n.affiliates, (i) =>
    samples.affiliate({
      id: affiliates[i]!,
      workspaceId: WORKSPACE,
      campaignId: campaigns[i % n.campaigns]!,
      email: `person-${i}@example.com`,
      emailKey: `person-${i}@example.com`,
      createdAt: when(i, n.affiliates),
      updatedAt: when(i, n.affiliates),
    }),
  )
  await write('links', n.links, (i) =>
    samples.link({
      id: links[i]!,
      workspaceId: WORKSPACE,
      campaignId: campaigns[i % n.campaigns]!,
      affiliateId: affiliates[i % n.affiliates]!,
      referralCode: `CODE-${i}`,
      createdAt: when(i, n.links),
      updatedAt: when(i, n.links),
    }),
  )
  await write('commissions', n.commissions, (i) =>
    samples.commission({
      id: crypto.randomUUID(),
      workspaceId: WORKSPACE,
      campaignId: campaigns[i % n.campaigns]!,
      affiliateId: affiliates[i % n.affiliates]!,
      referredUser: `buyer-${i}@example.com`,
      referredUserKey: `buyer-${i}@example.com`,
      commissionDate: when(i, n.commissions),
      createdAt: when(i, n.commissions),
      updatedAt: when(i, n.commissions),
    }),
  )
  await write('customers', n.customers, (i) =>
    samples.customer({
      id: crypto.randomUUID(),
      workspaceId: WORKSPACE,
      campaignId: campaigns[i % n.campaigns]!,
      affiliateId: affiliates[i % n.affiliates]!,
      externalId: `user-${i}`,
      createdAt: when(i, n.customers),
      updatedAt: when(i, n.customers),
    }),
  )
  await write('sales', n.sales, (i) =>
    samples.sale({
      id: crypto.randomUUID(),
      workspaceId: WORKSPACE,
      invoiceId: `in_${i}`,
      createdAt: when(i, n.sales),
      updatedAt: when(i, n.sales),
    }),
  )
  await write('events', n.events, (i) =>
    samples.event({ id: crypto.randomUUID(), workspaceId: WORKSPACE, sequence: i + 1, createdAt: when(i, n.events) }),
  )
  await write('sequences', 1, () => samples.sequence({ id: 'events', value: n.events }))
  await write('rollups', n.rollups, (i) =>
    samples.rollup({ id: crypto.randomUUID(), workspaceId: WORKSPACE, createdAt: when(i, n.rollups) }),
  )
  // Click ids are time-ordered, as the tracker makes them (keyedTimeUuid).
  await write('clicks', clicks, (i) => {
    const createdAt = when(i, clicks)
    return samples.click({
      id: timeUuid(Date.parse(createdAt)),
      linkId: links[i % n.links]!,
      visitor: `v${(i % 200_000).toString(36).padStart(21, '0')}`,
      createdAt,
    })
  })
  await storage.close()
  console.log(JSON.stringify({ ...n, sequences: 1, clicks }))
}

/**
 * Child: loads the command's modules, notes its resident size (the start), runs the command from
 * the build (or the sources) with `args`, and on exit prints `bench rss <process start> <start>
 * <peak>` (bytes) and `ms <from the start>` to standard error.
 */
async function command(args: string[]): Promise<void> {
  const processStart = process.memoryUsage().rss
  const dist = process.env.AFFILIATE_BENCH_DIST === '1'
  // What the command imports, loaded first: the start is the command ready to open the databases.
  await (dist
    ? Promise.all([
        import('../dist/index.js' as string),
        import('../dist/adapters/node.js' as string),
        import('../dist/adapters/postgres.js' as string),
        import('pg'),
      ])
    : Promise.all([import('../src/index.js'), import('../adapters/node.js'), import('../adapters/postgres.js'), import('pg')]))
  const start = process.memoryUsage().rss
  const started = performance.now()
  process.on('exit', () => {
    process.stderr.write(
      `\nbench rss ${processStart} ${start} ${process.resourceUsage().maxRSS * 1024} ms ${(performance.now() - started).toFixed(0)}\n`,
    )
  })
  process.argv = [process.argv[0]!, 'affiliate-service', ...args]
  await import(dist ? ('../dist/bin/cli.js' as string) : '../bin/cli.ts')
}

/** Runs this file as a child in `mode`; answers its exit code, output and measures. */
function child(
  mode: string,
  args: string[],
  stdout: 'pipe' | 'ignore' = 'pipe',
): Promise<{ out: string; err: string; processRss: number; startRss: number; peakRss: number; ms: number }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), mode, ...args], {
    stdio: ['ignore', stdout, 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout?.on('data', (data: Buffer) => (out += data.toString()))
  proc.stderr!.on('data', (data: Buffer) => (err += data.toString()))
  return new Promise((resolve, reject) =>
    proc.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${mode} ${args.join(' ')} exited ${code}:\n${out}\n${err}`))
      const [, processStart, start, peak, ms] = /bench rss (\d+) (\d+) (\d+) ms (\d+)/.exec(err) ?? []
      resolve({
        out,
        err,
        processRss: Number(processStart ?? 0),
        startRss: Number(start ?? 0),
        peakRss: Number(peak ?? 0),
        ms: Number(ms ?? 0),
      })
    }),
  )
}

async function main(): Promise<void> {
  if (!POSTGRES_URL) {
    console.log('skipped: set AFFILIATE_TEST_POSTGRES_URL (or AFFILIATE_BENCH_POSTGRES_URL) to move the records to a PostgreSQL')
    return
  }
  if (process.env.AFFILIATE_BENCH_DIST !== '0') {
    execSync('npm run build', { stdio: 'ignore' })
    process.env.AFFILIATE_BENCH_DIST = '1'
  }
  console.log(
    `the command runs from ${process.env.AFFILIATE_BENCH_DIST === '1' ? 'dist/ (npm run build)' : 'the TypeScript sources (tsx)'}`,
  )
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-migrate-bench-'))
  const file = join(dir, 'affiliate.sqlite')
  const schema = `aff_bench_migrate_${process.pid}`
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 })
  try {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    const filled = JSON.parse((await child('fill', [file, String(RECORDS)])).out.trim().split('\n').at(-1)!) as Record<string, number>
    const size = statSync(file).size
    console.log(
      `source: ${RECORDS.toLocaleString('en')} records in a sql.js file of ${(size / MIB).toFixed(0)} MiB (${Object.entries(filled)
        .map(([model, count]) => `${model} ${count.toLocaleString('en')}`)
        .join(', ')})`,
    )

    const exported = await child('command', ['export', '--db', file], 'ignore')
    console.log(
      `reference, export to /dev/null: ${(exported.ms / 1000).toFixed(1)} s, ${Math.round(RECORDS / (exported.ms / 1000)).toLocaleString('en')} records/s, peak +${((exported.peakRss - exported.startRss) / MIB).toFixed(0)} MiB`,
    )

    const moved = await child('command', ['migrate', '--from', file, '--to', POSTGRES_URL, '--to-schema', schema])
    if (!/^Moved [\d,]+ records: every model's count and SHA-256/m.test(moved.out)) throw new Error(`migrate did not verify:\n${moved.out}`)
    const rate = RECORDS / (moved.ms / 1000)
    const peak = (moved.peakRss - moved.startRss) / MIB
    console.log(`migrate to PostgreSQL (copy, read-back verification, close): ${(moved.ms / 1000).toFixed(1)} s`)
    console.log(
      `  ${Math.round(rate).toLocaleString('en')} records/s   goal ≥ ${GOAL_RATE.toLocaleString('en')}: ${rate >= GOAL_RATE ? 'met' : 'NOT met'} (${(rate / GOAL_RATE).toFixed(2)}x the goal)`,
    )
    console.log(
      `  peak resident +${peak.toFixed(0)} MiB above the start (${(moved.startRss / MIB).toFixed(0)} → ${(moved.peakRss / MIB).toFixed(0)} MiB; ` +
        `+${((moved.peakRss - moved.processRss) / MIB).toFixed(0)} MiB above the bare process, its modules included; the file is ${(size / MIB).toFixed(0)} MiB)   ` +
        `goal ≤ ${GOAL_MIB}: ${peak <= GOAL_MIB ? 'met' : 'NOT met'}`,
    )
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined)
    await pool.end()
    rmSync(dir, { recursive: true, force: true })
  }
}

const [mode, ...args] = process.argv.slice(2)
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const run = mode === 'fill' ? fill(args[0]!, Number(args[1])) : mode === 'command' ? command(args) : main()
  run.catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
