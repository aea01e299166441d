// Sales through the HTTP API (`service.fetch`, the handler every adapter calls): `POST
// /conversions/sale`, which finds the customer, applies the campaign's rules and writes the sale,
// the commission and their counters, against plain `POST /commissions` (the host computed the
// amount), measured in the same run on the same storage, in alternating rounds.
// Goal: sales recorded per second >= 0.8 of plain commissions.
// Then the p50 of one sale for a customer with 1,000 earlier sales against a customer with none.
// Goal: <= 1.5x (a customer's history is its record's few fields, never a walk of its sales).
//
//   npm run bench -- sales          (PostgreSQL too with AFFILIATE_TEST_POSTGRES_URL or AFFILIATE_BENCH_POSTGRES_URL)
import { createAffiliateService, memoryKeyStore } from '../src/index.js'
import { fixed, percentile, table } from './stats.js'
import { postgresTarget, sqlJsFileTarget, type Target } from './targets.js'

const url = process.env.AFFILIATE_BENCH_POSTGRES_URL || process.env.AFFILIATE_TEST_POSTGRES_URL
const KEY = 'bench-key'
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const ROUNDS = 6
const PER_ROUND = Number(process.env.BENCH_SAMPLES ?? 150)
const HISTORY = 1_000
const LATENCY_SAMPLES = 200

const targets: Target[] = [sqlJsFileTarget('sales')]
if (url) targets.push(postgresTarget(url, 'sales', ['customers', 'sales', 'commissions', 'affiliates', 'links']))
else console.log('PostgreSQL skipped: set AFFILIATE_TEST_POSTGRES_URL (or AFFILIATE_BENCH_POSTGRES_URL)')

const throughputRows: Record<string, string | number>[] = []
const latencyRows: Record<string, string | number>[] = []

for (const target of targets) {
  const opened = await target.open('run')
  const service = createAffiliateService({
    storage: opened.storage,
    keyStore: memoryKeyStore([{ key: KEY, userId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', workspaceIds: [WORKSPACE] }]),
    rateLimit: false,
  })
  const post = async (path: string, body: unknown) => {
    const response = await service.fetch(
      new Request(`http://bench.local/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-service': KEY }, body: JSON.stringify(body) }),
    )
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    await response.arrayBuffer()
  }
  const { api } = service
  const campaign = await api.campaigns.create({ campaignName: 'Bench', workspaceId: WORKSPACE, commissionType: 'percentage', amount: 20, url: 'https://shop.example.com/' })
  const affiliate = await api.affiliates.create({ email: 'bench@example.com', campaignId: campaign.id })
  await api.links.create({ affiliateId: affiliate.id, referralCode: 'BENCH-1' })
  const CUSTOMERS = 50
  for (let c = 0; c < CUSTOMERS; c++) {
    await api.conversions.lead({ workspaceId: WORKSPACE, externalId: `user-${c}`, email: `user${c}@example.com`, referralCode: 'BENCH-1' })
  }

  let invoice = 0
  const sale = (externalId: string) =>
    post('/conversions/sale', { workspaceId: WORKSPACE, externalId, amount: '49.99', currency: 'USD', invoiceId: `in_${++invoice}` })
  const commission = () =>
    post('/commissions', { campaignId: campaign.id, affiliateId: affiliate.id, referredUser: `user${++invoice % CUSTOMERS}@example.com`, amount: '10.00', referralCode: 'BENCH-1' })

  // Warm-up, then alternating timed rounds of each.
  for (let i = 0; i < 50; i++) {
    await commission()
    await sale(`user-${i % CUSTOMERS}`)
  }
  const timed = { commissions: { count: 0, ms: 0 }, sales: { count: 0, ms: 0 } }
  for (let round = 0; round < ROUNDS; round++) {
    let start = performance.now()
    for (let i = 0; i < PER_ROUND; i++) await commission()
    timed.commissions.ms += performance.now() - start
    timed.commissions.count += PER_ROUND
    start = performance.now()
    for (let i = 0; i < PER_ROUND; i++) await sale(`user-${i % CUSTOMERS}`)
    timed.sales.ms += performance.now() - start
    timed.sales.count += PER_ROUND
  }
  const perSecond = (t: { count: number; ms: number }) => (t.count / t.ms) * 1000
  const commissionsPerSecond = perSecond(timed.commissions)
  const salesPerSecond = perSecond(timed.sales)
  throughputRows.push({
    storage: target.name,
    'POST /commissions /s': fixed(commissionsPerSecond, 0),
    'POST /conversions/sale /s': fixed(salesPerSecond, 0),
    'sales / commissions': fixed(salesPerSecond / commissionsPerSecond, 2),
    goal: '>= 0.8',
  })

  // A customer with 1,000 earlier sales, then sales of it against sales of customers with none.
  await api.conversions.lead({ workspaceId: WORKSPACE, externalId: 'heavy', email: 'heavy@example.com', referralCode: 'BENCH-1' })
  for (let i = 0; i < HISTORY; i++) await sale('heavy')
  await opened.loaded?.()
  const fresh: string[] = []
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    fresh.push(`fresh-${i}`)
    await api.conversions.lead({ workspaceId: WORKSPACE, externalId: `fresh-${i}`, email: `fresh${i}@example.com`, referralCode: 'BENCH-1' })
  }
  const heavyTimes: number[] = []
  const freshTimes: number[] = []
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    let start = performance.now()
    await sale('heavy')
    heavyTimes.push(performance.now() - start)
    start = performance.now()
    await sale(fresh[i]!)
    freshTimes.push(performance.now() - start)
  }
  const heavy = percentile(heavyTimes, 50)
  const none = percentile(freshTimes, 50)
  latencyRows.push({
    storage: target.name,
    'no earlier sales p50 ms': fixed(none),
    [`${HISTORY} earlier sales p50 ms`]: fixed(heavy),
    ratio: fixed(heavy / none, 2),
    goal: '<= 1.5',
  })
  await opened.dispose()
}

console.log(`\nSales recorded per second through service.fetch, ${ROUNDS} alternating rounds of ${PER_ROUND} each`)
table(throughputRows)
console.log(`\nOne sale: a customer with ${HISTORY} earlier sales against customers with none (${LATENCY_SAMPLES} samples each, alternating)`)
table(latencyRows)
