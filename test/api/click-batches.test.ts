import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve } from '../../adapters/node.js'
import { postgresStorage } from '../../adapters/postgres.js'
import type { LinkRecord } from '../../src/domain/records.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { createClickWriter } from '../../src/tracking/click-writer.js'
import { apiCampaignInput, manualClock, WS_A } from '../support/helpers.js'
import { dropSchema, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { BROWSER } from '../support/tracking-support.js'

// The redirect answers before its click is written: clicks, counters and rollups are written in
// batches, each one transaction; the dedupe stays exact across batches and instances.

/** A storage that counts its write transactions and can be made to fail or wait. */
function watched(inner: Storage) {
  const state = {
    writes: 0,
    failNext: 0,
    gate: null as Promise<void> | null,
    started: [] as (() => void)[],
  }
  const storage: Storage = {
    async transaction(work, options) {
      if (!options?.readOnly) {
        state.writes++
        for (const wake of state.started.splice(0)) wake()
        if (state.gate) await state.gate
        if (state.failNext > 0) {
          state.failNext--
          throw new Error('the disk is full')
        }
      }
      return inner.transaction(work, options)
    },
  }
  /** Resolves when the next write transaction starts. */
  const nextWrite = () => new Promise<void>((resolve) => state.started.push(resolve))
  return { storage, state, nextWrite }
}

async function setup(storage: Storage, options: { clickFlushMs?: number } = {}) {
  const errors: unknown[] = []
  const clock = manualClock()
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([]),
    clock,
    rateLimit: false,
    trackingLimit: false,
    clickFlushMs: options.clickFlushMs ?? 60_000,
    onError: (error) => errors.push(error),
  })
  return { service, errors, clock }
}

async function withLink(storage: Storage, options: { clickFlushMs?: number } = {}) {
  const t = await setup(storage, options)
  const campaign = await t.service.api.campaigns.create(apiCampaignInput({ url: 'https://shop.example.com/landing' }))
  const affiliate = await t.service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const link = await t.service.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  return { ...t, campaign, affiliate, link }
}

type Service = ReturnType<typeof createAffiliateService>

/** GET /r/ANN-2026 in process, from `visitor` (its user agent), answering the clickId. */
async function click(service: Service, visitor: number | string = 1): Promise<string> {
  const response = await service.fetch(
    new Request('http://localhost/api/v1/r/ANN-2026', { headers: { 'user-agent': `${BROWSER} v/${visitor}` } }),
    {
      clientAddress: '203.0.113.7',
    },
  )
  expect(response.status).toBe(302)
  return new URL(response.headers.get('location')!).searchParams.get('clickId')!
}

const stored = (storage: Storage) =>
  storage.transaction((tx) => tx.find('clicks', { orderBy: { field: 'createdAt', direction: 'ASC' } }), { readOnly: true })
const totals = async (storage: Storage, link: { id: string; affiliateId: string }) =>
  storage.transaction(
    async (tx) => [(await tx.get('links', link.id))!.totalClicks, (await tx.get('affiliates', link.affiliateId))!.totalClicks],
    { readOnly: true },
  )

describe('the redirect answers first, and a batch writes its clicks in one transaction', () => {
  it('clicks wait until the batch is written; then clicks, counters (summed) and rollups are there together, in one write', async () => {
    const w = watched(memoryStorage())
    const t = await withLink(w.storage)
    // The first request makes the salt secret and prunes: writes of their own.
    const warm = await click(t.service, 0)
    await t.service.flush()
    const writesBefore = w.state.writes
    const ids = [await click(t.service, 1), await click(t.service, 2), await click(t.service, 3), await click(t.service, 1)]
    expect(ids[3]).toBe(ids[0])
    expect((await stored(w.storage)).map((c) => c.id)).toEqual([warm])
    expect(w.state.writes).toBe(writesBefore)
    await t.service.flush()
    expect(w.state.writes).toBe(writesBefore + 1)
    expect(
      (await stored(w.storage))
        .map((c) => c.id)
        .filter((id) => id !== warm)
        .sort(),
    ).toEqual([...new Set(ids)].sort())
    expect(await totals(w.storage, t.link)).toEqual([4, 4])
    const summary = await t.service.api.reports.summary({
      workspaceId: WS_A,
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-02T00:00:00.000Z',
    })
    expect(summary).toMatchObject({ clicks: 4 })
    expect(t.errors).toEqual([])
  })

  it('one batch over two hours puts each click in its own hour of the report, and both in the day', async () => {
    const storage = memoryStorage()
    const t = await withLink(storage)
    t.clock.set(Date.UTC(2026, 0, 1, 9, 58))
    for (let visitor = 1; visitor <= 3; visitor++) await click(t.service, visitor)
    t.clock.set(Date.UTC(2026, 0, 1, 10, 1))
    for (let visitor = 4; visitor <= 8; visitor++) await click(t.service, visitor)
    await t.service.flush()
    const range = { workspaceId: WS_A, from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z' }
    const hourly = await t.service.api.reports.timeseries({ ...range, interval: 'hour' })
    const clicksAt = (iso: string) => hourly.items.find((point) => point.start === iso)?.clicks
    expect([clicksAt('2026-01-01T09:00:00.000Z'), clicksAt('2026-01-01T10:00:00.000Z')]).toEqual([3, 5])
    expect(await t.service.api.reports.summary(range)).toMatchObject({ clicks: 8 })
  })

  it('a repeat after its click was written answers the same id and counts nothing (dedupe across the batch boundary and a restart)', async () => {
    const storage = memoryStorage()
    const t = await withLink(storage)
    const first = await click(t.service)
    await t.service.close()
    t.clock.advance(60_000)
    expect(await click(t.service)).toBe(first)
    // Another service on the storage, as after a restart: its memory is empty, the storage knows.
    const again = await setup(storage)
    again.clock.set(t.clock.now())
    expect(await click(again.service)).toBe(first)
    await Promise.all([t.service.flush(), again.service.flush()])
    expect(await totals(storage, t.link)).toEqual([1, 1])
  })

  it('on a storage nobody else writes to, a new visitor is answered without a read; after a restart a repeat is still found, the filter being filled from the storage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'affiliate-seen-'))
    try {
      const file = join(dir, 'db.sqlite')
      const reads = { count: 0 }
      /** The storage with its read transactions counted (and `exclusive` kept). */
      const counted = (inner: Storage): Storage => ({
        exclusive: inner.exclusive,
        transaction: (work, options) => {
          if (options?.readOnly) reads.count++
          return inner.transaction(work, options)
        },
      })
      const first = sqlJsStorage({ persist: fileJournal(file) })
      const t = await withLink(counted(first))
      const ids = [await click(t.service, 1)]
      const before = reads.count
      for (let visitor = 2; visitor <= 20; visitor++) ids.push(await click(t.service, visitor))
      // Nineteen new visitors, not one read (the link is in memory; the filter was filled by the first).
      expect(reads.count).toBe(before)
      expect(await click(t.service, 5)).toBe(ids[4])
      await t.service.close()
      await first.close()

      const reopened = sqlJsStorage({ persist: fileJournal(file) })
      const again = await setup(counted(reopened))
      again.clock.set(t.clock.now() + 60_000)
      // Within the hour: the same ids, nothing counted; a new visitor is counted.
      expect(await click(again.service, 7)).toBe(ids[6])
      expect(await click(again.service, 1)).toBe(ids[0])
      const fresh = await click(again.service, 21)
      expect(ids).not.toContain(fresh)
      await again.service.flush()
      expect(await totals(reopened, t.link)).toEqual([21, 21])
      await reopened.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a commission naming a clickId still in its batch waits for it, and is attributed', async () => {
    const storage = memoryStorage()
    const t = await withLink(storage)
    const clickId = await click(t.service)
    expect(await stored(storage)).toEqual([])
    const made = await t.service.api.commissions.create({
      campaignId: t.campaign.id,
      referredUser: 'buyer@example.com',
      amount: 40,
      clickId,
    })
    expect(made).toMatchObject({ affiliateId: t.affiliate.id, referralCode: 'ANN-2026' })
    expect(await totals(storage, t.link)).toEqual([1, 1])
  })

  it('a failed write is reported to onError, kept and tried again: nothing is lost or counted twice', async () => {
    const w = watched(memoryStorage())
    const t = await withLink(w.storage, { clickFlushMs: 0 })
    const warm = await click(t.service, 0)
    await t.service.flush()
    w.state.failNext = 1
    const ids = [await click(t.service, 1), await click(t.service, 2)]
    await t.service.flush()
    expect(t.errors).toHaveLength(1)
    expect(String(t.errors[0])).toContain('the disk is full')
    expect(
      (await stored(w.storage))
        .map((c) => c.id)
        .filter((id) => id !== warm)
        .sort(),
    ).toEqual(ids.sort())
    expect(await totals(w.storage, t.link)).toEqual([3, 3])
  })

  it("the Node adapter's close() writes the clicks waiting", async () => {
    const storage = memoryStorage()
    const t = await withLink(storage)
    const running = await serve(t.service, { port: 0 })
    const response = await fetch(`${running.url}/r/ANN-2026`, { redirect: 'manual', headers: { 'user-agent': BROWSER } })
    const clickId = new URL(response.headers.get('location')!).searchParams.get('clickId')
    await running.close()
    expect((await stored(storage)).map((c) => c.id)).toEqual([clickId])
  })
})

describe('the click writer', () => {
  const link = { id: 'link-1', affiliateId: 'aff-1', workspaceId: 'ws', campaignId: 'c' } as LinkRecord
  const item = (n: number) => ({
    click: {
      id: `click-${n}`,
      linkId: link.id,
      event: 'click' as const,
      visitor: `v${n}`,
      address: '',
      device: '',
      paidAd: false,
      createdAt: '2026-01-01T00:00:00.000Z',
    },
    link,
  })

  it('writes a full batch at once, without waiting for flushMs', async () => {
    const w = watched(memoryStorage())
    const writer = createClickWriter({ storage: w.storage, flushMs: 60_000, batchSize: 2, onError: (error) => expect.fail(String(error)) })
    const started = w.nextWrite()
    await writer.add(item(1))
    expect(w.state.writes).toBe(0)
    await writer.add(item(2))
    await started
    expect(w.state.writes).toBe(1)
  })

  it('a batch that filled while the one before was written waits its own flushMs (a commit per batch, not per write done)', async () => {
    const w = watched(memoryStorage())
    let open!: () => void
    w.state.gate = new Promise((resolve) => (open = resolve))
    const writer = createClickWriter({ storage: w.storage, flushMs: 60_000, onError: (error) => expect.fail(String(error)) })
    const started = w.nextWrite()
    await writer.add(item(1))
    const first = writer.written('click-1')
    // click-1 is waited for, so its batch is written at once; it is held at the gate.
    await started
    expect(w.state.writes).toBe(1)
    await writer.add(item(2))
    await writer.add(item(3))
    open()
    await first
    // Everything the first write's end set off without a timer has run once the microtasks have
    // drained (setImmediate runs after them): the writes used to run back to back, the second
    // starting there. Now the second batch waits its own 60 s.
    await new Promise((resolve) => setImmediate(resolve))
    expect([w.state.writes, writer.pending]).toEqual([1, 2])
    await writer.flush()
    expect([w.state.writes, writer.pending]).toEqual([2, 0])
  })

  it('writes a batch flushMs after its first click without anyone waiting', async () => {
    const w = watched(memoryStorage())
    const writer = createClickWriter({ storage: w.storage, flushMs: 30, onError: (error) => expect.fail(String(error)) })
    const started = w.nextWrite()
    await writer.add(item(1))
    await writer.add(item(2))
    expect(w.state.writes).toBe(0)
    await started
    expect(w.state.writes).toBe(1)
    await writer.flush()
    expect(writer.pending).toBe(0)
  })

  it('past maxPending clicks, add waits until a batch is written', async () => {
    const w = watched(memoryStorage())
    let open!: () => void
    w.state.gate = new Promise((resolve) => (open = resolve))
    const writer = createClickWriter({
      storage: w.storage,
      flushMs: 0,
      batchSize: 1,
      maxPending: 2,
      onError: (error) => expect.fail(String(error)),
    })
    const started = w.nextWrite()
    await writer.add(item(1))
    await writer.add(item(2))
    await started
    let third = false
    const adding = writer.add(item(3)).then(() => (third = true))
    // The first batch is held at the gate: the buffer stays full.
    await Promise.resolve()
    expect([third, writer.pending]).toEqual([false, 2])
    open()
    await adding
    expect(third).toBe(true)
    await writer.flush()
    expect(writer.pending).toBe(0)
  })
})

describe.runIf(postgresUrl)('two instances on one PostgreSQL schema', () => {
  let pool: pg.Pool
  const schema = uniqueName('clickbatch')
  beforeAll(async () => {
    pool = await testPool()
  })
  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
  })

  it('count a visit both answered before either wrote it once, and both answered the same clickId', async () => {
    const one = await withLink(postgresStorage({ pool, schema }))
    const two = await setup(postgresStorage({ pool, schema }))
    two.clock.set(one.clock.now())
    const [a, b] = [await click(one.service), await click(two.service)]
    expect(b).toBe(a)
    await Promise.all([one.service.flush(), two.service.flush()])
    const storage = postgresStorage({ pool, schema })
    expect((await stored(storage)).map((c) => c.id)).toEqual([a])
    expect(await totals(storage, one.link)).toEqual([1, 1])
    expect([...one.errors, ...two.errors]).toEqual([])
  })
})
