// Reports and exports (issue 18) on memory, a sql.js file and PostgreSQL (when
// AFFILIATE_TEST_POSTGRES_URL or AFFILIATE_BENCH_POSTGRES_URL is set). One workspace of 10 campaigns
// and 1,000 affiliates, its commissions and clicks spread over 180 days: first 10k commissions and
// 100k clicks, then 100k commissions and 1M clicks. Records go straight into the storage, and their
// rollups through the same `addToRollups` every write uses (each commission's figures and signup,
// ten clicks in its hour), so the reports read what the service would have kept.
// Goals:
// - `reports.summary` and a 90-day daily `reports.timeseries` answer in ≤ 20 ms p50 at 100k
//   commissions and 1M clicks, and grow ≤ 1.5x from 10k to 100k commissions;
// - `exports.commissions` of 100k commissions streams with the heap growing ≤ 20 MiB while it is read.
//
//   npm run bench -- reports
//   BENCH_ONLY=memory node --expose-gc --import tsx bench/reports.ts
import { fileURLToPath } from 'node:url'
import type { CommissionStatus } from '../src/domain/records.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, type Storage } from '../src/index.js'
import { addToRollups, commissionEntries, type RollupEntry } from '../src/reports/rollup.js'
import { affiliate, campaign, commission } from '../src/storage/sample-records.js'
import { fixed, percentile, sample, table } from './stats.js'
import { postgresTarget, sqlJsFileTarget, type Target } from './targets.js'

const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const SIZES = [10_000, 100_000].filter((n) => !process.env.BENCH_MAX || n <= Number(process.env.BENCH_MAX))
const CLICKS_PER_COMMISSION = 10
const CAMPAIGNS = 10
const AFFILIATES = 1_000
const BATCH = 5_000
const DAY = 86_400_000
const START = Date.UTC(2026, 0, 1)
const DAYS = 180
const SAMPLES = 200
const ROUNDS = 10
const GOAL_MS = 20
const GOAL_GROWTH = 1.5
const GOAL_EXPORT_MIB = 20
const STATUSES: CommissionStatus[] = ['pending', 'processing', 'paid', 'refunded']
const url = process.env.AFFILIATE_BENCH_POSTGRES_URL || process.env.AFFILIATE_TEST_POSTGRES_URL

const iso = (ms: number) => new Date(ms).toISOString()

/** Loads the workspace in transactions of BATCH commissions, each with its rollups. */
export async function load(storage: Storage, commissions: number): Promise<void> {
  const campaigns = Array.from({ length: CAMPAIGNS }, (_, i) =>
    campaign({ workspaceId: WORKSPACE, createdAt: iso(START + i), updatedAt: iso(START + i) }),
  )
  const people = Array.from({ length: AFFILIATES }, (_, i) =>
    affiliate({
      workspaceId: WORKSPACE,
      campaignId: campaigns[i % CAMPAIGNS]!.id,
      email: `person-${i}@example.com`,
      emailKey: `person-${i}@example.com`,
      createdAt: iso(START + i),
      updatedAt: iso(START + i),
    }),
  )
  await storage.transaction(async (tx) => {
    for (const record of campaigns) await tx.insert('campaigns', record)
    for (const record of people) await tx.insert('affiliates', record)
  })
  // Spread evenly over DAYS days, whatever the count: more commissions, the same hours.
  const step = (DAYS * DAY) / commissions
  for (let start = 0; start < commissions; start += BATCH) {
    await storage.transaction(async (tx) => {
      const entries: RollupEntry[] = []
      for (let i = start; i < Math.min(commissions, start + BATCH); i++) {
        const person = people[(i * 7919) % AFFILIATES]!
        const when = iso(START + Math.floor(i * step))
        const key = `buyer-${i}@example.com`
        const record = commission({
          workspaceId: WORKSPACE,
          campaignId: person.campaignId,
          affiliateId: person.id,
          referredUser: key,
          referredUserKey: key,
          amountMinor: 5_00 + (i % 17) * 25,
          status: STATUSES[i % STATUSES.length]!,
          commissionDate: when,
          dueAt: when,
          payoutId: null,
          createdAt: when,
          updatedAt: when,
        })
        await tx.insert('commissions', record)
        const scope = { workspaceId: WORKSPACE, campaignId: person.campaignId, affiliateId: person.id }
        entries.push(...commissionEntries(null, record), { scope, at: when, deltas: { signups: 1, clicks: CLICKS_PER_COMMISSION } })
      }
      await addToRollups(tx, entries)
    })
  }
}

interface Figures {
  summaryMs: number
  seriesMs: number
  exportMiB: number | null
}

interface Loaded {
  commissions: number
  api: ReturnType<typeof createAffiliateService>['api']
  dispose(): Promise<void>
  summary: number[]
  series: number[]
}

const PERIOD = { workspaceId: WORKSPACE, from: iso(START + 45 * DAY), to: iso(START + 135 * DAY) }
const summaryOf = (api: Loaded['api']) => api.reports.summary(PERIOD)
const seriesOf = (api: Loaded['api']) => api.reports.timeseries({ ...PERIOD, interval: 'day', timezone: 'Europe/Berlin' })

async function open(target: Target, commissions: number): Promise<Loaded> {
  const { storage, loaded, dispose } = await target.open(`${commissions}`)
  const loading = performance.now()
  await load(storage, commissions)
  await loaded?.()
  console.log(`  ${target.name}, ${commissions} commissions: loaded in ${fixed((performance.now() - loading) / 1000, 1)} s`)
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([{ key: 'bench-key', userId: WORKSPACE, workspaceIds: [WORKSPACE] }]),
    rateLimit: false,
    clock: { now: () => START + DAYS * DAY },
  })
  const api = service.api
  const summary = await summaryOf(api)
  const series = await seriesOf(api)
  // The answers are checked: half the clicks of the 180 days fall in the 90, and every day has some.
  const expectedClicks = commissions * CLICKS_PER_COMMISSION * 0.5
  if (
    Math.abs(summary.clicks - expectedClicks) > expectedClicks * 0.01 ||
    series.items.length !== 91 ||
    series.items.some((i) => i.clicks === 0)
  ) {
    throw new Error(`${target.name}: unexpected report ${JSON.stringify({ clicks: summary.clicks, buckets: series.items.length })}`)
  }
  return { commissions, api, dispose, summary: [], series: [] }
}

/**
 * Heap growth while the whole export is read, in MiB: the heap is measured after a full collection
 * every few pieces, so it counts what the stream holds, not garbage a collection would free.
 */
async function exportGrowth(target: Target, { api, commissions }: Loaded): Promise<number> {
  const gc = globalThis.gc
  if (!gc) throw new Error('run with --expose-gc (npm run bench does)')
  for (let i = 0; i < 3; i++) gc()
  const before = process.memoryUsage().heapUsed
  let peak = before
  const file = await api.exports.commissions({ workspaceId: WORKSPACE })
  const reader = file.body.getReader()
  const decoder = new TextDecoder()
  let lines = 0
  for (let piece = 0; ; piece++) {
    const { done, value } = await reader.read()
    if (done) break
    const text = decoder.decode(value, { stream: true })
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++
    if (piece % 5 === 0) {
      gc()
      peak = Math.max(peak, process.memoryUsage().heapUsed)
    }
  }
  if (lines - 1 !== commissions) throw new Error(`${target.name}: the export has ${lines - 1} rows, not ${commissions}`)
  return (peak - before) / 2 ** 20
}

/** Both sizes loaded side by side, their calls interleaved in rounds, so the machine's noise falls on both alike. */
async function measure(target: Target): Promise<Figures[]> {
  const stores: Loaded[] = []
  try {
    for (const commissions of SIZES) stores.push(await open(target, commissions))
    for (const store of stores) for (let i = 0; i < 10; i++) await Promise.all([summaryOf(store.api), seriesOf(store.api)])
    for (let round = 0; round < ROUNDS; round++) {
      for (const store of stores) {
        store.summary.push(...(await sample(SAMPLES / ROUNDS, () => summaryOf(store.api))))
        store.series.push(...(await sample(SAMPLES / ROUNDS, () => seriesOf(store.api))))
      }
    }
    const out: Figures[] = []
    for (const store of stores) {
      const last = store === stores[stores.length - 1]
      out.push({
        summaryMs: percentile(store.summary, 50),
        seriesMs: percentile(store.series, 50),
        exportMiB: last ? await exportGrowth(target, store) : null,
      })
    }
    return out
  } finally {
    for (const store of stores) await store.dispose()
  }
}

const targets: Target[] = [
  {
    name: 'memory',
    async open() {
      const storage = memoryStorage()
      return { storage, dispose: async () => {} }
    },
  },
  sqlJsFileTarget('reports'),
]
if (url) targets.push(postgresTarget(url, 'reports', ['commissions', 'rollups']))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = []
  let failures = 0
  const verdict = (met: boolean) => {
    if (!met) failures++
    return met ? 'met' : 'NOT met'
  }
  for (const target of targets.filter((t) => !process.env.BENCH_ONLY || t.name.includes(process.env.BENCH_ONLY))) {
    const results = await measure(target)
    for (const [i, commissions] of SIZES.entries()) {
      const figures = results[i]!
      const last = SIZES.length > 1 && i === SIZES.length - 1
      const growth = (pick: (f: Figures) => number) => pick(figures) / pick(results[0]!)
      rows.push({
        storage: target.name,
        commissions,
        clicks: commissions * CLICKS_PER_COMMISSION,
        'summary p50 ms': fixed(figures.summaryMs, 2),
        '90-day series p50 ms': fixed(figures.seriesMs, 2),
        [`vs ${GOAL_MS} ms goal`]: `${fixed(Math.max(figures.summaryMs, figures.seriesMs) / GOAL_MS, 2)}x ${verdict(figures.summaryMs <= GOAL_MS && figures.seriesMs <= GOAL_MS)}`,
        'growth vs 10k (summary, series)': last
          ? `${fixed(
              growth((f) => f.summaryMs),
              2,
            )}x, ${fixed(
              growth((f) => f.seriesMs),
              2,
            )}x`
          : '',
        [`growth goal ≤ ${GOAL_GROWTH}x`]: last
          ? verdict(growth((f) => f.summaryMs) <= GOAL_GROWTH && growth((f) => f.seriesMs) <= GOAL_GROWTH)
          : '',
        'export heap growth MiB': figures.exportMiB === null ? '' : fixed(figures.exportMiB, 1),
        [`vs ${GOAL_EXPORT_MIB} MiB goal`]:
          figures.exportMiB === null
            ? ''
            : `${fixed(figures.exportMiB / GOAL_EXPORT_MIB, 2)}x ${verdict(figures.exportMiB <= GOAL_EXPORT_MIB)}`,
      })
    }
    // Each storage's rows as soon as it is done (PostgreSQL takes minutes to load), then all of them.
    table(rows.filter((row) => row.storage === target.name))
  }
  console.log(
    `\nreports: one workspace, ${CAMPAIGNS} campaigns, ${AFFILIATES} affiliates, commissions and clicks over ${DAYS} days; p50 of ${SAMPLES} calls of service.api each, both sizes loaded and measured in ${ROUNDS} interleaved rounds`,
  )
  table(rows)
  if (!url) console.log('  PostgreSQL skipped: set AFFILIATE_TEST_POSTGRES_URL (or AFFILIATE_BENCH_POSTGRES_URL)')
  console.log(failures ? `reports: ${failures} goal(s) NOT met` : 'reports: every goal met')
  if (failures) process.exitCode = 1
}
