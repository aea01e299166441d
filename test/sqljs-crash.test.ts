import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { sqlJsStorage } from '../src/index.js'
import { fileJournal } from '../adapters/node/file-journal.js'

const dir = mkdtempSync(join(tmpdir(), 'affiliate-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const WORKSPACE = '5a5a5a5a-0000-4000-8000-000000000001'
const ROUNDS = 24

/**
 * Runs the writer and kills it with SIGKILL `delay` ms after its first acknowledged write, or, with
 * `duringStartup`, `delay` ms after it was spawned (while it opens, replays and folds). Answers
 * the ids it acknowledged.
 */
async function writeThenKill(file: string, delay: number, duringStartup: boolean): Promise<{ acked: string[]; started: boolean }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'crash', 'writer.ts'), file, WORKSPACE], {
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
  expect(end).toBe('SIGKILL')
  // Lines the child wrote before dying may still sit in the pipe.
  await new Promise((resolve) => (child.stdout.readableEnded ? resolve(null) : child.stdout.once('end', resolve)))
  return { acked, started }
}

it(`keeps every acknowledged write and no torn transaction across ${ROUNDS} kill -9s`, { timeout: 120_000 }, async () => {
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

    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const { found, defaults, total } = await storage.transaction(async (tx) => ({
      found: await tx.count('campaigns', { where: { id: { in: everAcked } } }),
      defaults: await tx.count('campaigns', { where: { workspaceId: WORKSPACE, isDefault: true } }),
      total: await tx.count('campaigns', {}),
    }))
    await storage.close()
    expect(found, `round ${round}: acknowledged writes missing after kill -9 at ${delay} ms${duringStartup ? ' from spawn' : ' after the first write'}`).toBe(everAcked.length)
    expect(defaults, `round ${round}: a transaction was torn`).toBe(total > 0 ? 1 : 0)
  }
  // Every round but those that die during startup wrote something.
  expect(roundsWithWrites).toBeGreaterThanOrEqual(ROUNDS - ROUNDS / 4)
  expect(everAcked.length).toBeGreaterThan(ROUNDS * 10)
})
