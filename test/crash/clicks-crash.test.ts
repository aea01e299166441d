import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { BROWSER } from '../support/tracking-support.js'
import { createAffiliateService, memoryKeyStore, sqlJsStorage } from '../../src/index.js'

// `npm start` on the sql.js file under a flood of redirects, each a new visitor from its own
// loopback address (so the per-address limit admits them all). Killed with SIGKILL: every click
// whose batch committed is in the file with its link and affiliate counters and report rollups in
// step (no half batch), and at most one batch's worth of answered clicks is missing. Stopped with
// SIGTERM: every answered click is there.

const root = mkdtempSync(join(tmpdir(), 'affiliate-clicks-crash-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const KEY = 'clicks-crash-test-key-0123456789'
const WORKSPACE = '5a5a5a5a-0000-4000-8000-000000000030'
const BATCH = 1000

interface Running {
  base: string
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  kill(signal: NodeJS.Signals): boolean
}

async function start(file: string): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'bin', 'start.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      REDIS_URL: '',
      HOST: '',
      PORT: '0',
      AFFILIATE_DB: file,
      AFFILIATE_API_KEY: KEY,
      AFFILIATE_WORKSPACE_ID: WORKSPACE,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const base = await new Promise<string>((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (data: Buffer) => {
      output += data.toString()
      const found = /http:\/\/127\.0\.0\.1:\d+\/api\/v1/.exec(output)
      if (found) resolve(found[0])
    })
    void exit.then(() => reject(new Error(`npm start ended before listening:\n${output}`)))
  })
  return { base, exit, kill: (signal) => child.kill(signal) }
}

async function api(base: string, path: string, body: unknown): Promise<{ id: string }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth-service': KEY },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(201)
  return ((await response.json()) as { data: { id: string } }).data
}

/** One redirect from loopback address `n`; answers the clickId, or null when the server is gone. */
function redirect(url: URL, n: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}/r/CRASH-1`,
        agent: false,
        localAddress: `127.1.${(n >> 8) & 255}.${n & 255}`,
        headers: { 'user-agent': `${BROWSER} crash/${n}` },
      },
      (res) => {
        res.resume()
        // Anything but a 302 with a clickId is a failure of the test, not a server gone.
        const clickId = res.statusCode === 302 ? new URL(res.headers.location!).searchParams.get('clickId') : null
        if (clickId === null) reject(new Error(`redirect answered ${res.statusCode} ${res.headers.location ?? ''}`))
        else resolve(clickId)
      },
    )
    req.on('error', () => resolve(null))
    req.end()
  })
}

/** Floods the redirect from `loops` loops; calls `stop` once `after` clicks were answered; answers every answered clickId. */
async function flood(base: string, after: number, stop: () => void, loops = 24): Promise<string[]> {
  const url = new URL(base)
  const answered: string[] = []
  let n = 0
  let stopped = false
  let failures = 0
  await Promise.all(
    Array.from({ length: loops }, async () => {
      // Past `stop`, requests go on until the server is gone (a few failures in a row).
      while (failures < loops * 3) {
        const clickId = await redirect(url, n++ % 65_000)
        if (clickId === null) {
          failures++
          continue
        }
        answered.push(clickId)
        if (!stopped && answered.length >= after) {
          stopped = true
          stop()
        }
      }
    }),
  )
  if (!stopped) {
    stop()
    throw new Error(`the flood ended after ${answered.length} clicks, before ${after}`)
  }
  return answered
}

/** The file reopened: its click ids, the counters, and the clicks its report rollups count. */
async function reopen(file: string, link: { id: string; affiliateId: string }) {
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  try {
    const service = createAffiliateService({ storage, keyStore: memoryKeyStore([]) })
    const ids = (await storage.transaction((tx) => tx.find('clicks', {}), { readOnly: true })).map((click) => click.id)
    const counters = await storage.transaction(
      async (tx) => [(await tx.get('links', link.id))!.totalClicks, (await tx.get('affiliates', link.affiliateId))!.totalClicks],
      { readOnly: true },
    )
    const now = Date.now()
    const day = 86_400_000
    const summary = await service.api.reports.summary({
      workspaceId: WORKSPACE,
      from: new Date(now - day).toISOString(),
      to: new Date(now + day).toISOString(),
    })
    return { ids, counters, rollups: summary.clicks }
  } finally {
    await storage.close()
  }
}

async function setUp(name: string) {
  const file = join(root, name, 'affiliate.sqlite')
  const server = await start(file)
  const campaign = await api(server.base, '/campaigns', {
    campaignName: 'Crash',
    workspaceId: WORKSPACE,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://shop.example.com/',
  })
  const affiliate = await api(server.base, '/affiliates', { email: 'crash@example.com', campaignId: campaign.id })
  const link = await api(server.base, '/links', { affiliateId: affiliate.id, referralCode: 'CRASH-1' })
  return { file, server, link: { id: link.id, affiliateId: affiliate.id } }
}

it('kill -9 during a flood of clicks: every committed batch whole, counters and rollups in step, at most one batch lost', {
  timeout: 120_000,
}, async () => {
  const { file, server, link } = await setUp('killed')
  const answered = await flood(server.base, 1500, () => server.kill('SIGKILL'))
  expect((await server.exit).signal).toBe('SIGKILL')
  const { ids, counters, rollups } = await reopen(file, link)
  const kept = new Set(ids)
  const lost = answered.filter((id) => !kept.has(id))
  console.log(`clicks crash: ${answered.length} answered, ${ids.length} in the file after kill -9, ${lost.length} answered and lost`)
  expect(ids.length).toBeGreaterThan(0)
  expect(counters).toEqual([ids.length, ids.length])
  expect(rollups).toBe(ids.length)
  expect(lost.length).toBeLessThanOrEqual(BATCH)
})

it('SIGTERM during a flood of clicks: npm start writes every answered click before it exits', { timeout: 120_000 }, async () => {
  const { file, server, link } = await setUp('stopped')
  const answered = await flood(server.base, 1500, () => server.kill('SIGTERM'))
  expect((await server.exit).code).toBe(0)
  const { ids, counters, rollups } = await reopen(file, link)
  console.log(`clicks crash: ${answered.length} answered, ${ids.length} in the file after SIGTERM`)
  expect(new Set(ids)).toEqual(new Set(answered))
  expect(counters).toEqual([ids.length, ids.length])
  expect(rollups).toBe(ids.length)
})
