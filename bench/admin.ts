// The admin dashboard (issue 31): each page's p50 through service.fetch on the sql.js file, with
// 100k commissions and 10k affiliates in one workspace (10 campaigns, 180 days, their rollups
// written by the same `addToRollups` every write uses). Goal: every page <= 50 ms p50, the lists
// with each of their filters (which query the storage) included.
//
//   npm run bench -- admin
import { fileURLToPath } from 'node:url'
import type { CommissionStatus } from '../src/domain/records.js'
import { createAffiliateService, memoryKeyStore, type Storage } from '../src/index.js'
import { addToRollups, commissionEntries, type RollupEntry } from '../src/reports/rollup.js'
import { affiliate, campaign, commission } from '../src/storage/sample-records.js'
import { fixed, percentile, sample, table } from './stats.js'
import { sqlJsFileTarget } from './targets.js'

const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const COMMISSIONS = Number(process.env.BENCH_COMMISSIONS ?? 100_000)
const AFFILIATES = Number(process.env.BENCH_AFFILIATES ?? 10_000)
const CAMPAIGNS = 10
const BATCH = 5_000
const DAY = 86_400_000
const START = Date.UTC(2026, 0, 1)
const DAYS = 180
const SAMPLES = 60
const GOAL_MS = 50
const STATUSES: CommissionStatus[] = ['pending', 'processing', 'paid', 'refunded']
const iso = (ms: number) => new Date(ms).toISOString()

async function load(storage: Storage): Promise<{ someone: string; campaignId: string; commissionId: string }> {
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
  const step = (DAYS * DAY) / COMMISSIONS
  for (let start = 0; start < COMMISSIONS; start += BATCH) {
    await storage.transaction(async (tx) => {
      const entries: RollupEntry[] = []
      for (let i = start; i < Math.min(COMMISSIONS, start + BATCH); i++) {
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
        entries.push(...commissionEntries(null, record), {
          scope: { workspaceId: WORKSPACE, campaignId: person.campaignId, affiliateId: person.id },
          at: when,
          deltas: { signups: 1, clicks: 10 },
        })
      }
      await addToRollups(tx, entries)
    })
  }
  const [latest] = await storage.transaction((tx) => tx.find('commissions', { where: { affiliateId: people[0]!.id }, limit: 1 }), {
    readOnly: true,
  })
  return { someone: people[0]!.id, campaignId: campaigns[0]!.id, commissionId: latest!.id }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = sqlJsFileTarget('admin')
  const { storage, dispose } = await target.open(`${COMMISSIONS}`)
  try {
    const loading = performance.now()
    const { someone, campaignId, commissionId } = await load(storage)
    console.log(
      `  sql.js file: ${COMMISSIONS} commissions, ${AFFILIATES} affiliates loaded in ${fixed((performance.now() - loading) / 1000, 1)} s`,
    )
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([]),
      rateLimit: false,
      clock: { now: () => START + DAYS * DAY },
      admin: { authorize: () => ({ userId: 'owner', workspaceIds: [WORKSPACE] }), secret: 'b'.repeat(32) },
    })
    const pages = [
      '/admin',
      '/admin?days=90',
      '/admin/campaigns',
      '/admin/affiliates',
      '/admin/affiliates?status=pending',
      '/admin/affiliates?status=active',
      `/admin/affiliates/detail?affiliateId=${someone}`,
      '/admin/commissions',
      '/admin/commissions?status=paid',
      '/admin/commissions?kind=sale',
      '/admin/commissions?kind=clawback',
      '/admin/commissions?from=2026-05-01&to=2026-05-31',
      '/admin/commissions?status=paid&from=2026-05-01&to=2026-05-31',
      '/admin/payouts',
      '/admin/settings/integrations',
      // Issue 38: a year and more on the overview (weekly), a campaign's page with its rules and links, a commission's with its sale and history.
      '/admin?from=2025-07-01&to=2026-08-04',
      `/admin/campaigns/edit?campaignId=${campaignId}`,
      `/admin/commissions/detail?commissionId=${commissionId}`,
    ]
    const get = async (path: string) => {
      const response = await service.fetch(new Request(`http://bench${path}`))
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
      await response.text()
    }
    for (const path of pages) for (let i = 0; i < 5; i++) await get(path)
    const rows = []
    for (const path of pages) {
      const times = await sample(SAMPLES, () => get(path))
      const p50 = percentile(times, 50)
      rows.push({
        page: path.replace(someone, '<id>').replace(campaignId, '<id>').replace(commissionId, '<id>'),
        'p50 ms': fixed(p50, 1),
        'p95 ms': fixed(percentile(times, 95), 1),
        goal: p50 <= GOAL_MS ? `ok (<= ${GOAL_MS})` : `MISSED (> ${GOAL_MS})`,
      })
    }
    table(rows)
  } finally {
    await dispose()
  }
}
