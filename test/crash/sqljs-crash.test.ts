import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, it } from 'vitest'
import { sqlJsStorage } from '../../src/index.js'
import { fileJournal } from '../../adapters/node/file-journal.js'

const dir = mkdtempSync(join(tmpdir(), 'affiliate-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const WORKSPACE = '5a5a5a5a-0000-4000-8000-000000000001'
const ROUNDS = 24

/**
 * Runs the writer and kills it with SIGKILL `delay` ms after its first acknowledged write, or, with
 * `duringStartup`, `delay` ms after it was spawned (while it opens, replays and folds). Answers
 * the ids it acknowledged. `writers` loops write at once in the child.
 */
async function writeThenKill(
  file: string,
  delay: number,
  duringStartup: boolean,
  writers = 4,
): Promise<{ acked: string[]; started: boolean }> {
  const writer = join(import.meta.dirname, 'writer.ts')
  const child = spawn(process.execPath, ['--import', 'tsx', writer, file, WORKSPACE, String(writers)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const acked: string[] = []
  let started = false
  let buffered = ''
  let timer: NodeJS.Timeout | undefined
  const kill = () => (timer ??= setTimeout(() => child.kill('SIGKILL'), delay))
  if (duringStartup) kill()
  child.stdout.on('data', (data: Buffer) => {
    buffered += data.toString()
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) {
      if (line === 'ready') started = true
      else if (line.startsWith('ack ')) {
        acked.push(line.slice(4))
        // The clock starts at the first acknowledged write, so a slow machine cannot turn a
        // writing round into one that dies before writing anything.
        kill()
      }
    }
  })
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)))
  const end = await exited
  clearTimeout(timer)
  if (end !== 'SIGKILL') throw new Error(`The writer ended with ${String(end)} before it was killed`)
  // Lines the child wrote before dying may still sit in the pipe.
  await new Promise((resolve) => (child.stdout.readableEnded ? resolve(null) : child.stdout.once('end', resolve)))
  return { acked, started }
}

/** Opens the file as a restart would: answers how many of `ids` it holds, and the default count and total. */
async function reopen(file: string, ids: string[]) {
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  try {
    const stored = await storage.transaction((tx) => tx.find('campaigns', {}))
    const present = new Set(stored.map((campaign) => campaign.id))
    return {
      found: ids.filter((id) => present.has(id)).length,
      defaults: stored.filter((campaign) => campaign.workspaceId === WORKSPACE && campaign.isDefault).length,
      total: stored.length,
    }
  } finally {
    await storage.close()
  }
}

// The two run side by side (different files), keeping the file's run under a minute.
it.concurrent(`keeps every acknowledged write and no torn transaction across ${ROUNDS} kill -9s`, { timeout: 120_000 }, async ({
  expect,
}) => {
  const file = join(dir, 'crash.sqlite')
  const everAcked: string[] = []
  let roundsWithWrites = 0
  for (let round = 0; round < ROUNDS; round++) {
    // Every fourth round dies while starting up (opening, replaying, folding); the others at
    // spread-out moments of writing.
    const duringStartup = round % 4 === 3
    const delay = duringStartup ? 100 + Math.floor(Math.random() * 900) : ((round * 97) % 500) + Math.floor(Math.random() * 50)
    const { acked } = await writeThenKill(file, delay, duringStartup)
    if (acked.length > 0) roundsWithWrites++
    everAcked.push(...acked)

    const { found, defaults, total } = await reopen(file, everAcked)
    expect(
      found,
      `round ${round}: acknowledged writes missing after kill -9 at ${delay} ms${duringStartup ? ' from spawn' : ' after the first write'}`,
    ).toBe(everAcked.length)
    expect(defaults, `round ${round}: a transaction was torn`).toBe(total > 0 ? 1 : 0)
  }
  // Every round but those that die during startup wrote something.
  expect(roundsWithWrites).toBeGreaterThanOrEqual(ROUNDS - ROUNDS / 4)
  expect(everAcked.length).toBeGreaterThan(ROUNDS * 10)
})

const CONCURRENT_ROUNDS = 20
const WRITERS = 16

it.concurrent(`keeps every write acknowledged to ${WRITERS} concurrent writers across ${CONCURRENT_ROUNDS} kill -9s`, {
  timeout: 120_000,
}, async ({ expect }) => {
  // Sixteen loops write at once, so most commits share an fsync with others (group commit): a kill
  // lands between a group's write and its fsync, or between the fsync and the acknowledgements.
  const file = join(dir, 'concurrent.sqlite')
  const everAcked: string[] = []
  for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
    // A random moment within the first 400 ms of writing (the clock starts at the first ack).
    const delay = Math.floor(Math.random() * 400)
    const { acked } = await writeThenKill(file, delay, false, WRITERS)
    everAcked.push(...acked)
    const { found, defaults, total } = await reopen(file, everAcked)
    expect(found, `round ${round}: acknowledged writes missing after kill -9 at ${delay} ms after the first write`).toBe(everAcked.length)
    expect(defaults, `round ${round}: a transaction was torn`).toBe(total > 0 ? 1 : 0)
  }
  expect(everAcked.length).toBeGreaterThan(CONCURRENT_ROUNDS * WRITERS)
})
