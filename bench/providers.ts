// Paddle Billing and Lemon Squeezy events through the HTTP API (`service.fetch`):
// `POST {basePath}/integrations/<id>/events` with a signed Paddle `transaction.completed` and a
// signed Lemon Squeezy `order_created` (verified with Web Crypto, then the sale, its event log
// record and the look-up of the events of its payment that came first, in one transaction), each
// against `POST /conversions/sale` with the same sale, on the sql.js file, one of each in turn.
// Goal: events per second >= 0.8 of sales, per provider.
//
//   npm run bench -- providers
import { createHmac } from 'node:crypto'
import { createAffiliateService, memoryKeyStore } from '../src/index.js'
import { fixed, table } from './stats.js'
import { sqlJsFileTarget } from './targets.js'

const KEY = 'bench-key'
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const SECRET = 'bench-provider-secret-5d2c8a1f'
const ROUNDS = 6
const PER_ROUND = Number(process.env.BENCH_SAMPLES ?? 150)
const CUSTOMERS = 50

const target = sqlJsFileTarget('providers')
const opened = await target.open('run')
const service = createAffiliateService({
  storage: opened.storage,
  keyStore: memoryKeyStore([{ key: KEY, userId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', workspaceIds: [WORKSPACE] }]),
  rateLimit: false,
  trackingLimit: false,
})
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
const paddle = await api.integrations.create({ workspaceId: WORKSPACE, provider: 'paddle', signingSecret: SECRET })
const lemon = await api.integrations.create({ workspaceId: WORKSPACE, provider: 'lemonsqueezy', signingSecret: SECRET })
// Customers known by the host's id, which the events' custom data names (as a renewal's does).
for (let c = 0; c < CUSTOMERS; c++) {
  await api.conversions.lead({ workspaceId: WORKSPACE, externalId: `user_${c}`, email: `user${c}@example.com`, referralCode: 'BENCH-1' })
}

let invoice = 0
const check = async (response: Response, what: string) => {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${await response.text()}`)
  await response.arrayBuffer()
}
const hmacHex = (message: string) => createHmac('sha256', SECRET).update(message).digest('hex')
const paidAt = new Date().toISOString()

const sale = async (i: number) =>
  check(
    await service.fetch(
      new Request('http://bench.local/api/v1/conversions/sale', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-service': KEY },
        body: JSON.stringify({
          workspaceId: WORKSPACE,
          externalId: `user_${i % CUSTOMERS}`,
          amount: '49.99',
          currency: 'USD',
          invoiceId: `inv_${++invoice}`,
        }),
      }),
    ),
    'sale',
  )

/** A Paddle `transaction.completed` in the shape of the SDK's mock (the fields read, and the envelope), signed as Paddle signs. */
const paddleEvent = async (i: number) => {
  const id = `txn_${++invoice}`
  const totals = { subtotal: '4999', discount: '0', tax: '0', total: '4999', grand_total: '4999', currency_code: 'USD' }
  const body = JSON.stringify({
    event_id: `evt_${id}`,
    event_type: 'transaction.completed',
    occurred_at: paidAt,
    notification_id: `ntf_${id}`,
    data: {
      id,
      status: 'completed',
      customer_id: `ctm_${i % CUSTOMERS}`,
      currency_code: 'USD',
      origin: 'subscription_recurring',
      subscription_id: `sub_${i % CUSTOMERS}`,
      custom_data: { externalId: `user_${i % CUSTOMERS}` },
      details: { totals },
      billed_at: paidAt,
    },
  })
  const ts = Math.floor(Date.now() / 1000)
  await check(
    await service.fetch(
      new Request(`http://bench.local${paddle.endpointPath}`, {
        method: 'POST',
        headers: { 'paddle-signature': `ts=${ts};h1=${hmacHex(`${ts}:${body}`)}` },
        body,
      }),
    ),
    'paddle',
  )
}

/** A Lemon Squeezy `order_created` in the documented envelope, signed as Lemon Squeezy signs. */
const lemonEvent = async (i: number) => {
  const id = String(++invoice)
  const body = JSON.stringify({
    meta: { event_name: 'order_created', test_mode: false, custom_data: { externalId: `user_${i % CUSTOMERS}` } },
    data: {
      type: 'orders',
      id,
      attributes: {
        customer_id: i % CUSTOMERS,
        user_email: `user${i % CUSTOMERS}@example.com`,
        currency: 'USD',
        subtotal: 4999,
        tax: 0,
        total: 4999,
        status: 'paid',
        created_at: paidAt,
        updated_at: paidAt,
        test_mode: false,
      },
    },
  })
  await check(
    await service.fetch(
      new Request(`http://bench.local${lemon.endpointPath}`, { method: 'POST', headers: { 'x-signature': hmacHex(body) }, body }),
    ),
    'lemonsqueezy',
  )
}

for (let i = 0; i < 50; i++) {
  await sale(i)
  await paddleEvent(i)
  await lemonEvent(i)
}
const timed = { sales: { count: 0, ms: 0 }, paddle: { count: 0, ms: 0 }, lemonsqueezy: { count: 0, ms: 0 } }
const kinds = [
  ['sales', sale],
  ['paddle', paddleEvent],
  ['lemonsqueezy', lemonEvent],
] as const
// One request of each kind in turn, the first of each turn rotating, each timed alone: the sql.js
// file's journal folds (and the collector's pauses) fall on every kind alike, not on whichever a
// block of requests happened to be running.
for (let i = 0; i < ROUNDS * PER_ROUND; i++) {
  for (let k = 0; k < kinds.length; k++) {
    const [name, work] = kinds[(i + k) % kinds.length]!
    const start = performance.now()
    await work(i)
    timed[name].ms += performance.now() - start
    timed[name].count++
  }
}
await opened.dispose()
const perSecond = (t: { count: number; ms: number }) => (t.count / t.ms) * 1000
console.log(`\nProvider events per second through service.fetch against POST /conversions/sale, ${ROUNDS * PER_ROUND} of each, interleaved`)
table(
  (['paddle', 'lemonsqueezy'] as const).map((provider) => ({
    storage: target.name,
    provider,
    'POST /conversions/sale /s': fixed(perSecond(timed.sales), 0),
    'events /s': fixed(perSecond(timed[provider]), 0),
    'events / sales': fixed(perSecond(timed[provider]) / perSecond(timed.sales), 2),
    goal: '>= 0.8',
  })),
)
