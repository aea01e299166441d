// The Node adapter against a bare node:http server answering the same JSON, measured in the same run.
//
//   node --import tsx bench/node-adapter.ts            (BENCH_SECONDS=5 for longer runs)
//   BENCH_ROUNDS=9 BENCH_ONLY=track node --import tsx bench/node-adapter.ts   (more rounds, one scenario)
//
// Each server runs in a child process of its own (this file, started with `--serve <variant>`), so the
// load generator (autocannon, in this process) and the server each have a core. For every scenario the
// variants run one after another, BENCH_ROUNDS times (default 5) in alternating order. Each run is
// read in one-second windows, counted by the server process itself (requests answered and CPU time
// used), and each variant's best window over all its runs counts: on a shared machine others only
// ever slow a window down, and a second-long stall no longer spoils a whole run.
// Two figures per variant, both as ratios to bare (higher is better, 1.00 = as cheap as bare):
//   req/s  throughput under 32 connections;
//   cpu    bare's CPU time per request / this variant's, read from the server process itself, so
//          other load on the machine (which moves req/s a lot on a shared box) matters much less.
//
// Variants:
//   bare     node:http, no framework: reads the same headers and body the service would, answers the
//            same JSON with JSON.stringify. The floor every Node server pays.
//   adapter  `serve()` of affiliate-service/node in front of the whole service (memory storage,
//            `rateLimit: false`): what `npm start` costs with limits off. Reported (issue 27 made
//            the peers the goal: bench/peers.ts).
//   limited  the same with the rate limiter on, at limits this load never reaches (memory limiter
//            store): the cost of admitting and releasing each request, as `npm start` runs it.
//   passthru `toNodeListener()` in front of a fetch that reads the body and answers the same JSON
//            without the service: the adapter's own cost, apart from the core's.
import { createServer, type IncomingMessage } from 'node:http'
import { fileURLToPath } from 'node:url'
import { answerReadings, startServer, type ServerProcess } from './server-process.js'
import { loadInWindows, type Best } from './stats.js'
import { serve, toNodeListener } from '../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../src/index.js'

const KEY = 'bench-key'
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const JSON_TYPE = 'application/json; charset=utf-8'
const VARIANTS = ['bare', 'adapter', 'limited', 'passthru'] as const
type Variant = (typeof VARIANTS)[number]

interface Fixture {
  affiliateId: string
  referralCode: string
  /** The `data` each scenario answers, taken from the real service so every variant sends the same bytes. */
  affiliate: unknown
  link: unknown
}

interface Scenario {
  name: string
  method: 'GET' | 'POST'
  path: (fixture: Fixture) => string
  body?: (fixture: Fixture) => string
  /** The JSON a bare server answers for this scenario. */
  answer: (fixture: Fixture) => unknown
}

const scenarios: Scenario[] = [
  {
    name: 'GET /health',
    method: 'GET',
    path: () => '/api/v1/health',
    answer: () => ({ status: 'ok', service: 'affiliate-service', timestamp: new Date().toISOString() }),
  },
  {
    name: 'GET /affiliates (keyed)',
    method: 'GET',
    path: (f) => `/api/v1/affiliates?affiliateId=${f.affiliateId}`,
    answer: (f) => ({ status: 200, message: 'Affiliate retrieved successfully', data: f.affiliate }),
  },
  {
    name: 'POST /links/track (keyed, body)',
    method: 'POST',
    path: () => '/api/v1/links/track',
    body: (f) => JSON.stringify({ referralCode: f.referralCode, event: 'click' }),
    answer: (f) => ({ status: 200, message: 'Link event tracked successfully', data: f.link }),
  },
]

/** Limits no bench load reaches: every request is admitted, and its slot taken and given back. */
const UNREACHED = { capacity: 1_000_000_000, refillPerSecond: 1_000_000_000, maxInFlight: 1_000_000 }

async function makeService(limited = false) {
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([{ key: KEY, userId: crypto.randomUUID(), workspaceIds: [WORKSPACE] }]),
    rateLimit: limited ? UNREACHED : false,
  })
  const campaign = await service.api.campaigns.create({
    campaignName: 'Bench',
    workspaceId: WORKSPACE,
    commissionType: 'percentage',
    amount: 10,
    url: 'https://shop.example.com/',
  })
  const affiliate = await service.api.affiliates.create({ email: 'bench@example.com', campaignId: campaign.id })
  const link = await service.api.links.create({ affiliateId: affiliate.id })
  const fixture: Fixture = { affiliateId: affiliate.id, referralCode: link.referralCode, affiliate, link }
  return { service, fixture }
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })

/** Child side: start one variant on a free port, tell the parent where it is, answer readings. */
async function runServer(variant: Variant): Promise<void> {
  const { service, fixture } = await makeService(variant === 'limited')
  const byPath = new Map(scenarios.map((s) => [s.path(fixture).split('?')[0]!, s]))
  const count = answerReadings()
  const send = (url: string) => process.send!({ url, fixture })

  if (variant === 'adapter' || variant === 'limited') {
    const running = await serve(service, { port: 0 })
    count(running.server)
    send(new URL(running.url).origin)
    return
  }
  if (variant === 'passthru') {
    const server = createServer(
      toNodeListener({
        async fetch(request) {
          const scenario = byPath.get(new URL(request.url).pathname)!
          if (scenario.body) {
            const reader = request.body!.getReader()
            while (!(await reader.read()).done);
          }
          return new Response(JSON.stringify(scenario.answer(fixture)), { headers: { 'content-type': JSON_TYPE } })
        },
      }),
    )
    count(server)
    server.listen(0, '127.0.0.1', () => send(`http://127.0.0.1:${(server.address() as { port: number }).port}`))
    return
  }
  const server = createServer(async (req, res) => {
    const scenario = byPath.get(new URL(req.url ?? '/', 'http://localhost').pathname)!
    if (scenario.name !== 'GET /health' && req.headers['x-auth-service'] !== KEY) res.statusCode = 401
    if (scenario.body) JSON.parse(await readBody(req))
    res.setHeader('content-type', JSON_TYPE)
    res.end(JSON.stringify(scenario.answer(fixture)))
  })
  count(server)
  server.listen(0, '127.0.0.1', () => send(`http://127.0.0.1:${(server.address() as { port: number }).port}`))
}

/** What a server process reports of itself. */

type Child = ServerProcess<{ fixture: Fixture }>

type Run = Best

/** Windows with fewer requests than this are too short to read (the last, cut by the run's end). */
const MIN_WINDOW_REQUESTS = 1000

/** Loads the server for `seconds`; answers its best one-second window (fastest, and cheapest per request). */
const load = (server: Child, scenario: Scenario, seconds: number): Promise<Run> =>
  loadInWindows(
    server.read,
    {
      url: server.url + scenario.path(server.fixture),
      method: scenario.method,
      headers: { 'x-auth-service': KEY, 'content-type': 'application/json' },
      ...(scenario.body ? { body: scenario.body(server.fixture) } : {}),
      connections: 32,
      duration: seconds,
    },
    scenario.name,
    MIN_WINDOW_REQUESTS,
  )

/**
 * Parent side: every scenario, every variant, alternating order; prints req/s, CPU per request and
 * the ratios to bare, and answers `ratio`: the whole server's worst CPU ratio over the scenarios
 * (reported: BENCHMARKS.md row 2).
 */
export async function benchNodeAdapter(
  seconds = Number(process.env.BENCH_SECONDS ?? 3),
  rounds = Number(process.env.BENCH_ROUNDS ?? 5),
  only = process.env.BENCH_ONLY ?? '',
): Promise<{ ratio: number }> {
  console.log(
    `node adapter vs bare node:http: autocannon, 32 connections, ${rounds} runs of ${seconds} s each, best one-second window (ratios to bare)`,
  )
  let worst = Infinity
  for (const scenario of scenarios.filter((s) => s.name.includes(only))) {
    const best = new Map<Variant, Run>()
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()
      for (const variant of order) {
        const server = await startServer<{ fixture: Fixture }>(fileURLToPath(import.meta.url), variant)
        try {
          await load(server, scenario, 1) // warm-up: JIT, connection pool
          const run = await load(server, scenario, seconds)
          const seen = best.get(variant)
          best.set(variant, {
            perSecond: Math.max(seen?.perSecond ?? 0, run.perSecond),
            cpuPerRequest: Math.min(seen?.cpuPerRequest ?? Infinity, run.cpuPerRequest),
          })
        } finally {
          server.child.removeAllListeners('exit')
          server.child.kill()
        }
      }
    }
    const bare = best.get('bare')!
    worst = Math.min(worst, bare.cpuPerRequest / best.get('adapter')!.cpuPerRequest)
    console.log(scenario.name)
    for (const variant of VARIANTS) {
      const run = best.get(variant)!
      const ratios =
        variant === 'bare'
          ? ''
          : `  req/s ${(run.perSecond / bare.perSecond).toFixed(2)}  cpu ${(bare.cpuPerRequest / run.cpuPerRequest).toFixed(2)}`
      console.log(
        `  ${variant.padEnd(9)} ${String(Math.round(run.perSecond)).padStart(6)} req/s ${run.cpuPerRequest.toFixed(1).padStart(6)} µs cpu/req${ratios}`,
      )
    }
  }
  console.log(`whole server (adapter + service) / bare node:http, worst scenario, cpu per request: ${worst.toFixed(2)} (reported)`)
  return { ratio: worst }
}

if (process.argv[2] === '--serve') await runServer(process.argv[3] as Variant)
else if (process.argv[1] === fileURLToPath(import.meta.url)) await benchNodeAdapter()
