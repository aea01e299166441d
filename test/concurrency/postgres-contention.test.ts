// Writers on several real processes against one PostgreSQL schema and one workspace (SPEC
// "Storage": serializable transactions, retried; "Events": `GET /events/list?after=` for hosts
// that poll). Three processes make 8 creates at a time each (affiliates and commissions, every one
// writing an event), a fourth runs payouts over and over meanwhile, and this process polls
// `/events/list?after=<the last id seen>` throughout. Contention alone may never fail a write: every
// create answers 201, every payout run 201 or 409 (another run took its commissions); and the
// poller, reading while events commit, must end up having seen every event there is.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore } from '../../src/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

const WORKSPACE = '55555555-5555-4555-8555-555555555555'
const WRITERS = 3
const CONCURRENCY = 8
const CREATES = 80 // per writer process: 480 in all
const PAYOUT_RUNS = 12

interface Summary {
  statuses: Record<string, number>
  failures: string[]
}

class Child {
  stderr = ''
  private readonly lines: AsyncIterator<string>
  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
    child.stderr.on('data', (chunk) => (this.stderr += String(chunk)))
  }

  static async start(args: string[]): Promise<Child> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '..', 'fixtures', 'contention-writer.ts'), ...args],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    )
    const started = new Child(child)
    expect(await started.line(), `writer did not start: ${started.stderr}`).toBe('ready')
    return started
  }

  async line(): Promise<string | undefined> {
    const { value, done } = await this.lines.next()
    return done ? undefined : value
  }

  async summary(): Promise<Summary> {
    const line = await this.line()
    if (line === undefined) throw new Error(`writer ended: ${this.stderr}`)
    return JSON.parse(line) as Summary
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.stdin.end()
    await exited
  }
}

describe.skipIf(!postgresUrl)(needs('Concurrent writers on PostgreSQL', POSTGRES_VAR), () => {
  const schema = uniqueName('contention')
  let pool: pg.Pool
  const children: Child[] = []

  beforeAll(async () => {
    pool = await testPool()
    await postgresStorage({ pool, schema }).ready()
  }, 30_000)

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()))
    if (pool) {
      await dropSchema(pool, schema)
      await pool.end()
    }
  })

  it('3 processes x 8 concurrent creates and payout runs on one workspace: no write fails, a poller on events/list?after= misses no event', {
    timeout: 300_000,
  }, async () => {
    const storage = postgresStorage({ pool, schema })
    const { api } = createAffiliateService({ storage, keyStore: memoryKeyStore([]), rateLimit: false })
    const campaign = await api.campaigns.create({
      campaignName: 'Contention',
      workspaceId: WORKSPACE,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://shop.example.com/',
      payoutTerm: 0,
    })
    const affiliates = []
    for (let i = 0; i < 6; i++) {
      affiliates.push(
        await api.affiliates.create({
          email: `payee${i}@example.com`,
          campaignId: campaign.id,
          payoutMethod: 'PAYPAL',
          payoutEmail: `payee${i}@example.com`,
        }),
      )
    }
    const common = [postgresUrl!, schema, WORKSPACE, campaign.id, JSON.stringify(affiliates.map((a) => a.id))]
    children.push(
      ...(await Promise.all([
        ...Array.from({ length: WRITERS }, () => Child.start([...common, 'creates', String(CREATES), String(CONCURRENCY)])),
        Child.start([...common, 'payouts', String(PAYOUT_RUNS), '1']),
      ])),
    )

    // The poller: follows `after` from the start while the writers run, as a host polling would.
    const seen: { id: string; sequence: number }[] = []
    let after: string | undefined
    const poll = async () => {
      for (;;) {
        const page = await api.events.list({ limit: 100, ...(after ? { after } : {}) })
        for (const event of page.items) seen.push({ id: event.id, sequence: event.sequence })
        if (page.items.length > 0) after = page.items.at(-1)!.id
        if (!page.hasMore) return
      }
    }
    let writing = true
    const poller = (async () => {
      while (writing) await poll()
    })()

    for (const child of children) child.child.stdin.write('go\n')
    const summaries = await Promise.all(children.map((c) => c.summary()))
    writing = false
    await poller
    await poll()

    const creates = summaries.slice(0, WRITERS)
    const runs = summaries[WRITERS]!
    const failed = creates.reduce((sum, s) => sum + CREATES - (s.statuses['201'] ?? 0), 0)
    const runsFailed = PAYOUT_RUNS - (runs.statuses['201'] ?? 0) - (runs.statuses['409'] ?? 0)
    expect({ failed, runsFailed, failures: [...creates.flatMap((s) => s.failures), ...runs.failures] }).toEqual({
      failed: 0,
      runsFailed: 0,
      failures: [],
    })
    for (const child of children) expect(child.stderr).toBe('')

    // Every event stored, in sequence order; the poller saw each, in that order.
    const stored = (await pool.query<{ id: string; sequence: string }>(`SELECT id, sequence FROM "${schema}".events ORDER BY sequence`))
      .rows
    expect(stored.length).toBeGreaterThanOrEqual(WRITERS * CREATES)
    const seenIds = new Set(seen.map((e) => e.id))
    const skipped = stored.filter((e) => !seenIds.has(e.id))
    expect({ skipped: skipped.length, seen: seen.length }).toEqual({ skipped: 0, seen: stored.length })
    expect(seen.map((e) => e.id)).toEqual(stored.map((e) => e.id))
  })
})
