// Sales through the HTTP API (`service.fetch`, the handler every adapter calls): `POST
// /conversions/sale`, which finds the customer, applies the campaign's rules and writes the sale,
// the commission and their counters, against plain `POST /commissions` (the host computed the
// amount), measured in the same run on the same storage, in alternating rounds.
// Goal: sales recorded per second >= 0.8 of plain commissions.
// Then the p50 of one sale for a customer with 1,000 earlier sales against a customer with none.
// Goal: <= 1.5x (a customer's history is its record's few fields, never a walk of its sales).
// Then the fraud rules (issue 42): the p50 of one sale of a campaign with every rule on (`flag`, so
// each rule's facts are gathered: the disposable list, the click's device and address, the
// affiliate's customers from that address, its 90 days of refunds) against one of a campaign with
// every rule off, both affiliates with the same 90 days of sales and refunds, customers brought by
// clicks from addresses of their own, in alternating rounds. Goal: <= 1.15x.
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
const fraudRows: Record<string, string | number>[] = []
const DAY = 86_400_000
const FRAUD_CUSTOMERS = 40
const FRAUD_DAYS = 90
const FRAUD_SAMPLES = Number(process.env.BENCH_FRAUD_SAMPLES ?? 300)
const ALL = ['self_referral', 'disposable_email', 'paid_ad_click', 'address_burst', 'refund_rate'] as const

/**
 * Two campaigns alike but for their fraud rules (every one `flag`, every one `off`), each with an
 * affiliate whose customers came through clicks (an address each) and who has 90 days of sales with
 * a tenth refunded; then one sale at a time of each, alternating. Answers the p50 of each, in ms.
 */
async function fraudRound(target: Target): Promise<{ on: number; off: number; ratio: number }> {
  const opened = await target.open('fraud')
  let now = Date.now() - (FRAUD_DAYS + 1) * DAY
  const service = createAffiliateService({
    storage: opened.storage,
    keyStore: memoryKeyStore([{ key: KEY, userId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', workspaceIds: [WORKSPACE] }]),
    rateLimit: false,
    clock: { now: () => now },
  })
  const { api } = service
  let invoice = 0
  const sides = []
  for (const mode of ['flag', 'off'] as const) {
    const campaign = await api.campaigns.create({
      campaignName: `Rules ${mode}`,
      workspaceId: WORKSPACE,
      commissionType: 'percentage',
      amount: 20,
      url: 'https://shop.example.com/',
      fraudRules: Object.fromEntries(ALL.map((rule) => [rule, mode])),
    })
    const affiliate = await api.affiliates.create({ email: `aff-${mode}@example.com`, campaignId: campaign.id })
    const code = `FRAUD-${mode.toUpperCase()}`
    await api.links.create({ affiliateId: affiliate.id, referralCode: code })
    const customers: string[] = []
    for (let c = 0; c < FRAUD_CUSTOMERS; c++) {
      const response = await service.fetch(
        new Request(`http://bench.local/api/v1/r/${code}`, {
          redirect: 'manual',
          headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36' },
        }),
        {
          clientAddress: `10.${mode === 'flag' ? 1 : 2}.${c >> 8}.${c & 255}`,
        },
      )
      await service.flush()
      const clickId = new URL(response.headers.get('location')!).searchParams.get('clickId')!
      const externalId = `${mode}-${c}`
      await api.conversions.lead({ workspaceId: WORKSPACE, externalId, email: `buyer${c}.${mode}@example.com`, clickId })
      customers.push(externalId)
    }
    sides.push({ mode, customers })
  }
  const sale = (externalId: string) =>
    api.conversions.sale({ workspaceId: WORKSPACE, externalId, amount: '49.99', currency: 'USD', invoiceId: `in_${++invoice}` })
  // 90 days of history on both sides: four sales a day, one refunded in ten.
  for (let day = 0; day < FRAUD_DAYS; day++) {
    now += DAY
    for (const side of sides) {
      for (let i = 0; i < 4; i++) {
        const made = await sale(side.customers[(day * 4 + i) % FRAUD_CUSTOMERS]!)
        if ((day * 4 + i) % 10 === 0) await api.conversions.refund({ workspaceId: WORKSPACE, invoiceId: made.commission!.invoiceId! })
      }
    }
  }
  now += DAY
  await opened.loaded?.()
  const [on, off] = sides as [(typeof sides)[0], (typeof sides)[0]]
  // Warm-up (the disposable list loads with the first e-mail checked), then alternating samples.
  for (let i = 0; i < 20; i++) {
    await sale(on.customers[i % FRAUD_CUSTOMERS]!)
    await sale(off.customers[i % FRAUD_CUSTOMERS]!)
  }
  const onTimes: number[] = []
  const offTimes: number[] = []
  for (let i = 0; i < FRAUD_SAMPLES; i++) {
    const [first, second, firstTimes, secondTimes] = i % 2 === 0 ? [on, off, onTimes, offTimes] : [off, on, offTimes, onTimes]
    let start = performance.now()
    const a = await sale(first.customers[i % FRAUD_CUSTOMERS]!)
    firstTimes.push(performance.now() - start)
    start = performance.now()
    const b = await sale(second.customers[i % FRAUD_CUSTOMERS]!)
    secondTimes.push(performance.now() - start)
    // Both sides make ordinary commissions: nothing fires, nothing is held.
    if (a.commission?.status !== 'pending' || b.commission?.status !== 'pending')
      throw new Error(`a rule fired in the bench: ${JSON.stringify([a.commission, b.commission])}`)
  }
  await opened.dispose()
  // Each pair ran back to back: the median of the pairs' ratios cancels the machine's load drifting
  // between pairs (other processes share the cores), which the ratio of two p50s does not.
  const ratios = onTimes.map((on, i) => on / offTimes[i]!)
  return { on: percentile(onTimes, 50), off: percentile(offTimes, 50), ratio: percentile(ratios, 50) }
}

for (const target of targets) {
  const opened = await target.open('run')
  const service = createAffiliateService({
    storage: opened.storage,
    keyStore: memoryKeyStore([{ key: KEY, userId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', workspaceIds: [WORKSPACE] }]),
    rateLimit: false,
  })
  const post = async (path: string, body: unknown) => {
    const response = await service.fetch(
      new Request(`http://bench.local/api/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-service': KEY },
        body: JSON.stringify(body),
      }),
    )
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    await response.arrayBuffer()
  }
  const { api } = service
  const campaign = await api.campaigns.create({
    campaignName: 'Bench',
    workspaceId: WORKSPACE,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com/',
  })
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
    post('/commissions', {
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: `user${++invoice % CUSTOMERS}@example.com`,
      amount: '10.00',
      referralCode: 'BENCH-1',
    })

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
    await api.conversions.lead({
      workspaceId: WORKSPACE,
      externalId: `fresh-${i}`,
      email: `fresh${i}@example.com`,
      referralCode: 'BENCH-1',
    })
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
  const fraud = await fraudRound(target)
  fraudRows.push({
    storage: target.name,
    'every rule off p50 ms': fixed(fraud.off),
    'every rule on (flag) p50 ms': fixed(fraud.on),
    'ratio (median of back-to-back pairs)': fixed(fraud.ratio, 2),
    goal: '<= 1.15',
  })
}

console.log(`\nSales recorded per second through service.fetch, ${ROUNDS} alternating rounds of ${PER_ROUND} each`)
table(throughputRows)
console.log(
  `\nOne sale: a customer with ${HISTORY} earlier sales against customers with none (${LATENCY_SAMPLES} samples each, alternating)`,
)
table(latencyRows)
console.log(
  `\nOne sale with every fraud rule on against every rule off (${FRAUD_SAMPLES} samples each, alternating; 90 days of history on both)`,
)
table(fraudRows)
