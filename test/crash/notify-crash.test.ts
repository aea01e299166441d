import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, sqlJsStorage, type NotificationMessage } from '../../src/index.js'

// Approvals acknowledged, then kill -9 between their commit and their notification's send (the
// child's mailer never answers, so some are claimed and in flight, most still waiting): after a
// restart, each acknowledged approval's e-mail is sent exactly once.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-notify-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const WORKSPACE = '5a5a5a5a-0000-4000-8000-000000000003'
const ROUNDS = 6
/** The sender's lease: past it, a notification a dead instance claimed is due again. */
const LEASE_MS = 120_000

async function writeThenKill(file: string, campaignId: string, delay: number): Promise<string[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'notify-writer.ts'), file, campaignId], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const acked: string[] = []
  let buffered = ''
  let timer: NodeJS.Timeout | undefined
  child.stdout.on('data', (data: Buffer) => {
    buffered += data.toString()
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) {
      if (!line.startsWith('ack ')) continue
      acked.push(line.slice(4))
      timer ??= setTimeout(() => child.kill('SIGKILL'), delay)
    }
  })
  const end = await new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)))
  clearTimeout(timer)
  if (end !== 'SIGKILL') throw new Error(`The writer ended with ${String(end)} before it was killed`)
  await new Promise((resolve) => (child.stdout.readableEnded ? resolve(null) : child.stdout.once('end', resolve)))
  return acked
}

it(`sends each acknowledged approval's e-mail exactly once across ${ROUNDS} kill -9s and a restart`, { timeout: 120_000 }, async () => {
  const file = join(dir, 'notify.sqlite')
  const sent: NotificationMessage[] = []
  const open = (now: () => number = Date.now) => {
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([]),
      clock: { now },
      notify: { send: (m) => void sent.push(m), owners: ['owner@example.com'] },
    })
    return { storage, service }
  }
  const first = open()
  const campaign = await first.service.api.campaigns.create({
    workspaceId: WORKSPACE,
    campaignName: 'Acme Partners',
    commissionType: 'percentage',
    amount: 10,
    url: 'https://shop.example.com/',
    requiresApprovalToJoin: true,
    isDefault: true,
  })
  await first.storage.close()

  const acked: string[] = []
  for (let round = 0; round < ROUNDS; round++) acked.push(...(await writeThenKill(file, campaign.id, 30 + Math.floor(Math.random() * 150))))
  expect(acked.length).toBeGreaterThan(ROUNDS)

  const restarted = open(() => Date.now() + LEASE_MS + 1000)
  // Some were claimed by a writer (in flight when it died): their lease had to end for them to go.
  const claimed = (await restarted.storage.transaction((tx) => tx.find('notifications', { where: { status: 'pending' } }))).filter(
    (n) => n.claimToken !== null,
  ).length
  await restarted.service.notifications!.flush()
  const approvals = sent.filter((m) => m.kind === 'affiliate.approved').map((m) => m.to)
  const counts = new Map<string, number>()
  for (const to of approvals) counts.set(to, (counts.get(to) ?? 0) + 1)
  expect(acked.filter((email) => counts.get(email) !== 1)).toEqual([])
  expect([...counts.values()].every((count) => count === 1)).toBe(true)
  // A second restart sends nothing more.
  await restarted.service.notifications!.flush()
  expect(sent.filter((m) => m.kind === 'affiliate.approved')).toHaveLength(approvals.length)
  const left = await restarted.storage.transaction((tx) => tx.count('notifications', { where: { status: 'pending' } }))
  expect(left).toBe(0)
  await restarted.storage.close()
  expect(claimed).toBeGreaterThan(0)
})
