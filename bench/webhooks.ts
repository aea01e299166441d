// Webhooks (issue 16). Two goals, each measured against a figure of the same run:
//  1. A commission create with one subscribed webhook costs at most 1.2x one without (the outbox
//     writes the event either way; the webhook adds its delivery row in the same transaction).
//     Measured on the memory storage and on the durable sql.js file, in alternating blocks.
//  2. The dispatcher delivers at least 500 events/s to a receiver on 127.0.0.1 in another process
//     (the Node sender, signing every request, a new connection each, results written per batch).
//
//   npm run bench -- webhooks
//   node --import tsx bench/webhooks.ts          (BENCH_SAMPLES=3000 per side, BENCH_EVENTS=3000)
import { mkdtempSync, rmSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createNodeWebhookSender, fileJournal } from '../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, type Storage } from '../src/index.js'
import { fixed, percentile, sample, table } from './stats.js'

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 3000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000)
const BLOCK = 250
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const GOAL_RATIO = 1.2
const GOAL_RATE = 500
const webhookOptions = { allowHttp: true, allowPrivateAddresses: true } as const

/** A service on `storage` with a campaign and an affiliate, and `subscribed` webhooks on commission.created. */
async function scene(storage: Storage, subscribed: number, url = 'https://hooks.example.com/bench') {
  const service = createAffiliateService({ storage, keyStore: memoryKeyStore([]), rateLimit: false, webhooks: webhookOptions })
  const { api } = service
  const campaign = await api.campaigns.create({
    campaignName: 'Bench',
    workspaceId: WORKSPACE,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://shop.example.com/',
  })
  const affiliate = await api.affiliates.create({ email: 'bench@example.com', campaignId: campaign.id })
  for (let i = 0; i < subscribed; i++) await api.webhooks.create({ workspaceId: WORKSPACE, url, events: ['commission.created'] })
  let n = 0
  const create = () =>
    api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: `buyer-${n++ % 50}@example.com`,
      amount: 10,
    })
  return { service, create }
}

async function createCost(name: string, open: (label: string) => Promise<{ storage: Storage; dispose(): Promise<void> }>) {
  const without = await open('without')
  const withHook = await open('with')
  const plain = await scene(without.storage, 0)
  const hooked = await scene(withHook.storage, 1)
  // Warm-up, then alternating blocks so drift on a shared machine falls on both sides alike.
  for (let i = 0; i < 300; i++) await plain.create(), await hooked.create()
  const a: number[] = []
  const b: number[] = []
  for (let done = 0; done < SAMPLES; done += BLOCK) {
    a.push(...(await sample(BLOCK, plain.create)))
    b.push(...(await sample(BLOCK, hooked.create)))
  }
  await Promise.all([without.dispose(), withHook.dispose()])
  const median = (t: number[]) => percentile(t, 50)
  const mean = (t: number[]) => t.reduce((x, y) => x + y, 0) / t.length
  return {
    storage: name,
    'without (median ms)': fixed(median(a)),
    'with one webhook (median ms)': fixed(median(b)),
    'ratio median': fixed(median(b) / median(a), 2),
    'ratio mean': fixed(mean(b) / mean(a), 2),
    goal: `<= ${GOAL_RATIO}`,
    met: median(b) / median(a) <= GOAL_RATIO ? 'yes' : 'NO',
  }
}

/** A receiver on 127.0.0.1 in a process of its own (so it does not share the dispatcher's CPU time): answers 200 to every POST. */
async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const code = `const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200).end('ok')) });
s.listen(0, '127.0.0.1', () => console.log(s.address().port))`
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())))
  return { url: `http://127.0.0.1:${port}/hooks`, stop: () => void child.kill() }
}

async function dispatcherRate() {
  const receiver = await startReceiver()
  const url = receiver.url
  const { service, create } = await scene(memoryStorage(), 1, url)
  for (let i = 0; i < EVENTS; i++) await create()
  const start = performance.now()
  const cpu = process.cpuUsage()
  const sent = await service.events.deliverDue({ sender: createNodeWebhookSender })
  const seconds = (performance.now() - start) / 1000
  const used = process.cpuUsage(cpu)
  const cpuSeconds = (used.user + used.system) / 1e6
  const failed = (await service.api.webhooks.deliveries({ status: 'failed' })).pagination.total
  receiver.stop()
  if (sent !== EVENTS || failed !== 0) throw new Error(`sent ${sent} of ${EVENTS}, ${failed} failed`)
  const rate = sent / seconds
  // CPU seconds of this process too: on a machine busy with other work the wall-clock rate falls, the rate per CPU second much less.
  return {
    events: sent,
    seconds: fixed(seconds, 2),
    'events/s': fixed(rate, 0),
    'events per CPU s': fixed(sent / cpuSeconds, 0),
    load: fixed(loadavg()[0]!, 1),
    goal: `>= ${GOAL_RATE}`,
    met: rate >= GOAL_RATE ? 'yes' : 'NO',
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-bench-webhooks-'))
  try {
    console.log(`Commission create, ${SAMPLES} each, with and without one subscribed webhook:`)
    table([
      await createCost('memory', async () => ({ storage: memoryStorage(), dispose: async () => undefined })),
      await createCost('sql.js file (durable)', async (label) => {
        const storage = sqlJsStorage({ persist: fileJournal(join(dir, `${label}.sqlite`)) })
        await storage.ready()
        return { storage, dispose: () => storage.close() }
      }),
    ])
    console.log(`\nDispatcher: ${EVENTS} events to a receiver on 127.0.0.1 (memory storage):`)
    table([await dispatcherRate()])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
