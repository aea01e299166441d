// Our whole service over HTTP against peers doing the same work, on three keyed routes, measured
// from outside with autocannon, every server in a process of its own (bench/peers/child.ts):
//
//   ours     createAffiliateService on memory storage, memory key store, limiter on at limits this
//            load never reaches, served by serve() of adapters/node.ts
//   hono     Hono + @hono/node-server + zod (@hono/zod-validator) + hono-rate-limiter
//   express  Express 5 + express-validator + express-rate-limit (the source document's stack)
//   bare     node:http answering the same bytes, computed once: the ceiling
//
// The peers do what ours does: SHA-256 of the key and a Map look-up of the hash, the per-key limit
// of their own limiter, validation of query and body with their validator (unknown fields
// refused), the same storage and records (bench/peers/store.ts), the same JSON bytes (checked by
// test/package/bench-peers.test.ts).
//
//   npm run bench -- peers
//   BENCH_SECONDS=5 BENCH_ROUNDS=5 npm run bench -- peers      (longer; default 3 rounds of 3 s)
//   BENCH_ONLY=track npm run bench -- peers                    (one route)
//
// Each server gets a one-second warm-up per route, then BENCH_ROUNDS runs of BENCH_SECONDS in
// alternating order; each run is read in one-second windows counted by the server process itself
// (requests and CPU time), and each server's best window over its runs counts: on a shared
// machine others only ever slow a window down. Goals, per route, on requests per second:
// ours/hono >= 1.0, ours/express >= 3.0; ours/bare is reported only.
//
// Beside throughput, latency at a fixed rate (reported): each server is sent BENCH_RATE requests
// per second (default 1,000, below every server's capacity here) over 10 connections for
// BENCH_SECONDS, and autocannon's p50 and p99 are printed. On a shared 2-core machine the load
// generator and the server contend for the cores at full load; at a fixed rate well below it they
// do not, so this is what a client sees of the server's own work.
import { execSync, fork, type ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { loadInWindows, type Best, type Reading } from './stats.js'
import { requestHeaders, ROUTES, SERVERS, type Fixture, type Route, type ServerName } from './peers/common.js'

const CONNECTIONS = 32
const GOALS: { peer: Exclude<ServerName, 'ours'>; goal: number | null }[] = [
  { peer: 'hono', goal: 1.0 },
  { peer: 'express', goal: 3.0 },
  // The ceiling, not a peer: reported (issue 27).
  { peer: 'bare', goal: null },
]

interface Child {
  name: ServerName
  process: ChildProcess
  origin: string
  fixture: Fixture
  note?: string
  read(): Promise<Reading>
}

function start(name: ServerName): Promise<Child> {
  const child = fork(fileURLToPath(new URL('./peers/child.ts', import.meta.url)), [name], { execArgv: ['--import', 'tsx'] })
  const waiting: ((reading: Reading) => void)[] = []
  const read = () =>
    new Promise<Reading>((resolve) => {
      waiting.push(resolve)
      child.send('read')
    })
  return new Promise((resolve, reject) => {
    const failed = (code: number | null) => reject(new Error(`the ${name} server exited with ${code}`))
    child.once('exit', failed)
    child.on('message', (message: Reading | { origin: string; fixture: Fixture; note?: string }) => {
      if ('cpu' in message) return waiting.shift()?.(message)
      child.off('exit', failed)
      resolve({ name, process: child, read, ...message })
    })
  })
}

/** Windows with fewer requests than this are the run's cut-off end, too short to read. */
const MIN_WINDOW_REQUESTS = 500

const load = (server: Child, route: Route, seconds: number): Promise<Best> =>
  loadInWindows(
    server.read,
    {
      url: server.origin + route.path(server.fixture),
      method: route.method,
      headers: requestHeaders,
      ...(route.body ? { body: route.body(server.fixture) } : {}),
      connections: CONNECTIONS,
      duration: seconds,
    },
    `${server.name}, ${route.name}`,
    MIN_WINDOW_REQUESTS,
  )

const RATE = Number(process.env.BENCH_RATE ?? 1000)

/** p50 and p99 latency in ms at RATE requests per second (autocannon's `overallRate`). */
async function latencyAtRate(server: Child, route: Route, seconds: number): Promise<{ p50: number; p99: number }> {
  const { default: autocannon } = await import('autocannon')
  const result = await autocannon({
    url: server.origin + route.path(server.fixture),
    method: route.method,
    headers: requestHeaders,
    ...(route.body ? { body: route.body(server.fixture) } : {}),
    connections: 10,
    overallRate: RATE,
    duration: seconds,
  })
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${server.name}, ${route.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors at a fixed rate`)
  return { p50: result.latency.p50, p99: result.latency.p99 }
}

export interface PeerRatios {
  route: string
  /** ours / peer, requests per second. */
  ratios: Record<Exclude<ServerName, 'ours'>, number>
}

export async function benchPeers(
  seconds = Number(process.env.BENCH_SECONDS ?? 3),
  rounds = Number(process.env.BENCH_ROUNDS ?? 3),
  only = process.env.BENCH_ONLY ?? '',
): Promise<{ results: PeerRatios[]; failed: number }> {
  const load1 = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')
  console.log(
    `ours vs peers over HTTP: autocannon, ${CONNECTIONS} connections, warm-up 1 s, ${rounds} runs of ${seconds} s per server and route, best one-second window`,
  )
  console.log(`load average at start (1, 5, 15 min): ${load1}`)
  if (process.env.AFFILIATE_BENCH_DIST !== '0') {
    // Ours runs as users run it: the build, plain JavaScript like the peers' libraries.
    execSync('npm run build', { stdio: 'ignore' })
    process.env.AFFILIATE_BENCH_DIST = '1'
  }
  const children: Child[] = []
  for (const name of SERVERS) children.push(await start(name)) // one after another: no start-up contends with another
  const results: PeerRatios[] = []
  let failed = 0
  try {
    for (const child of children) if (child.note) console.log(`${child.name}: ${child.note}`)
    for (const route of ROUTES.filter((r) => r.name.includes(only))) {
      const best = new Map<ServerName, Best>()
      for (const child of children) await load(child, route, 1)
      for (let round = 0; round < rounds; round++) {
        for (const child of round % 2 === 0 ? children : [...children].reverse()) {
          const run = await load(child, route, seconds)
          const seen = best.get(child.name) ?? { perSecond: 0, cpuPerRequest: Infinity }
          best.set(child.name, {
            perSecond: Math.max(seen.perSecond, run.perSecond),
            cpuPerRequest: Math.min(seen.cpuPerRequest, run.cpuPerRequest),
          })
        }
      }
      const ours = best.get('ours')!
      console.log(route.name)
      for (const name of SERVERS) {
        const run = best.get(name)!
        const ratio =
          name === 'ours'
            ? ''
            : `  ours/${name}: req/s ${(ours.perSecond / run.perSecond).toFixed(2)}  cpu ${(run.cpuPerRequest / ours.cpuPerRequest).toFixed(2)}`
        console.log(
          `  ${name.padEnd(8)} ${String(Math.round(run.perSecond)).padStart(6)} req/s ${run.cpuPerRequest.toFixed(1).padStart(6)} µs cpu/req${ratio}`,
        )
      }
      const ratios = Object.fromEntries(GOALS.map(({ peer }) => [peer, ours.perSecond / best.get(peer)!.perSecond])) as PeerRatios['ratios']
      for (const { peer, goal } of GOALS) {
        if (goal === null) {
          console.log(`  ours/${peer} req/s ${ratios[peer].toFixed(2)} (reported)`)
          continue
        }
        const met = ratios[peer] >= goal
        if (!met) failed++
        console.log(`  ours/${peer} req/s ${ratios[peer].toFixed(2)} (goal >= ${goal.toFixed(1)}): ${met ? 'PASS' : 'FAIL'}`)
      }
      const latency: string[] = []
      for (const child of children) {
        const { p50, p99 } = await latencyAtRate(child, route, seconds)
        latency.push(`${child.name} p50 ${p50} ms p99 ${p99} ms`)
      }
      console.log(`  latency at ${RATE} req/s (reported): ${latency.join(', ')}`)
      results.push({ route: route.name, ratios })
    }
  } finally {
    for (const child of children) child.process.kill()
  }
  console.log(
    `load average at end (1, 5, 15 min): ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  )
  console.log(`peers: ${failed === 0 ? 'every goal met' : `${failed} goal(s) NOT met`}`)
  return { results, failed }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchPeers()
