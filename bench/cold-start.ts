// Cold start: a fresh Node process imports the package's main entry from the build (as a host on
// serverless or a worker does), makes a service on memory storage and answers its first
// `GET /api/v1/health`, beside a Hono app doing the same (import `hono`, one route, first answer),
// alternating, 10 fresh processes each (BENCH_SAMPLES), after one of each to warm the disk cache.
// Each child reports its own clock at the answer: `performance.now()` counts from the process's
// start, so the figure holds Node's own start-up (the same for both) and excludes spawning.
// Goal (issue 39): the median ≤ 100 ms. The split (import, service made, first answer) says where
// ours goes; `node --cpu-prof` on the same program (printed below) gives the rest.
//
//   npm run bench -- cold-start
import { execSync, execFileSync } from 'node:child_process'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10)
const GOAL_MS = 100

/** A program that prints `{ imported, made, answered }`, each read from the process's clock, in ms. */
const program = (body: string) => `
const imported0 = performance.now()
${body}
const answered = performance.now()
const { user, system } = process.cpuUsage()
console.log(JSON.stringify({ start: imported0, imported, made, answered, cpu: (user + system) / 1000, status: response.status }))
`

const OURS = program(`
const { createAffiliateService, memoryKeyStore, memoryStorage } = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/index.js')).href)})
const imported = performance.now()
const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]) })
const made = performance.now()
const response = await service.fetch(new Request('http://localhost/api/v1/health'))
if ((await response.json()).status !== 'ok') throw new Error('not ok')
`)

const HONO = program(`
const { Hono } = await import('hono')
const imported = performance.now()
const app = new Hono().basePath('/api/v1')
app.get('/health', (c) => c.json({ status: 'ok', service: 'affiliate-service', timestamp: new Date().toISOString() }))
const made = performance.now()
const response = await app.fetch(new Request('http://localhost/api/v1/health'))
if ((await response.json()).status !== 'ok') throw new Error('not ok')
`)

interface Run {
  start: number
  imported: number
  made: number
  answered: number
  /** CPU time the process had used by then (all its threads), in ms: steadier than the clock on a busy machine. */
  cpu: number
  status: number
}

const once = (code: string, flags: string[] = []): Run =>
  JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' })) as Run

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export function coldStartBench(): { ours: number; hono: number } {
  console.log(`cold start: a fresh node process per sample, ${SAMPLES} each, alternating; ms from the process's start`)
  console.log(
    `load average at start (1, 5, 15 min): ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  )
  if (process.env.AFFILIATE_BENCH_DIST !== '0') execSync('npm run build', { cwd: root, stdio: 'ignore' })
  once(OURS)
  once(HONO)
  const runs = { ours: [] as Run[], hono: [] as Run[] }
  for (let i = 0; i < SAMPLES; i++) {
    for (const name of i % 2 === 0 ? (['ours', 'hono'] as const) : (['hono', 'ours'] as const))
      runs[name].push(once(name === 'ours' ? OURS : HONO))
  }
  const row = (name: 'ours' | 'hono') => {
    const all = runs[name]
    const at = (pick: (run: Run) => number) => median(all.map(pick)).toFixed(1).padStart(6)
    console.log(
      `  ${name.padEnd(5)} answered at ${at((r) => r.answered)} ms  (node's own start ${at((r) => r.start)}, import ${at((r) => r.imported - r.start)}, ` +
        `made ${at((r) => r.made - r.imported)}, first answer ${at((r) => r.answered - r.made)}; cpu ${at((r) => r.cpu)}; fastest ${Math.min(...all.map((r) => r.answered)).toFixed(1)}, slowest ${Math.max(...all.map((r) => r.answered)).toFixed(1)})`,
    )
    return median(all.map((r) => r.answered))
  }
  const ours = row('ours')
  const hono = row('hono')
  console.log(`  ours/hono ${(ours / hono).toFixed(2)}`)
  console.log(
    `cold start, import + first /health answer on memory storage: ${ours.toFixed(1)} ms (goal <= ${GOAL_MS} ms): ${ours <= GOAL_MS ? 'PASS' : 'NOT met'}`,
  )
  console.log(`  where it goes: node --cpu-prof --cpu-prof-dir=.tmp/cold-prof --input-type=module -e "<the program above>"`)
  return { ours, hono }
}

if (import.meta.url === `file://${process.argv[1]}`) coldStartBench()
