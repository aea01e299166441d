// Cost growth: p50/p99 of a by-id read, a list page (createdAt DESC, page 2, limit 10), a filtered
// list, a `contains` search and a commission create, at 1k and at 100k affiliates (each with a
// commission), on each storage; and resident memory per 100k affiliates. Every figure at 100k is
// printed as a ratio to the same figure at 1k, measured in the same run.
// Goals: by-id and list pages grow at most 2x; a search at 100k answers within 50 ms p50; a
// commission create grows at most 2x.
//
//   node --expose-gc --import tsx bench/growth.ts          (BENCH_SAMPLES=500 for steadier tails)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, type Storage } from '../src/index.js'
import type { AffiliateRecord, CommissionRecord } from '../src/domain/records.js'
import { fixed, percentile, sample, table } from './stats.js'
import { fileJournal } from '../adapters/node/file-journal.js'

const KEY = 'bench-key'
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)
const STATUSES = ['pending', 'processing', 'paid', 'refunded'] as const

export interface StorageUnderTest {
  name: string
  open(size: number): Promise<Storage>
  /** Releases files and memory the storage holds. */
  dispose?(storage: Storage): Promise<void>
  /** Where the records live outside this process (a database server): bytes they take there. */
  footprint?(storage: Storage): Promise<number>
}

/** Fills the store with `size` affiliates of one campaign, each with one commission, in large transactions. */
async function fill(storage: Storage, size: number) {
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([{ key: KEY, userId: WORKSPACE, workspaceIds: [WORKSPACE] }]),
    rateLimit: false,
  })
  const campaign = await service.api.campaigns.create({
    campaignName: 'Bench',
    workspaceId: WORKSPACE,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://example.com',
  })
  const base = Date.UTC(2026, 0, 1)
  const ids: string[] = []
  for (let start = 0; start < size; start += 5000) {
    await storage.transaction(async (tx) => {
      for (let i = start; i < Math.min(size, start + 5000); i++) {
        const at = new Date(base + i * 1000).toISOString()
        const affiliate: AffiliateRecord = {
          id: crypto.randomUUID(),
          workspaceId: WORKSPACE,
          campaignId: campaign.id,
          email: `user-${i}@example.com`,
          emailKey: `user-${i}@example.com`,
          firstName: `First${i}`,
          lastName: `Last${i}`,
          notes: '',
          payoutEmail: '',
          payoutMethod: null,
          details: null,
          isActive: true,
          isBanned: false,
          portalDevices: [],
          refundWindow: [],
          totalOpens: 0,
          totalClicks: 0,
          totalSignups: 1,
          totalEarningsMinor: 1000,
          createdAt: at,
          updatedAt: at,
        }
        const commission: CommissionRecord = {
          id: crypto.randomUUID(),
          workspaceId: WORKSPACE,
          campaignId: campaign.id,
          affiliateId: affiliate.id,
          referredUser: `buyer-${i}@example.com`,
          referredUserKey: `buyer-${i}@example.com`,
          amountMinor: 1000,
          adminEarnedMinor: 100,
          status: STATUSES[i % 4]!,
          commissionDate: at,
          remarks: null,
          payoutDate: null,
          name: null,
          isSelfReferral: false,
          isWalletPayment: 0,
          chargeId: null,
          invoiceId: null,
          stripeSubscriptionId: null,
          linkId: null,
          referralCode: null,
          kind: 'sale',
          dueAt: at,
          payoutId: null,
          refundedMinor: 0,
          reversesCommissionId: null,
          saleAmountMinor: null,
          currency: 'USD',
          customerId: null,
          paymentIntentId: null,
          holdReasons: [],
          createdAt: at,
          updatedAt: at,
        }
        await tx.insert('affiliates', affiliate)
        await tx.insert('commissions', commission)
        ids.push(affiliate.id)
      }
    })
  }
  return { service, campaignId: campaign.id, ids }
}

interface Figures {
  [operation: string]: { p50: number; p99: number }
}

async function measure(target: StorageUnderTest, size: number): Promise<{ figures: Figures; bytes: number | undefined }> {
  const storage = await target.open(size)
  const { service, campaignId, ids } = await fill(storage, size)
  const get = (path: string) =>
    service.fetch(new Request(`http://bench.local/api/v1${path}`, { headers: { 'x-auth-service': KEY } })).then(async (r) => {
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
      return r.text()
    })
  const pick = (i: number) => ids[(i * 7919) % ids.length]!
  const operations: [string, (i: number) => Promise<unknown>][] = [
    ['by-id read', (i) => get(`/affiliates?affiliateId=${pick(i)}`)],
    ['list page 2', () => get('/affiliates/list?page=2&limit=10')],
    ['filtered list', () => get('/commissions/list?status=paid&page=2&limit=10')],
    ['contains search', (i) => get(`/affiliates/list?contains=user-${(i * 31) % size}@&limit=10`)],
    [
      'commission create',
      (i) => service.api.commissions.create({ campaignId, affiliateId: pick(i), referredUser: `new-${i}@example.com`, amount: '1.25' }),
    ],
  ]
  const figures: Figures = {}
  for (const [name, run] of operations) {
    await sample(20, run)
    const times = await sample(SAMPLES, run)
    figures[name] = { p50: percentile(times, 50), p99: percentile(times, 99) }
  }
  const bytes = await target.footprint?.(storage)
  await target.dispose?.(storage)
  return { figures, bytes }
}

/**
 * Resident memory that 100k affiliates (+100k commissions) add, measured in a child process of its
 * own so that what earlier measurements left on the heap cannot colour it.
 */
async function residentPer100k(target: StorageUnderTest): Promise<{ rss: number; live: number } | null> {
  // The child rebuilds the target by name, so only this file's own targets can be measured there.
  if (!targets.includes(target)) return null
  const { execFileSync } = await import('node:child_process')
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--rss', target.name], {
    encoding: 'utf8',
  })
  const [, rss, live] = /rss (\d+) live (\d+)/.exec(out) ?? []
  return { rss: Number(rss), live: Number(live) }
}

/**
 * What 100k affiliates (+100k commissions) add to the process: resident memory (what the OS sees,
 * including garbage the filling left and the allocator keeps), and live memory after a full GC
 * (JS heap plus array buffers, which hold sql.js's WebAssembly memory).
 */
async function measureResident(target: StorageUnderTest): Promise<{ rss: number; live: number }> {
  const gc = (globalThis as { gc?: () => void }).gc
  const live = () => {
    const usage = process.memoryUsage()
    return usage.heapUsed + usage.arrayBuffers
  }
  gc?.()
  const before = { rss: process.memoryUsage().rss, live: live() }
  const storage = await target.open(100_000)
  await fill(storage, 100_000)
  gc?.()
  const after = { rss: process.memoryUsage().rss, live: live() }
  await target.dispose?.(storage)
  return { rss: after.rss - before.rss, live: after.live - before.live }
}

export const memoryTarget: StorageUnderTest = { name: 'memory', open: async () => memoryStorage() }

/** sql.js persisted to a file with its journal: every acknowledged write is fsynced. */
export const sqlJsFileTarget: StorageUnderTest = {
  name: 'sql.js file (durable)',
  open: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'affiliate-growth-'))
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'bench.sqlite')) })
    dirs.set(storage, dir)
    return storage
  },
  dispose: async (storage) => {
    await storage.close?.()
    rmSync(dirs.get(storage)!, { recursive: true, force: true })
  },
}
const dirs = new Map<Storage, string>()

export async function growthBench(targets: StorageUnderTest[]) {
  const summary: { storage: string; ok: boolean }[] = []
  for (const target of targets) {
    const small = (await measure(target, 1_000)).figures
    const { figures: large, bytes } = await measure(target, 100_000)
    console.log(`\n${target.name}: 1k vs 100k affiliates (+1 commission each), ${SAMPLES} samples, ms`)
    table(
      Object.keys(small).map((name) => ({
        operation: name,
        'p50 1k': fixed(small[name]!.p50),
        'p50 100k': fixed(large[name]!.p50),
        'p50 ratio': fixed(large[name]!.p50 / small[name]!.p50, 2),
        'p99 1k': fixed(small[name]!.p99),
        'p99 100k': fixed(large[name]!.p99),
      })),
    )
    const growth = (name: string) => large[name]!.p50 / small[name]!.p50
    const goals: [string, boolean][] = [
      ['by-id read grows <= 2x', growth('by-id read') <= 2],
      ['list page grows <= 2x', growth('list page 2') <= 2],
      ['search at 100k p50 <= 50 ms', large['contains search']!.p50 <= 50],
      ['commission create grows <= 2x', growth('commission create') <= 2],
    ]
    for (const [goal, met] of goals) console.log(`  ${met ? 'met    ' : 'NOT met'} ${goal}`)
    const memory = await residentPer100k(target)
    const mib = (n: number) => `${fixed(n / 2 ** 20, 1)} MiB`
    if (memory)
      console.log(`  memory for 100k affiliates + 100k commissions: resident ${mib(memory.rss)}, live after GC ${mib(memory.live)}`)
    if (bytes !== undefined) console.log(`  database size for 100k affiliates + 100k commissions (tables and indexes): ${mib(bytes)}`)
    summary.push({ storage: target.name, ok: goals.every(([, met]) => met) })
  }
  return summary
}

const targets = [memoryTarget, sqlJsFileTarget]
if (import.meta.url === `file://${process.argv[1]}`) {
  const rssOf = process.argv.indexOf('--rss')
  if (rssOf > 0) {
    const target = targets.find((t) => t.name === process.argv[rssOf + 1])!
    const { rss, live } = await measureResident(target)
    console.log(`rss ${rss} live ${live}`)
  } else await growthBench(targets)
}
