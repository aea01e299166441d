import { spawn } from 'node:child_process'
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileJournal, frame, parseRecords } from '../../adapters/node/file-journal.js'
import { serve } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore } from '../../src/index.js'
import { SCHEMA_VERSION } from '../../src/storage/sqljs/migrations.js'
import type { InitSqlJs } from '../../src/storage/sqljs/sql-js-types.js'
import { sqlJsStorage, type SqlJsStorage } from '../../src/storage/sqljs/storage.js'
import {
  apiKey,
  campaign,
  affiliate,
  at,
  click,
  commission,
  OTHER_WORKSPACE,
  sequence,
  WORKSPACE,
} from '../../src/storage/sample-records.js'
import { dueAt } from '../../src/domain/due.js'
import { rewindFile } from '../support/sqljs-rewind.js'

const root = mkdtempSync(join(tmpdir(), 'affiliate-sqljs-file-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshDir = () => {
  const dir = join(root, `d${++dirs}`)
  mkdirSync(dir)
  return dir
}

/** What the disk holds at this instant, as a crash would leave it: every file but the lock. */
function crashImage(dir: string): string {
  const image = freshDir()
  for (const name of readdirSync(dir)) if (!name.endsWith('.lock')) copyFileSync(join(dir, name), join(image, name))
  return image
}

/** A process that opens `file` and holds it until killed. */
function holdFile(file: string) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `
      const { sqlJsStorage } = await import(${JSON.stringify(new URL('../../src/storage/sqljs/storage.ts', import.meta.url).href)})
      const { fileJournal } = await import(${JSON.stringify(new URL('../../adapters/node/file-journal.ts', import.meta.url).href)})
      await sqlJsStorage({ persist: fileJournal(${JSON.stringify(file)}) }).ready()
      console.log('ready')
      setInterval(() => {}, 1000)
    `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => data.toString().includes('ready') && resolve())
    void exited.then(() => reject(new Error('the holder exited before it held the file')))
  })
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  return { child, ready, kill }
}

const journals = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.includes('.journal-'))
    .sort()

async function sqliteVersion(file: string): Promise<number> {
  const SQL = await ((await import('sql.js' as string)) as { default: InitSqlJs }).default()
  const db = new SQL.Database(readFileSync(file))
  try {
    return db.exec('PRAGMA user_version')[0]!.values[0]![0] as number
  } finally {
    db.close()
  }
}

async function all(storage: SqlJsStorage) {
  return storage.transaction(async (tx) => ({
    campaigns: await tx.find('campaigns', { orderBy: { field: 'createdAt', direction: 'ASC' } }),
    affiliates: await tx.find('affiliates', { orderBy: { field: 'createdAt', direction: 'ASC' } }),
  }))
}

describe('sql.js in a file', () => {
  it('keeps records across close and reopen, exactly', async () => {
    const file = join(freshDir(), 'db.sqlite')
    const records = Array.from({ length: 20 }, (_, i) => campaign({ createdAt: at(i), isDefault: i === 3 }))
    const first = sqlJsStorage({ persist: fileJournal(file) })
    for (const record of records) await first.transaction((tx) => tx.insert('campaigns', record))
    await first.transaction((tx) => tx.update('campaigns', records[0]!.id, { allowedUrlParameters: [] }))
    await first.close()
    expect(journals(join(file, '..'))).toEqual([])
    const second = sqlJsStorage({ persist: fileJournal(file) })
    const { campaigns } = await all(second)
    expect(campaigns).toStrictEqual([{ ...records[0]!, allowedUrlParameters: [] }, ...records.slice(1)])
    await second.close()
  })

  it('has every acknowledged write on disk without a close (a crash image at that instant)', async () => {
    const dir = freshDir()
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'db.sqlite')) })
    const records = Array.from({ length: 30 }, (_, i) => campaign({ createdAt: at(i) }))
    await Promise.all(records.map((record) => storage.transaction((tx) => tx.insert('campaigns', record))))
    const image = crashImage(dir)
    const reopened = sqlJsStorage({ persist: fileJournal(join(image, 'db.sqlite')) })
    expect((await all(reopened)).campaigns).toStrictEqual(records)
    await reopened.close()
    await storage.close()
  })

  it('replays batch writes (insertMany, updateEach, incrementEach, one in a savepoint) from the journal, exactly', async () => {
    const dir = freshDir()
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'db.sqlite')) })
    const records = Array.from({ length: 6 }, (_, i) => campaign({ createdAt: at(i), allowedUrlParameters: [`p${i}`, '日本'] }))
    const people = Array.from({ length: 3 }, (_, i) => affiliate({ createdAt: at(i), totalClicks: i }))
    await storage.transaction((tx) => tx.insertMany('campaigns', records))
    await storage.transaction((tx) => tx.insertMany('affiliates', people))
    await storage.transaction(async (tx) => {
      // Two sets of fields: two statements in a savepoint.
      await tx.updateEach('campaigns', [
        { id: records[0]!.id, patch: { isDefault: true, amountMinor: 7 } },
        { id: records[1]!.id, patch: { allowedUrlParameters: [] } },
      ])
      await tx.incrementEach(
        'affiliates',
        people.map((p, i) => ({ id: p.id, deltas: { totalClicks: 10, totalOpens: i } })),
      )
      // A guard that no longer holds changes nothing, and a refused batch leaves nothing behind.
      await tx.updateEach('campaigns', [{ id: records[2]!.id, patch: { amountMinor: 9 } }], { isDefault: true })
      await expect(tx.insertMany('campaigns', [campaign(), { ...campaign(), id: records[3]!.id }])).rejects.toThrow()
    })
    const expected = {
      campaigns: [{ ...records[0]!, isDefault: true, amountMinor: 7 }, { ...records[1]!, allowedUrlParameters: [] }, ...records.slice(2)],
      affiliates: people.map((p, i) => ({ ...p, totalClicks: p.totalClicks + 10, totalOpens: p.totalOpens + i })),
    }
    expect(await all(storage)).toStrictEqual(expected)
    const image = crashImage(dir)
    const reopened = sqlJsStorage({ persist: fileJournal(join(image, 'db.sqlite')) })
    expect(await all(reopened)).toStrictEqual(expected)
    await reopened.close()
    await storage.close()
  })

  it('writes a batch of more rows than one statement takes (50k) all or none, and replays it', async () => {
    const dir = freshDir()
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'db.sqlite')) })
    const held = sequence({ id: 'held' })
    await storage.transaction((tx) => tx.insert('sequences', held))
    const many = Array.from({ length: 50_003 }, (_, i) => sequence({ id: `s-${i}`, value: i }))
    // The collision is in the second statement: the first one's rows go too.
    await expect(storage.transaction((tx) => tx.insertMany('sequences', [...many, { ...held }]))).rejects.toThrow()
    expect(await storage.transaction((tx) => tx.count('sequences', {}))).toBe(1)
    await storage.transaction((tx) => tx.insertMany('sequences', many))
    const moved = await storage.transaction((tx) =>
      tx.updateEach(
        'sequences',
        many.map((record) => ({ id: record.id, patch: { updatedAt: at(7) } })),
        { value: { gte: 2 } },
      ),
    )
    expect(moved).toBe(many.length - 2)
    expect(
      await storage.transaction((tx) =>
        tx.incrementEach(
          'sequences',
          many.map((record) => ({ id: record.id, deltas: { value: 1 } })),
        ),
      ),
    ).toBe(many.length)
    const image = crashImage(dir)
    const reopened = sqlJsStorage({ persist: fileJournal(join(image, 'db.sqlite')) })
    const last = many[many.length - 1]!
    expect(await reopened.transaction((tx) => tx.get('sequences', last.id))).toStrictEqual({
      ...last,
      value: last.value + 1,
      updatedAt: at(7),
    })
    expect(await reopened.transaction((tx) => tx.get('sequences', 's-1'))).toStrictEqual({ ...many[1]!, value: 2 })
    expect(await reopened.transaction((tx) => tx.count('sequences', {}))).toBe(many.length + 1)
    await reopened.close()
    await storage.close()
  }, 60_000)

  it('drops a torn journal tail, keeps the whole records before it, and appends after them', async () => {
    const dir = freshDir()
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'db.sqlite')) })
    const kept = [campaign({ createdAt: at(1) }), campaign({ createdAt: at(2) })]
    for (const record of kept) await storage.transaction((tx) => tx.insert('campaigns', record))
    const image = crashImage(dir)
    await storage.close()
    const [segment] = journals(image)
    // Half a record, as a write cut short by the crash leaves it.
    const torn = frame(new TextEncoder().encode(JSON.stringify({ seq: 3, writes: [] })))
    appendFileSync(join(image, segment!), torn.subarray(0, torn.length - 5))
    const sizeWithTear = statSync(join(image, segment!)).size

    const reopened = sqlJsStorage({ persist: fileJournal(join(image, 'db.sqlite')) })
    expect((await all(reopened)).campaigns).toStrictEqual(kept)
    expect(statSync(join(image, segment!)).size).toBe(sizeWithTear - (torn.length - 5))
    const later = campaign({ createdAt: at(3) })
    await reopened.transaction((tx) => tx.insert('campaigns', later))
    const image2 = crashImage(image)
    await reopened.close()
    const again = sqlJsStorage({ persist: fileJournal(join(image2, 'db.sqlite')) })
    expect((await all(again)).campaigns).toStrictEqual([...kept, later])
    await again.close()
  })

  it('drops a record whose checksum fails at the tail, and refuses damage followed by data', async () => {
    const dir = freshDir()
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'db.sqlite')) })
    await storage.ready()
    await storage.transaction((tx) => tx.insert('campaigns', campaign()))
    const image = crashImage(dir)
    await storage.close()
    const [segment] = journals(image)
    const bytes = readFileSync(join(image, segment!))
    const flipped = Uint8Array.from(bytes)
    flipped[flipped.length - 2]! ^= 0xff
    writeFileSync(join(image, segment!), flipped)
    expect(parseRecords(flipped).records).toHaveLength(0)
    const reopened = sqlJsStorage({ persist: fileJournal(join(image, 'db.sqlite')) })
    expect((await all(reopened)).campaigns).toEqual([])
    await reopened.close()

    // The same damage in a segment that later segments follow with data is no crash tear.
    const damaged = crashImage(dir)
    writeFileSync(join(damaged, segment!), flipped)
    writeFileSync(join(damaged, 'db.sqlite.journal-99'), bytes)
    await expect(sqlJsStorage({ persist: fileJournal(join(damaged, 'db.sqlite')) }).ready()).rejects.toThrow(/damaged/)
  })

  it('folds the journal into the file in the background, removing folded segments', async () => {
    const dir = freshDir()
    const file = join(dir, 'db.sqlite')
    const storage = sqlJsStorage({ persist: fileJournal(file), checkpointBytes: 4096 })
    const records = Array.from({ length: 1500 }, (_, i) => campaign({ createdAt: at(i) }))
    // Concurrent writes, so commits land while folds are under way. About 1 KB of journal each: 1,500 pass the
    // empty schema's snapshot (it grows with the migrations: 600 stopped passing it with wave 4's), the size a fold waits for.
    await Promise.all(records.map((record) => storage.transaction((tx) => tx.insert('campaigns', record))))
    const image = crashImage(dir)
    // The first segment was folded and removed; the file alone (no journal) holds folded records.
    expect(journals(dir)).not.toContain('db.sqlite.journal-1')
    const SQL = await ((await import('sql.js' as string)) as { default: InitSqlJs }).default()
    const inFile = () => {
      const snapshot = new SQL.Database(readFileSync(file))
      const count = snapshot.exec('SELECT count(*) FROM campaigns')[0]!.values[0]![0] as number
      snapshot.close()
      return count
    }
    // The migrations' own writes may fill the first segment alone: the campaigns then reach the
    // file with a later fold, which the next commit starts in the background; give it a moment.
    for (let i = 0; i < 100 && inFile() === 0; i++) {
      await storage.transaction((tx) => tx.increment('campaigns', records[0]!.id, { payoutTerm: 0 }))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(inFile()).toBeGreaterThan(0)
    await storage.close()
    const reopened = sqlJsStorage({ persist: fileJournal(join(image, 'db.sqlite')) })
    expect((await all(reopened)).campaigns).toStrictEqual(records)
    await reopened.close()
  })

  it.runIf(process.platform === 'linux')(
    'refuses every transaction once a journal write fails, and loses nothing acknowledged',
    async () => {
      const dir = freshDir()
      const file = join(dir, 'db.sqlite')
      const kept = campaign()
      const first = sqlJsStorage({ persist: fileJournal(file) })
      await first.transaction((tx) => tx.insert('campaigns', kept))
      await first.close()
      const storage = sqlJsStorage({ persist: fileJournal(file) })
      await storage.ready()
      // The next segment is a device whose every write fails with ENOSPC: a full disk.
      symlinkSync('/dev/full', `${file}.journal-1`)
      await expect(storage.transaction((tx) => tx.insert('campaigns', campaign()))).rejects.toThrow(/writing the journal failed/)
      await expect(storage.transaction((tx) => tx.count('campaigns', {}))).rejects.toThrow(/restart to recover/)
      await storage.close()
      rmSync(`${file}.journal-1`)
      const reopened = sqlJsStorage({ persist: fileJournal(file) })
      expect((await all(reopened)).campaigns).toStrictEqual([kept])
      await reopened.close()
    },
  )

  it('never leaves the file unreadable: a leftover temporary snapshot is ignored', async () => {
    const dir = freshDir()
    const file = join(dir, 'db.sqlite')
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const record = campaign()
    await storage.transaction((tx) => tx.insert('campaigns', record))
    await storage.close()
    writeFileSync(`${file}.tmp`, 'half a snapshot')
    const reopened = sqlJsStorage({ persist: fileJournal(file) })
    expect((await all(reopened)).campaigns).toStrictEqual([record])
    expect(existsSync(`${file}.tmp`)).toBe(false)
    await reopened.close()
  })

  it('refuses a file that is not a SQLite database, and one from a newer schema', async () => {
    const dir = freshDir()
    writeFileSync(join(dir, 'text.sqlite'), 'hello, this is not a database at all')
    await expect(sqlJsStorage({ persist: fileJournal(join(dir, 'text.sqlite')) }).ready()).rejects.toThrow(/not a SQLite database/)
    const SQL = await ((await import('sql.js' as string)) as { default: InitSqlJs }).default()
    const db = new SQL.Database()
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`)
    writeFileSync(join(dir, 'future.sqlite'), db.export())
    db.close()
    await expect(sqlJsStorage({ persist: fileJournal(join(dir, 'future.sqlite')) }).ready()).rejects.toThrow(
      /newer than this affiliate-service/,
    )
  })

  it('upgrades a version 1 file in place, replaying its journal first (committed fixture)', async () => {
    const dir = freshDir()
    for (const name of ['sqljs-v1.sqlite', 'sqljs-v1.sqlite.journal-1']) {
      copyFileSync(join(import.meta.dirname, '..', 'fixtures', name), join(dir, name))
    }
    const file = join(dir, 'sqljs-v1.sqlite')
    expect(await sqliteVersion(file)).toBe(1)
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const { campaigns, affiliates } = await all(storage)
    expect(campaigns.map((c) => [c.campaignName, c.isDefault, c.allowedUrlParameters, c.amountMinor])).toEqual([
      ['Été launch', true, ['ref', 'via'], 1250],
      ['Journaled', false, [], 1000],
    ])
    expect(affiliates).toHaveLength(1)
    expect(affiliates[0]).toMatchObject({ email: 'Zoe@Example.com', details: null, isActive: true, totalClicks: 7, payoutMethod: 'PAYPAL' })
    // Search text written by version 1 still matches.
    expect(await storage.transaction((tx) => tx.count('affiliates', { contains: 'ZOË' }))).toBe(1)
    // Models added after version 1 work.
    await storage.transaction((tx) =>
      tx.insert('apiKeys', {
        id: 'k1',
        hash: 'h'.repeat(64),
        lookup: 'h'.repeat(16),
        prefix: 'aff_live_abcd',
        userId: 'u',
        workspaceIds: [],
        label: '',
        revokedAt: null,
        kind: 'secret',
        allowedOrigins: [],
        lastUsedAt: null,
        createdAt: at(0),
        updatedAt: at(0),
      }),
    )
    // Upgraded on disk at open, before any new record was journaled under the new schema.
    expect(await sqliteVersion(file)).toBe(SCHEMA_VERSION)
    expect(journals(dir)).not.toContain('sqljs-v1.sqlite.journal-1')
    await storage.close()
    const reopened = sqlJsStorage({ persist: fileJournal(file) })
    expect((await all(reopened)).campaigns).toHaveLength(2)
    expect(await reopened.transaction((tx) => tx.count('apiKeys', {}))).toBe(1)
    await reopened.close()
  })

  it('migration 5 counts the commissions a version 4 file already holds, then keeps the counts in step', async () => {
    const file = join(freshDir(), 'db.sqlite')
    const statuses = ['pending', 'paid', 'paid', 'refunded'] as const
    const records = Array.from({ length: 12 }, (_, i) =>
      commission({ createdAt: at(i), status: statuses[i % 4]!, workspaceId: i % 3 ? WORKSPACE : OTHER_WORKSPACE }),
    )
    const first = sqlJsStorage({ persist: fileJournal(file) })
    await first.transaction(async (tx) => {
      for (const record of records) await tx.insert('commissions', record)
    })
    await first.close()
    // The same file as version 4 left it: no (workspaceId, status) index, triggers or counts.
    await rewindFile(file, 4)
    const paid = (list: typeof records) => list.filter((r) => r.workspaceId === WORKSPACE && r.status === 'paid').length
    const query = { where: { workspaceId: WORKSPACE, status: 'paid' }, limit: 1 } as const
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    expect((await storage.transaction((tx) => tx.findPage('commissions', query))).total).toBe(paid(records))
    expect(await sqliteVersion(file)).toBe(SCHEMA_VERSION)
    // Inserts, status changes and deletes move the counts, and a rolled-back change does not.
    const added = commission({ status: 'paid' })
    await storage.transaction(async (tx) => {
      await tx.insert('commissions', added)
      await tx.update('commissions', records[1]!.id, { status: 'pending' })
      await tx.delete('commissions', records[2]!.id)
    })
    await storage
      .transaction(async (tx) => {
        await tx.update('commissions', records[5]!.id, { status: 'refunded' })
        throw new Error('undo')
      })
      .catch(() => undefined)
    const now = [...records.filter((r) => r !== records[2]), added].map((r) =>
      r === records[1] ? { ...r, status: 'pending' as const } : r,
    )
    expect((await storage.transaction((tx) => tx.findPage('commissions', query))).total).toBe(paid(now))
    await storage.close()
    // The journal replays the same writes, and the triggers with them.
    const reopened = sqlJsStorage({ persist: fileJournal(file) })
    expect((await reopened.transaction((tx) => tx.findPage('commissions', query))).total).toBe(paid(now))
    await reopened.close()
  })

  it('migration 8 keeps the keys of a version 6 file secret, with no origins, and adds clicks', async () => {
    const file = join(freshDir(), 'db.sqlite')
    const first = sqlJsStorage({ persist: fileJournal(file) })
    const key = apiKey()
    await first.transaction((tx) => tx.insert('apiKeys', key))
    await first.close()
    await rewindFile(file, 6)
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    expect(await storage.transaction((tx) => tx.get('apiKeys', key.id))).toStrictEqual({ ...key, kind: 'secret', allowedOrigins: [] })
    const made = click()
    await storage.transaction((tx) => tx.insert('clicks', made))
    expect(await storage.transaction((tx) => tx.find('clicks', { where: { visitor: made.visitor } }))).toStrictEqual([made])
    expect(await sqliteVersion(file)).toBe(SCHEMA_VERSION)
    await storage.close()
  })

  it('migration 6 makes the commissions of a version 5 file sales, due payoutTerm days after their date', async () => {
    const file = join(freshDir(), 'db.sqlite')
    const campaigns = [campaign({ payoutTerm: 30 }), campaign({ payoutTerm: 0 })]
    const dates = ['2024-01-31T10:20:30.456Z', '2023-12-31T23:59:59.999Z', '2024-02-29T00:00:00.000Z']
    const records = dates.flatMap((commissionDate, i) =>
      campaigns.map((c) => commission({ campaignId: c.id, commissionDate, createdAt: at(i) })),
    )
    const first = sqlJsStorage({ persist: fileJournal(file) })
    await first.transaction(async (tx) => {
      for (const record of campaigns) await tx.insert('campaigns', record)
      for (const record of records) await tx.insert('commissions', record)
    })
    await first.close()
    await rewindFile(file, 5)
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const term = new Map(campaigns.map((c) => [c.id, c.payoutTerm]))
    for (const record of records) {
      expect(await storage.transaction((tx) => tx.get('commissions', record.id))).toStrictEqual({
        ...record,
        kind: 'sale',
        dueAt: dueAt(record.commissionDate, term.get(record.campaignId)!),
        payoutId: null,
        refundedMinor: 0,
        reversesCommissionId: null,
        // Migration 19: its campaign's currency (USD, migration 6's default).
        currency: 'USD',
      })
    }
    expect(await storage.transaction((tx) => tx.get('campaigns', campaigns[0]!.id))).toStrictEqual({
      ...campaigns[0]!,
      currency: 'USD',
      attributionWindowDays: 30,
      recurringMonths: null,
      maxCommissionsPerCustomer: null,
    })
    expect(await sqliteVersion(file)).toBe(SCHEMA_VERSION)
    await storage.close()
  })

  it('refuses a second storage on the same file in this process', async () => {
    const file = join(freshDir(), 'db.sqlite')
    const first = sqlJsStorage({ persist: fileJournal(file) })
    await first.ready()
    await expect(sqlJsStorage({ persist: fileJournal(file) }).ready()).rejects.toThrow(/already open in this process/)
    await first.close()
    const second = sqlJsStorage({ persist: fileJournal(file) })
    await second.ready()
    await second.close()
  })

  it('refuses a file another live process holds, and takes over the lock of a dead one', async () => {
    const file = join(freshDir(), 'db.sqlite')
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `
        const { sqlJsStorage } = await import(${JSON.stringify(new URL('../../src/storage/sqljs/storage.ts', import.meta.url).href)})
        const { fileJournal } = await import(${JSON.stringify(new URL('../../adapters/node/file-journal.ts', import.meta.url).href)})
        await sqlJsStorage({ persist: fileJournal(${JSON.stringify(file)}) }).ready()
        console.log('ready')
        setInterval(() => {}, 1000)
      `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => data.toString().includes('ready') && resolve())
        child.once('exit', (code) => reject(new Error(`child exited ${code}`)))
      })
      await expect(sqlJsStorage({ persist: fileJournal(file, { lockWaitMs: 0 }) }).ready()).rejects.toThrow(
        new RegExp(`in use by process ${child.pid}`),
      )
    } finally {
      child.kill('SIGKILL')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(child.pid))
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    await storage.ready()
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid))
    await storage.close()
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
  it('serve() on a file another process holds: /health is 503 saying why, and once the holder is gone the open is tried again and all works', {
    timeout: 60_000,
  }, async () => {
    const file = join(freshDir(), 'db.sqlite')
    const holder = holdFile(file)
    await holder.ready
    const storage = sqlJsStorage({ persist: fileJournal(file, { lockWaitMs: 0 }) })
    const service = createAffiliateService({
      storage,
      keyStore: memoryKeyStore([{ key: 'k', userId: 'u', workspaceIds: [WORKSPACE] }]),
      rateLimit: false,
      onError: () => undefined,
    })
    const running = await serve(service, { port: 0 })
    try {
      const health = async () => {
        const response = await fetch(`${running.url}/health`)
        return { status: response.status, body: (await response.json()) as { status: string; reason?: string } }
      }
      const create = () =>
        fetch(`${running.url}/campaigns`, {
          method: 'POST',
          headers: { 'x-auth-service': 'k', 'content-type': 'application/json' },
          body: JSON.stringify({
            campaignName: 'After the lock',
            workspaceId: WORKSPACE,
            commissionType: 'fixed',
            amount: 1,
            url: 'https://shop.example.com/',
          }),
        })
      // Nothing has opened it yet: health starts the open and says so.
      expect(await health()).toMatchObject({
        status: 503,
        body: { status: 'unavailable', reason: 'storage: the database is being opened' },
      })
      await expect(storage.ready()).rejects.toThrow(/in use by process/)
      const locked = await health()
      expect(locked.status).toBe(503)
      expect(locked.body.reason).toMatch(
        new RegExp(`^storage: the database cannot be opened \\(trying again\\): .*in use by process ${holder.child.pid}`),
      )
      expect((await fetch(`${running.url}/health`, { method: 'HEAD' })).status).toBe(503)
      expect((await create()).status).toBe(500)

      await holder.kill()
      // Once the pause after the failure is over, the next call tries again: ask until it has opened.
      for (let tries = 0; ; tries++) {
        const opened = await storage.ready().then(
          () => true,
          () => false,
        )
        if (opened) break
        expect(tries, 'the storage never opened after the holder died').toBeLessThan(600)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } })
      expect((await create()).status).toBe(201)
    } finally {
      await running.close()
      await storage.close()
      await holder.kill()
    }
  })

  it('opens after a process was killed while taking the lock, and clears what it left', async () => {
    const dir = freshDir()
    const file = join(dir, 'db.sqlite')
    const dead = spawn(process.execPath, ['-e', ''])
    await new Promise((resolve) => dead.once('exit', resolve))
    // Killed after writing its draft but before linking it into place: no lock, a draft.
    writeFileSync(`${file}.lock.${dead.pid}`, `${dead.pid}\n`)
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    await storage.ready()
    expect(readdirSync(dir).filter((name) => name.includes('.lock'))).toEqual(['db.sqlite.lock'])
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid))
    await storage.close()
    expect(readdirSync(dir).filter((name) => name.includes('.lock'))).toEqual([])
  })
})

describe('sql.js with load/save', () => {
  it('saves the whole database after each write transaction, before it resolves, and reopens from it', async () => {
    const saves: Uint8Array[] = []
    const storage = sqlJsStorage({ load: async () => null, save: async (bytes) => void saves.push(bytes) })
    await storage.ready()
    const afterOpen = saves.length
    const record = affiliate()
    await storage.transaction((tx) => tx.insert('affiliates', record))
    expect(saves.length).toBe(afterOpen + 1)
    await storage.transaction((tx) => tx.get('affiliates', record.id))
    expect(saves.length).toBe(afterOpen + 1)
    await storage
      .transaction(async (tx) => {
        await tx.increment('affiliates', record.id, { totalClicks: 1 })
        throw new Error('rolled back')
      })
      .catch(() => undefined)
    expect(saves.length).toBe(afterOpen + 1)
    await storage.close()
    const reopened = sqlJsStorage({ load: async () => saves.at(-1)!, save: async () => {} })
    expect(await reopened.transaction((tx) => tx.get('affiliates', record.id))).toStrictEqual(record)
    await reopened.close()
  })

  it('refuses every transaction after a failed save: memory would hold what the saved copy lacks', async () => {
    let fail = false
    let saved: Uint8Array | null = null
    const storage = sqlJsStorage({
      load: async () => saved,
      save: async (bytes) => {
        if (fail) throw new Error('quota exceeded')
        saved = bytes
      },
    })
    const kept = campaign()
    await storage.transaction((tx) => tx.insert('campaigns', kept))
    fail = true
    await expect(storage.transaction((tx) => tx.insert('campaigns', campaign()))).rejects.toThrow(/save failed.*quota exceeded/)
    fail = false
    await expect(storage.transaction((tx) => tx.count('campaigns', {}))).rejects.toThrow(/restart to recover/)
    await storage.close()
    const restarted = sqlJsStorage({ load: async () => saved, save: async () => {} })
    expect((await all(restarted)).campaigns).toStrictEqual([kept])
    await restarted.close()
  })

  it('refuses the old `file` option with a TypeError naming the new spelling', () => {
    const old = { file: 'x' } as Parameters<typeof sqlJsStorage>[0]
    expect(() => sqlJsStorage(old)).toThrow(TypeError)
    expect(() => sqlJsStorage(old)).toThrow(/persist: fileJournal\(path\)/)
  })

  it('rejects options that do not go together', async () => {
    await expect(sqlJsStorage({ persist: fileJournal('x'), load: async () => null, save: async () => {} }).ready()).rejects.toThrow(
      /either/,
    )
    await expect(sqlJsStorage({ load: async () => null }).ready()).rejects.toThrow(/go together/)
  })
})
