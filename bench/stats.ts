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
