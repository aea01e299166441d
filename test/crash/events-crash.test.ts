import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, expect, it } from 'vitest'
import { createNodeWebhookSender, fileJournal } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, sqlJsStorage } from '../../src/index.js'

// Writes acknowledged, then kill -9 (while some of their events are being sent, most not yet):
// after a restart every acknowledged write's event is delivered, at least once, verified.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-events-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const WORKSPACE = '5a5a5a5a-0000-4000-8000-000000000002'
const ROUNDS = 20
const LEASE_MS = 60_000

/** Runs the writer and kills it with SIGKILL `delay` ms after its first acknowledged write; answers the ids it acknowledged. */
async function writeThenKill(file: string, delay: number): Promise<string[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'event-writer.ts'), file, WORKSPACE], {
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

it(`delivers the event of every acknowledged write across ${ROUNDS} kill -9s and a restart`, { timeout: 120_000 }, async () => {
  // The receiver answers after a pause, so kills also land while deliveries are in flight.
  const received: { id: string; campaignId: string }[] = []
  let secret = ''
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as { id: string; data: { id: string } }
      received.push({ id: event.id, campaignId: event.data.id })
      setTimeout(() => res.writeHead(200).end(), 5)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  const file = join(dir, 'events.sqlite')
  const open = (now: () => number = Date.now) => {
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([]),
      clock: { now },
      webhooks: { allowHttp: true, allowPrivateAddresses: true },
    })
    return { storage, service }
  }
  try {
    const first = open()
    secret = (await first.service.api.webhooks.create({ workspaceId: WORKSPACE, url, events: ['campaign.created'] })).secret
    await first.storage.close()

    const acked: string[] = []
    for (let round = 0; round < ROUNDS; round++) acked.push(...(await writeThenKill(file, 30 + Math.floor(Math.random() * 150))))
    const sentBeforeRestart = new Set(received.map((r) => r.campaignId)).size

    // The restart: deliveries a killed instance held come due when its lease ends.
    const restarted = open(() => Date.now() + LEASE_MS + 1000)
    await restarted.service.events.deliverDue({ sender: createNodeWebhookSender })
    const delivered = new Set(received.map((r) => r.campaignId))
    expect(acked.length).toBeGreaterThan(ROUNDS)
    expect(acked.filter((id) => !delivered.has(id))).toEqual([])
    // Every event stored (acknowledged or committed just before a kill) was delivered, and its delivery says so.
    const stored = await restarted.storage.transaction((tx) => tx.find('events', {}))
    expect(stored.filter((event) => !new Set(received.map((r) => r.id)).has(event.id))).toEqual([])
    const undone = await restarted.service.api.webhooks.deliveries({ status: 'pending' })
    expect(undone.pagination.total + (await restarted.service.api.webhooks.deliveries({ status: 'failed' })).pagination.total).toBe(0)
    await restarted.storage.close()
    // Some were sent by the writers before they died, most after the restart: both paths ran.
    expect(sentBeforeRestart).toBeGreaterThan(0)
    expect(sentBeforeRestart).toBeLessThan(acked.length)
  } finally {
    server.closeAllConnections()
    server.close()
  }
})
