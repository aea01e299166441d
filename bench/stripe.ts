// Stripe events through the HTTP API (`service.fetch`): `POST {basePath}/integrations/<id>/events`
// with a signed `invoice.paid` in the 2025+ shape (verified by the stripe SDK, then the sale, its event log record and
// the look-up of the events of its payment that came first, in one transaction)
// against `POST /conversions/sale` with the same sale, on the sql.js file, in alternating rounds.
// Goal: events per second >= 0.8 of sales.
//
//   npm run bench -- stripe
import Stripe from 'stripe'
import { createAffiliateService, memoryKeyStore } from '../src/index.js'
import { fixed, table } from './stats.js'
import { sqlJsFileTarget } from './targets.js'

const KEY = 'bench-key'
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const SECRET = 'whsec_bench_5d2c8a1f'
const ROUNDS = 6
const PER_ROUND = Number(process.env.BENCH_SAMPLES ?? 150)
const CUSTOMERS = 50

const target = sqlJsFileTarget('stripe')
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
const integration = await api.integrations.create({ workspaceId: WORKSPACE, provider: 'stripe', signingSecret: SECRET })
for (let c = 0; c < CUSTOMERS; c++) {
  await api.conversions.lead({
    workspaceId: WORKSPACE,
    externalId: `cus_${c}`,
    email: `user${c}@example.com`,
    stripeCustomerId: `cus_${c}`,
    referralCode: 'BENCH-1',
  })
}

let invoice = 0
const check = async (response: Response, what: string) => {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${await response.text()}`)
  await response.arrayBuffer()
}
const sale = async (i: number) =>
  check(
    await service.fetch(
      new Request('http://bench.local/api/v1/conversions/sale', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-service': KEY },
        body: JSON.stringify({
          workspaceId: WORKSPACE,
          externalId: `cus_${i % CUSTOMERS}`,
          amount: '49.99',
          currency: 'USD',
          invoiceId: `in_${++invoice}`,
        }),
      }),
    ),
    'sale',
  )
const event = async (i: number) => {
  const id = `in_${++invoice}`
  // The 2025+ shape: the invoice names its subscription under `parent`, and no charge.
  const object = {
    id,
    object: 'invoice',
    customer: `cus_${i % CUSTOMERS}`,
    currency: 'usd',
    total: 4999,
    amount_paid: 4999,
    total_excluding_tax: 4999,
    parent: { type: 'subscription_details', subscription_details: { subscription: `sub_${i % CUSTOMERS}` } },
  }
  const payload = JSON.stringify({ id: `evt_${id}`, object: 'event', type: 'invoice.paid', livemode: true, data: { object } })
  const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET })
  await check(
    await service.fetch(
      new Request(`http://bench.local${integration.endpointPath}`, {
        method: 'POST',
        headers: { 'stripe-signature': header },
        body: payload,
      }),
    ),
    'event',
  )
}

for (let i = 0; i < 50; i++) {
  await sale(i)
  await event(i)
}
const timed = { sales: { count: 0, ms: 0 }, events: { count: 0, ms: 0 } }
for (let round = 0; round < ROUNDS; round++) {
  let start = performance.now()
  for (let i = 0; i < PER_ROUND; i++) await sale(i)
  timed.sales.ms += performance.now() - start
  timed.sales.count += PER_ROUND
  start = performance.now()
  for (let i = 0; i < PER_ROUND; i++) await event(i)
  timed.events.ms += performance.now() - start
  timed.events.count += PER_ROUND
}
await opened.dispose()
const perSecond = (t: { count: number; ms: number }) => (t.count / t.ms) * 1000
console.log(`\nStripe invoice.paid events per second through service.fetch, ${ROUNDS} alternating rounds of ${PER_ROUND} each`)
table([
  {
    storage: target.name,
    'POST /conversions/sale /s': fixed(perSecond(timed.sales), 0),
    'Stripe events /s': fixed(perSecond(timed.events), 0),
    'events / sales': fixed(perSecond(timed.events) / perSecond(timed.sales), 2),
    goal: '>= 0.8',
  },
])
