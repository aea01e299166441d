import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { postgresStorage } from '../../adapters/postgres.js'
import type { ClickRecord } from '../../src/domain/records.js'
import { memoryStorage, type Storage } from '../../src/index.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { timeUuidFloor } from '../../src/tracking/click-ids.js'
import { manualClock } from '../support/helpers.js'
import { rewindFile } from '../support/sqljs-rewind.js'
import { dropSchema, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { trackingSetup } from '../support/tracking-support.js'

// Click records are pruned past the longest attribution window by walking their time-ordered ids
// (UUIDv7) rather than an index on createdAt. Records written before the ids were time-ordered
// have random ids (UUIDv4): they are pruned too, whichever part of the id range they fall in. The
// sql.js file is one a version 10 wrote (random-id clicks, then upgraded by migration 11).

const DAY = 86_400_000
const START = Date.UTC(2026, 0, 1)
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A click record as an older version wrote it: a random-style (version 4) id of our choosing. */
const legacy = (id: string, createdAt: number, n = 0): ClickRecord => ({
  id,
  linkId: '0b9d6a2e-4c1f-4e4b-9a53-2f6a3c1d7e10',
  event: 'click',
  visitor: `legacy-visitor-${n}`,
  address: '',
  device: '',
  paidAd: false,
  createdAt: new Date(createdAt).toISOString(),
})
/** A version 4 id sorting just above `prefix` (a UUID text prefix). */
const v4After = (floor: string, n: number) => `${floor.slice(0, 14)}4${n.toString(16).padStart(3, '0')}-8000-${'0'.repeat(12)}`

const root = mkdtempSync(join(tmpdir(), 'affiliate-click-pruning-'))
let pool: pg.Pool | undefined
const schemas: string[] = []
const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})
beforeAll(async () => {
  if (postgresUrl) pool = await testPool()
})
afterAll(async () => {
  if (pool) {
    for (const schema of schemas) await dropSchema(pool, schema)
    await pool.end()
  }
  rmSync(root, { recursive: true, force: true })
})

let files = 0
/** A sql.js file holding `clicks`, taken back to version 10 (before time-ordered ids) and opened again. */
async function upgradedFile(clicks: ClickRecord[]): Promise<Storage> {
  const file = join(root, `db${++files}.sqlite`)
  const first = sqlJsStorage({ persist: fileJournal(file) })
  await first.transaction(async (tx) => {
    for (const click of clicks) await tx.insert('clicks', click)
  })
  await first.close()
  await rewindFile(file, 10, (db) => {
    const indexes = db.exec(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'clicks' ORDER BY name`)[0]?.values
    expect(indexes).toEqual([
      ['clicks_created', 'CREATE INDEX clicks_created ON clicks (createdAt)'],
      ['clicks_visitor', 'CREATE INDEX clicks_visitor ON clicks (visitor, createdAt)'],
    ])
  })
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  closers.push(() => storage.close())
  return storage
}

async function postgresWith(clicks: ClickRecord[]): Promise<Storage> {
  const schema = uniqueName('clickprune')
  schemas.push(schema)
  const storage = postgresStorage({ pool: pool!, schema })
  await storage.transaction(async (tx) => {
    for (const click of clicks) await tx.insert('clicks', click)
  })
  const { rows } = await pool!.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'clicks' ORDER BY indexname`, [
    schema,
  ])
  expect(rows.map((row) => row.indexname)).toEqual(['clicks_pkey', 'clicks_visitor'])
  return storage
}

const kinds: [string, (clicks: ClickRecord[]) => Promise<Storage>][] = [
  [
    'memory',
    async (clicks) => {
      const storage = memoryStorage()
      await storage.transaction(async (tx) => {
        for (const click of clicks) await tx.insert('clicks', click)
      })
      return storage
    },
  ],
  ['sql.js file upgraded from version 10', upgradedFile],
]
if (postgresUrl) kinds.push(['postgres', postgresWith])

describe.each(kinds)('click pruning by time-ordered ids: %s', (_, make) => {
  const setup = async (clicks: ClickRecord[]) => {
    const storage = await make(clicks)
    const t = await trackingSetup({ storage, clock: manualClock(START), clickDedupeSeconds: 0 })
    closers.unshift(t.close)
    const ids = async () => (await t.clicks()).map((click) => click.id).sort()
    return { ...t, ids }
  }

  it('new clicks get time-ordered ids; past the 30-day window they go, newer ones stay', async () => {
    const t = await setup([])
    const first = t.clickIdOf(await t.redirect('ANN-2026'))!
    t.clock.advance(20 * DAY)
    const second = t.clickIdOf(await t.redirect('ANN-2026'))!
    expect(first).toMatch(V7)
    expect(second).toMatch(V7)
    expect(second > first).toBe(true)
    t.clock.advance(15 * DAY)
    const third = t.clickIdOf(await t.redirect('ANN-2026'))!
    // The background work's round (hourly), run now.
    expect(await t.service.pruneClicks()).toBe(1)
    expect(await t.ids()).toEqual([second, third])
    // The counters keep every click.
    expect((await t.counts()).linkClicks).toBe(3)
    expect(t.errors).toEqual([])
  })

  it('random-id records from before are pruned wherever their id sorts: below, above or among the time-ordered ids', async () => {
    const old = START - 40 * DAY
    const recent = START - DAY
    const low = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`
    const high = (n: number) => `ffffffff-ffff-4fff-b${n.toString(16).padStart(3, '0')}-ffffffffffff`
    // Ids sorting among the time-ordered ids of the last 30 days (between the cutoff and now).
    const among = (n: number) => v4After(timeUuidFloor(START - 10 * DAY), n)
    const records = [
      // More expired ones than one prune batch (500) at each end: the walk goes on batch by batch.
      ...Array.from({ length: 620 }, (_, n) => legacy(low(n), old, n)),
      ...Array.from({ length: 610 }, (_, n) => legacy(high(n), old, n)),
      legacy(low(5000), recent),
      legacy(high(4000), recent),
      legacy(among(1), old),
      legacy(among(2), recent),
    ]
    const t = await setup(records)
    const made = t.clickIdOf(await t.redirect('ANN-2026'))!
    await t.service.pruneClicks()
    expect(await t.ids()).toEqual([low(5000), among(1), among(2), made, high(4000)].sort())
    // Once the cutoff has passed their place in the id range, the ones among the ordered ids go too.
    t.clock.advance(45 * DAY)
    const later = t.clickIdOf(await t.redirect('ANN-2026'))!
    await t.service.pruneClicks()
    expect(await t.ids()).toEqual([later])
    expect(t.errors).toEqual([])
  })
})
