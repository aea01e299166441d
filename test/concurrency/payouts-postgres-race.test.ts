// Two real processes, each a service instance on the same PostgreSQL schema, run `POST /payouts/run`
// for the same workspace at the same moment, 20 rounds (SPEC "Payouts": two runs at once never put
// one commission in two payouts). Each round the parent adds fresh due commissions for several
// affiliates with payout details (and, from the second round, finds the commissions of the payout it
// failed in the round before due again), then writes `go` to both children at once. Both may succeed
// (one makes the payouts, the other finds nothing due) or one may answer 409; never a 500. After each
// round: every commission due before it is in exactly one payout made in it, no commission is in two
// payouts, one payout per affiliate, the payouts' amounts add up to what was due, and every payout a
// child answered is stored as it answered it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { join } from 'node:path'
import { createInterface, type Interface } from 'node:readline'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore, type Commission } from '../../src/index.js'
import type { Payout } from '../../src/domain/payout.js'
import { formatMoney } from '../../src/domain/money.js'
import { allPages, centsOf } from '../support/helpers.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

const WORKSPACE = '44444444-4444-4444-8444-444444444444'
const ROUNDS = 20
const AFFILIATES = 6
const PER_AFFILIATE = 3

const money = formatMoney

interface RunAnswer {
  round: number
  status: number
  body: { data?: { payouts: Payout[]; skipped: unknown[] }; message?: string }
  started: number
  ended: number
}

/** A child service instance: its process, its output a line at a time, and what it wrote to stderr. */
class Runner {
  readonly lines: AsyncIterator<string>
  stderr = ''
  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    reader: Interface,
  ) {
    this.lines = reader[Symbol.asyncIterator]()
    child.stderr.on('data', (chunk) => (this.stderr += String(chunk)))
  }

  static async start(schema: string): Promise<Runner> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '..', 'fixtures', 'payout-runner.ts'), postgresUrl!, schema, WORKSPACE],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    const runner = new Runner(child, createInterface({ input: child.stdout }))
    expect(await runner.next(), `runner did not start: ${runner.stderr}`).toBe('ready')
    return runner
  }

  async next(): Promise<string | undefined> {
    const { value, done } = await this.lines.next()
    return done ? undefined : value
  }

  async answer(): Promise<RunAnswer> {
    const line = await this.next()
    if (line === undefined) throw new Error(`runner ended: ${this.stderr}`)
    return JSON.parse(line) as RunAnswer
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.stdin.end()
    await exited
  }
}

describe.skipIf(!postgresUrl)(needs('Payout runs racing on PostgreSQL', POSTGRES_VAR), () => {
  const schema = uniqueName('payrace')
  let pool: pg.Pool
  const runners: Runner[] = []

  beforeAll(async () => {
    pool = await testPool()
    // Migrated here once, so the children only connect.
    await postgresStorage({ pool, schema }).ready()
    runners.push(...(await Promise.all([Runner.start(schema), Runner.start(schema)])))
  }, 30_000)

  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()))
    if (pool) {
      await dropSchema(pool, schema)
      await pool.end()
    }
  })

  it('two processes running payouts at the same moment, 20 rounds: every due commission in exactly one payout, total paid = total due', async () => {
    const { api } = createAffiliateService({ storage: postgresStorage({ pool, schema }), keyStore: memoryKeyStore([]), rateLimit: false })
    const campaign = await api.campaigns.create({
      campaignName: 'Race',
      workspaceId: WORKSPACE,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://shop.example.com/',
      payoutTerm: 0,
    })
    const affiliates = []
    for (let i = 0; i < AFFILIATES; i++) {
      affiliates.push(
        await api.affiliates.create({
          email: `racer${i}@example.com`,
          campaignId: campaign.id,
          payoutMethod: 'PAYPAL',
          payoutEmail: `racer${i}@example.com`,
        }),
      )
    }

    let overlapping = 0
    let answeredWithNothing = 0
    let conflicts = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const context = `round ${round}`
      // Fresh due commissions: dated a minute ago on a campaign with no payout term.
      const commissionDate = new Date(Date.now() - 60_000).toISOString()
      for (const [i, affiliate] of affiliates.entries()) {
        for (let k = 0; k < PER_AFFILIATE; k++) {
          await api.commissions.create({
            campaignId: campaign.id,
            affiliateId: affiliate.id,
            referredUser: `buyer${round}.${i}.${k}@example.com`,
            amount: money(1 + ((round * 7919 + i * 104_729 + k * 1_299_709) % 5_000)),
            commissionDate,
          })
        }
      }
      // What is due now: the fresh ones and those the failed payout of the last round released.
      const due = (await allPages((page) => api.commissions.list({ workspaceId: WORKSPACE, status: 'pending', page, limit: 100 }))).filter(
        (c) => c.payoutId === null,
      )
      const dueTotal = due.reduce((sum, c) => sum + centsOf(c.amount), 0)
      const before = new Set(
        (await allPages((page) => api.payouts.list({ workspaceId: WORKSPACE, page, limit: 100 }))).map((p) => p.payoutId),
      )

      // Both at the same moment.
      for (const runner of runners) runner.child.stdin.write(`go ${round}\n`)
      const answers = await Promise.all(runners.map((r) => r.answer()))

      for (const [n, answer] of answers.entries()) {
        expect(answer.round, context).toBe(round)
        expect([201, 409], `${context}: runner ${n} answered ${answer.status} ${JSON.stringify(answer.body)}`).toContain(answer.status)
        expect(runners[n]!.stderr, `${context}: runner ${n} reported an unexpected error`).toBe('')
      }
      if (answers.some((a) => a.status === 409)) conflicts++
      if (answers.every((a) => a.status === 201) && answers.some((a) => a.body.data!.payouts.length === 0)) answeredWithNothing++
      const [a, b] = answers as [RunAnswer, RunAnswer]
      if (a.started < b.ended && b.started < a.ended) overlapping++

      // Every payout a child answered is stored as it answered it.
      const answered = answers.flatMap((x) => (x.status === 201 ? x.body.data!.payouts : []))
      for (const payout of answered)
        expect(await api.payouts.get(payout.payoutId), `${context}: payout ${payout.payoutId} stored`).toEqual(payout)

      // The payouts made in this round: exactly those answered, one per affiliate, together the total due.
      const stored = await allPages((page) => api.payouts.list({ workspaceId: WORKSPACE, page, limit: 100 }))
      const made = stored.filter((p) => !before.has(p.payoutId))
      expect(made.map((p) => p.payoutId).sort(), `${context}: payouts made = payouts answered`).toEqual(
        answered.map((p) => p.payoutId).sort(),
      )
      expect(made.map((p) => p.affiliateId).sort(), `${context}: one payout per affiliate`).toEqual(affiliates.map((x) => x.id).sort())
      expect(
        made.reduce((sum, p) => sum + centsOf(p.amount), 0),
        `${context}: sum of payouts = total due`,
      ).toBe(dueTotal)

      // No commission in two payouts (of any round), payoutIds and items agree, and every commission
      // due before the round is in exactly one payout made in it, and no other is.
      const owner = new Map<string, string>()
      for (const payout of stored) {
        const items: Commission[] = await allPages((page) => api.payouts.items(payout.payoutId, { page, limit: 100 }))
        if (payout.status === 'failed') expect(items, `${context}: a failed payout keeps no commission`).toEqual([])
        else {
          expect(payout.commissionCount, `${context}: payout ${payout.payoutId} count`).toBe(items.length)
          expect(centsOf(payout.amount), `${context}: payout ${payout.payoutId} amount`).toBe(
            items.reduce((sum, c) => sum + centsOf(c.amount), 0),
          )
        }
        for (const c of items) {
          expect(owner.get(c.commissionId), `${context}: commission ${c.commissionId} in two payouts`).toBeUndefined()
          owner.set(c.commissionId, payout.payoutId)
          expect([c.payoutId, c.status], `${context}: commission ${c.commissionId}`).toEqual([payout.payoutId, 'processing'])
        }
      }
      const madeIds = new Set(made.map((p) => p.payoutId))
      const inMade = [...owner].filter(([, payoutId]) => madeIds.has(payoutId)).map(([id]) => id)
      expect(inMade.sort(), `${context}: the commissions in this round's payouts = those due`).toEqual(
        due.map((c) => c.commissionId).sort(),
      )

      // Fail one payout, so its commissions are due again next round and go into a new payout once.
      await api.payouts.update(made[round % made.length]!.payoutId, { status: 'failed', failureReason: 'bounced' })
    }
    // The runs did race: in most rounds the two calls overlapped in time.
    console.log(
      `payout race: ${overlapping}/${ROUNDS} rounds overlapped, ${answeredWithNothing} with a run finding nothing due, ${conflicts} with a 409`,
    )
    expect(overlapping, 'the two runs never overlapped: the test raced nothing').toBeGreaterThan(0)
  }, 60_000)
})
