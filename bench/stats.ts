// Small measuring helpers shared by the benchmarks. Figures are for ratios within one run.

/** Runs `fn` `count` times, one after another, and answers each duration in milliseconds. */
export async function sample(count: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await fn(i)
    times.push(performance.now() - start)
  }
  return times
}

export const percentile = (times: readonly number[], p: number): number => {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

/** Operations per second of `fn` over about `ms` milliseconds, after a warm-up. */
export async function throughput(ms: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2000; i++) await fn()
  let count = 0
  const start = performance.now()
  let now = start
  while (now - start < ms) {
    for (let i = 0; i < 200; i++) await fn()
    count += 200
    now = performance.now()
  }
  return (count / (now - start)) * 1000
}

export const fixed = (value: number, digits = 3): string => (Number.isFinite(value) ? value.toFixed(digits) : String(value))

/** Prints a table of rows (objects with the same keys) in aligned columns. */
export function table(rows: Record<string, string | number>[]): void {
  if (rows.length === 0) return
  const keys = Object.keys(rows[0]!)
  const width = keys.map((key) => Math.max(key.length, ...rows.map((row) => String(row[key]).length)))
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(width[i]!)).join('  ')
  console.log(line(keys))
  for (const row of rows) console.log(line(keys.map((key) => String(row[key]))))
}

/** What a server process under load reports of itself (bench/node-adapter.ts, bench/peers). */
export interface Reading {
  /** CPU time used so far, in microseconds. */
  cpu: number
  /** Requests received so far. */
  requests: number
  /** Its clock, in milliseconds. */
  at: number
}

/** A server's best one-second window of a run: the fastest, and the cheapest per request. */
export interface Best {
  perSecond: number
  /** Server CPU microseconds per request. */
  cpuPerRequest: number
}

/**
 * Loads a server with autocannon for the options' duration, reading the server once a second, and
 * answers its best window. Windows with fewer than `minWindowRequests` (the run's cut-off end) are
 * too short to read. Any non-2xx answer, error or timeout fails the run.
 */
export async function loadInWindows(
  read: () => Promise<Reading>,
  options: import('autocannon').Options,
  label: string,
  minWindowRequests: number,
): Promise<Best> {
  const { default: autocannon } = await import('autocannon')
  const readings: Reading[] = [await read()]
  const sampler = setInterval(() => void read().then((reading) => readings.push(reading)), 1000)
  let result: import('autocannon').Result
  try {
    result = await autocannon(options)
  } finally {
    clearInterval(sampler)
  }
  readings.push(await read())
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`)
  }
  const best: Best = { perSecond: 0, cpuPerRequest: Infinity }
  for (let i = 1; i < readings.length; i++) {
    const [from, to] = [readings[i - 1]!, readings[i]!]
    const requests = to.requests - from.requests
    if (requests < minWindowRequests) continue
    best.perSecond = Math.max(best.perSecond, (requests * 1000) / (to.at - from.at))
    best.cpuPerRequest = Math.min(best.cpuPerRequest, (to.cpu - from.cpu) / requests)
  }
  return best
}
