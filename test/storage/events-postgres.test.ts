// The events cursor on PostgreSQL, where transactions run side by side: an event's sequence is
// taken from one counter row in its transaction, so a transaction that emits after another has
// taken a sequence waits for it to end and always commits later with a larger sequence. A poller
// paging with `after` can therefore never step past an event that is still to commit.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { emit, EventTransaction } from '../../src/events/outbox.js'
import { createAffiliateService, memoryKeyStore } from '../../src/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

const WORKSPACE = '77777777-7777-4777-8777-777777777777'
const clock = { now: () => Date.now() }

/** Resolves once a backend waits on a lock while running a statement on `schema` (checked every 10 ms, for at most 10 s). */
async function lockWaitOn(pool: pg.Pool, schema: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const { rows } = await pool.query(
      // The statement that waits names the schema, or takes the sequence's advisory lock (its
      // sequence passed as a parameter): either is this test's second transaction waiting.
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND (position($1 in query) > 0 OR position('pg_advisory_xact_lock' in query) > 0)`,
      [`"${schema}"`],
    )
    if (rows[0].n > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no statement on ${schema} came to wait on a lock in 10 s`)
}

describe.skipIf(!postgresUrl)(needs('The events cursor on PostgreSQL', POSTGRES_VAR), () => {
  const schema = uniqueName('events')
  let pool: pg.Pool

  beforeAll(async () => {
    pool = await testPool(6)
    await postgresStorage({ pool, schema }).ready()
  }, 30_000)

  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
  })

  it('a later transaction cannot commit an event before an earlier one that is still open', async () => {
    const storage = postgresStorage({ pool, schema })
    const { api } = createAffiliateService({ storage, keyStore: memoryKeyStore([]), rateLimit: false })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let firstEmitted!: () => void
    const emitted = new Promise<void>((resolve) => (firstEmitted = resolve))
    const order: string[] = []
    // The first transaction takes its sequence, then stays open.
    const first = storage
      .transaction(async (tx) => {
        const event = await emit(new EventTransaction(tx), clock, 'campaign.created', WORKSPACE, { n: 1 })
        firstEmitted()
        await gate
        return event
      })
      .then((event) => (order.push('first'), event))
    await emitted
    // Once the second's commit is answered, the first's is visible: it committed first. (The order
    // the two answers reach the client is not the commit order, so the test reads instead.)
    let seenBySecond: unknown[] = []
    const second = storage
      .transaction((tx) => emit(new EventTransaction(tx), clock, 'campaign.created', WORKSPACE, { n: 2 }))
      .then(async (event) => {
        order.push('second')
        seenBySecond = (await api.events.list({ workspaceId: WORKSPACE })).items.map((e) => e.data)
        return event
      })
    // The signal itself: the second transaction's backend waits on a lock, on this test's schema.
    await lockWaitOn(pool, schema)
    // A poller meanwhile sees neither, so it cannot have stepped past the first.
    expect((await api.events.list({ workspaceId: WORKSPACE })).items).toEqual([])
    expect(order).toEqual([])
    release()
    const [a, b] = await Promise.all([first, second])
    expect(seenBySecond).toEqual([{ n: 1 }, { n: 2 }])
    expect(b.sequence).toBeGreaterThan(a.sequence)
    expect((await api.events.list({ workspaceId: WORKSPACE })).items.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }])
  })

  it('concurrent writes get distinct sequences in commit order, and paging by after misses none', async () => {
    const storage = postgresStorage({ pool, schema })
    const { api } = createAffiliateService({ storage, keyStore: memoryKeyStore([]), rateLimit: false })
    const seen: string[] = []
    let after: string | undefined
    let writing = true
    // A poller pages while the writers write.
    const poller = (async () => {
      for (;;) {
        const done = !writing
        const page = await api.events.list({ workspaceId: WORKSPACE, limit: 100, ...(after ? { after } : {}) })
        seen.push(...page.items.map((e) => e.id))
        if (page.items.length) after = page.items[page.items.length - 1]!.id
        if (done && !page.hasMore) return
      }
    })()
    const made = await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        const ids: string[] = []
        for (let i = 0; i < 15; i++)
          ids.push(
            (
              await api.campaigns.create({
                campaignName: `W${w}-${i}`,
                workspaceId: WORKSPACE,
                commissionType: 'fixed',
                amount: 1,
                url: 'https://shop.example.com/',
              })
            ).id,
          )
        return ids
      }),
    )
    writing = false
    await poller
    const all = await pool.query(`SELECT id FROM "${schema}".events WHERE "workspaceId" = $1 ORDER BY sequence`, [WORKSPACE])
    expect(made.flat()).toHaveLength(90)
    expect(seen).toEqual(all.rows.map((r: { id: string }) => r.id))
  })

  it('the first events of a fresh schema, written at once, all commit with distinct sequences from the database sequence', async () => {
    const fresh = uniqueName('events_fresh')
    const storage = postgresStorage({ pool, schema: fresh })
    await storage.ready()
    try {
      const events = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          storage.transaction((tx) => emit(new EventTransaction(tx), clock, 'campaign.created', WORKSPACE, { i })),
        ),
      )
      // Distinct and from the sequence (a retried transaction would leave a gap: numbers drawn are not given back).
      const sequences = events.map((e) => e.sequence)
      expect(new Set(sequences).size).toBe(8)
      expect(Math.min(...sequences)).toBeGreaterThanOrEqual(1)
      const drawn = await pool.query(`SELECT last_value FROM "${fresh}".events_seq`)
      expect(Math.max(...sequences)).toBe(Number(drawn.rows[0].last_value))
      // No counter row: every write used to take its turn on it (and many failed under contention).
      expect((await pool.query(`SELECT value FROM "${fresh}".sequences`)).rows).toEqual([])
    } finally {
      await dropSchema(pool, fresh)
    }
  })
})
