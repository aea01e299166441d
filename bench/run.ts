// `npm run bench`: runs every benchmark program in bench/, one after another, each in a process of
// its own (so one's heap and JIT state never colour another's figures). Each prints ratios against a
// baseline it measures in the same run; absolute numbers are this machine's only.
//
//   npm run bench                 every benchmark
//   npm run bench -- storage      the ones whose file name contains "storage"
//
// A benchmark is any bench/*.ts but this file and the shared helpers (stats.ts, targets.ts, server-process.ts, or a name
// starting with "_"); each runs its measurements only when started as the main program.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const HELPERS = new Set(['run.ts', 'stats.ts', 'targets.ts', 'server-process.ts'])
const filters = process.argv.slice(2)

const programs = readdirSync(here)
  .filter((name) => name.endsWith('.ts') && !HELPERS.has(name) && !name.startsWith('_'))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort()

if (programs.length === 0) {
  console.error(`No benchmark matches ${filters.join(' ')}`)
  process.exit(1)
}

const failed: string[] = []
for (const name of programs) {
  console.log(`\n=== bench/${name} ===`)
  const started = performance.now()
  const { status, signal } = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, name)], { stdio: 'inherit' })
  console.log(
    `=== bench/${name}: ${status === 0 ? 'done' : `failed (${signal ?? status})`} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  if (status !== 0) failed.push(name)
}
if (failed.length) {
  console.error(`\nFailed: ${failed.join(', ')}`)
  process.exit(1)
}
