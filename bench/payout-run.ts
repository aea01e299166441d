// One payout run over many due commissions (issue 15): 10k commissions of 1k affiliates, then 100k
// of 10k, each on a fresh sql.js file (durable, file journal) and on a fresh PostgreSQL schema
// (when AFFILIATE_TEST_POSTGRES_URL or AFFILIATE_BENCH_POSTGRES_URL is set). The records are loaded
// straight through the storage with the report rollups the API would have moved, then one `service.api.payouts.run({ workspaceId })` is timed and
// its answer checked (one payout per affiliate, the total the sum of the commissions).
// Goals (issue 15, restated in issue 27): on the sql.js file the run at 100k takes at most 10 s,
// and its time per commission at 100k is at most 1.2x that at 10k; PostgreSQL is reported.
//
//   npm run bench -- payout-run
//   node --import tsx bench/payout-run.ts           (BENCH_ROUNDS=3: best of three fresh loads per size)
import { fileURLToPath } from 'node:url'
import type { CommissionRecord, PayoutMethod } from '../src/domain/records.js'
import { addToRollups, commissionEntries } from '../src/reports/rollup.js'
import { createAffiliateService, memoryKeyStore, type Storage } from '../src/index.js'
import { affiliate, at, campaign, commission } from '../src/storage/sample-records.js'
import { fixed, table } from './stats.js'
import { postgresTarget, sqlJsFileTarget, type Target } from './targets.js'

export const WORKSPACE = '11111111-1111-4111-8111-111111111111'
export const KEY = 'bench-key'
/** [commissions, affiliates]: ten commissions per affiliate. */
const SIZES = (
  [
    [10_000, 1_000],
    [100_000, 10_000],
  ] as const
).filter(([commissions]) => !process.env.BENCH_MAX || commissions <= Number(process.env.BENCH_MAX))
const CAMPAIGNS = 10
const WINDOW_SECONDS = 30 * 86_400
const BATCH = 5000
const GOAL_SECONDS = 10
const GOAL_GROWTH = 1.2
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const METHODS: PayoutMethod[] = ['PAYPAL', 'WISE', 'BANK_TRANSFER']
const url = process.env.AFFILIATE_BENCH_POSTGRES_URL || process.env.AFFILIATE_TEST_POSTGRES_URL

export type { Target }

/** Loads the workspace in batches of one transaction each; answers the sum of the commissions, in minor units. */
export async function load(storage: Storage, commissions: number, affiliates: number): Promise<number> {
  const campaigns = Array.from({ length: CAMPAIGNS }, (_, i) =>
    campaign({ workspaceId: WORKSPACE, minimumPayoutMinor: 0, createdAt: at(i), updatedAt: at(i) }),
  )
  const people = Array.from({ length: affiliates }, (_, i) =>
    affiliate({
      workspaceId: WORKSPACE,
      campaignId: campaigns[i % CAMPAIGNS]!.id,
      email: `person-${i}@example.com`,
      emailKey: `person-${i}@example.com`,
      payoutEmail: `pay-${i}@example.com`,
      payoutMethod: METHODS[i % METHODS.length]!,
      createdAt: at(i),
      updatedAt: at(i),
    }),
  )
  await storage.transaction(async (tx) => {
    for (const record of campaigns) await tx.insert('campaigns', record)
  })
  for (let start = 0; start < affiliates; start += BATCH) {
    await storage.transaction(async (tx) => {
      for (const record of people.slice(start, start + BATCH)) await tx.insert('affiliates', record)
    })
  }
  let sum = 0
  for (let start = 0; start < commissions; start += BATCH) {
    await storage.transaction(async (tx) => {
      const made: CommissionRecord[] = []
      for (let i = start; i < Math.min(commissions, start + BATCH); i++) {
        const person = people[i % affiliates]!
        const amountMinor = 5_00 + (i % 17) * 25
        sum += amountMinor
        const key = `buyer-${i}@example.com`
        // Spread evenly over the same 30 days at every size, so each affiliate's ten commissions
        // fall in ten different hours and days at 10k as at 100k (the same rollup rows per commission).
        const commissionDate = at(Math.floor((i * WINDOW_SECONDS) / commissions))
        const record = commission({
          workspaceId: WORKSPACE,
          campaignId: person.campaignId,
          affiliateId: person.id,
          referredUser: key,
          referredUserKey: key,
          amountMinor,
          status: 'pending',
          // Due at once (a payout term of 0), in 2026: well before the run's clock.
          commissionDate,
          dueAt: commissionDate,
          payoutId: null,
          createdAt: commissionDate,
          updatedAt: commissionDate,
        })
        await tx.insert('commissions', record)
        made.push(record)
      }
      // The report rollups the API's create would have moved, so the run finds its rows in place.
      await addToRollups(
        tx,
        made.flatMap((record) => commissionEntries(null, record)),
      )
    })
  }
  return sum
}

const minor = (amount: string): number => Math.round(Number(amount) * 100)

/** Seconds of one payout run over a freshly loaded store, its answer checked. */
async function runOnce(target: Target, commissions: number, affiliates: number): Promise<number> {
  const { storage, loaded, dispose } = await target.open(`${commissions}`)
  try {
    const loading = performance.now()
    const sum = await load(storage, commissions, affiliates)
    await loaded?.()
    console.log(`  ${target.name}, ${commissions} commissions: loaded in ${fixed((performance.now() - loading) / 1000, 1)} s`)
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([{ key: KEY, userId: WORKSPACE, workspaceIds: [WORKSPACE] }]),
      rateLimit: false,
      clock: { now: () => Date.UTC(2027, 0, 1) },
    })
    globalThis.gc?.()
    const start = performance.now()
    const cpuStart = process.cpuUsage()
    const result = await service.api.payouts.run({ workspaceId: WORKSPACE })
    const seconds = (performance.now() - start) / 1000
    const { user, system } = process.cpuUsage(cpuStart)
    const total = result.payouts.reduce((s, p) => s + minor(p.amount), 0)
    const counted = result.payouts.reduce((s, p) => s + p.commissionCount, 0)
    if (result.payouts.length !== affiliates || result.skipped.length !== 0 || total !== sum || counted !== commissions) {
      throw new Error(
        `${target.name}: the run answered ${result.payouts.length} payouts of ${counted} commissions totalling ${total} (${result.skipped.length} skipped); expected ${affiliates} of ${commissions} totalling ${sum}`,
      )
    }
    console.log(
      `  ${target.name}, ${commissions} commissions: run in ${fixed(seconds, 2)} s (${fixed((user + system) / 1e6, 2)} s CPU of this process)`,
    )
    return seconds
  } finally {
    await dispose()
  }
}

export const targets: Target[] = [sqlJsFileTarget('payouts')]
if (url) targets.push(postgresTarget(url, 'payouts', ['commissions', 'affiliates']))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = []
  let failures = 0
  for (const target of targets.filter((t) => !process.env.BENCH_ONLY || t.name.includes(process.env.BENCH_ONLY))) {
    const perCommission: number[] = []
    for (const [commissions, affiliates] of SIZES) {
      let best = Infinity
      for (let round = 0; round < ROUNDS; round++) best = Math.min(best, await runOnce(target, commissions, affiliates))
      const us = (best * 1e6) / commissions
      perCommission.push(us)
      const last = SIZES.length > 1 && commissions === SIZES[SIZES.length - 1]![0]
      const growth = last ? us / perCommission[0]! : NaN
      // The goals are the sql.js file's, at the largest size; the rest is reported.
      const judged = target.name.startsWith('sql.js') && last
      const timeMet = best <= GOAL_SECONDS
      const growthMet = growth <= GOAL_GROWTH
      if (judged && (!timeMet || !growthMet)) failures++
      rows.push({
        storage: target.name,
        commissions,
        affiliates,
        's per run': fixed(best, 2),
        'µs per commission': fixed(us, 1),
        [`s goal (≤ ${GOAL_SECONDS} at 100k, sql.js)`]: judged ? (timeMet ? 'met' : 'NOT met') : last ? 'reported' : '',
        'growth vs 10k': last ? `${fixed(growth, 2)}x` : '',
        [`growth goal (≤ ${GOAL_GROWTH}x, sql.js)`]: judged ? (growthMet ? 'met' : 'NOT met') : last ? 'reported' : '',
      })
    }
  }
  console.log(
    `\npayout run: one service.api.payouts.run over every due commission of one workspace (${CAMPAIGNS} campaigns, 10 commissions per affiliate), best of ${ROUNDS} fresh load(s)`,
  )
  table(rows)
  if (!url) console.log('  PostgreSQL skipped: set AFFILIATE_TEST_POSTGRES_URL (or AFFILIATE_BENCH_POSTGRES_URL)')
  console.log(failures ? `payout run: ${failures} goal(s) NOT met` : 'payout run: every goal met')
}
