// Group commit in the sql.js file journal: writes that arrive while an fsync runs share the next
// one, no write is answered before its own record is synced, and a failed fsync fails its whole
// group and everything after it. The fsync (FileHandle#datasync) is held or failed on demand, so
// the order of events is fixed by the test, never by the clock.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { fileJournal, parseRecords } from '../../adapters/node/file-journal.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { campaign } from '../../src/storage/sample-records.js'

const root = mkdtempSync(join(tmpdir(), 'affiliate-group-commit-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshFile = () => {
  const dir = join(root, `d${++dirs}`)
  mkdirSync(dir)
  return join(dir, 'db.sqlite')
}

/** FileHandle's prototype (node:fs/promises does not export the class). */
async function fileHandlePrototype(): Promise<{ datasync(): Promise<void> }> {
  const handle = await open(join(root, 'probe'), 'w')
  await handle.close()
  return Object.getPrototypeOf(handle) as { datasync(): Promise<void> }
}

interface Gate {
  /** Every fsync started so far, in order. */
  readonly calls: { release(): void; fail(error: Error): void }[]
}

/** Holds every fsync until the test releases (or fails) it. */
async function holdFsyncs(): Promise<Gate> {
  const proto = await fileHandlePrototype()
  const real = proto.datasync
  const gate: Gate = { calls: [] }
  vi.spyOn(proto, 'datasync').mockImplementation(function (this: unknown) {
    return new Promise<void>((resolve, reject) => {
      gate.calls.push({
        release: () => void real.call(this).then(resolve, reject),
        fail: reject,
      })
    })
  })
  return gate
}

afterEach(() => vi.restoreAllMocks())

/** Tracks whether a promise has settled, without letting a rejection go unhandled. */
function track<T>(promise: Promise<T>) {
  const state = { settled: false, error: null as unknown }
  promise.then(
    () => (state.settled = true),
    (error: unknown) => {
      state.settled = true
      state.error = error
    },
  )
  return state
}

const segmentRecords = (file: string) =>
  readdirSync(join(file, '..'))
    .filter((name) => name.includes('.journal-'))
    .sort()
    .flatMap((name) => parseRecords(new Uint8Array(readFileSync(join(file, '..', name)))).records)
    .map((record) => new TextDecoder().decode(record))

describe('file journal group commit', () => {
  it('appends made while an fsync runs share the next one, and none resolves before its own', async () => {
    const file = freshFile()
    const journal = await fileJournal(file).open()
    const gate = await holdFsyncs()
    const records = Array.from({ length: 16 }, (_, i) => new TextEncoder().encode(`record ${i}`))

    const first = track(journal.append(records[0]!))
    await vi.waitFor(() => expect(gate.calls).toHaveLength(1))
    // Fifteen writers arrive while the first fsync runs.
    const rest = records.slice(1).map((record) => track(journal.append(record)))
    await new Promise((resolve) => setImmediate(resolve))
    expect(first.settled).toBe(false)
    expect(gate.calls).toHaveLength(1)

    gate.calls[0]!.release()
    await vi.waitFor(() => expect(first.settled).toBe(true))
    // The fifteen were written together and wait on one fsync of their own.
    await vi.waitFor(() => expect(gate.calls).toHaveLength(2))
    expect(rest.some((state) => state.settled)).toBe(false)
    expect(segmentRecords(file)).toStrictEqual(records.map((record) => new TextDecoder().decode(record)))

    gate.calls[1]!.release()
    await vi.waitFor(() => expect(rest.every((state) => state.settled && state.error === null)).toBe(true))
    expect(gate.calls).toHaveLength(2)
    vi.restoreAllMocks()
    await journal.close()
  })

  it('runs the next transaction in memory while the previous one waits for its fsync, and answers each after its own', async () => {
    const file = freshFile()
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    await storage.ready()
    const gate = await holdFsyncs()
    const [a, b] = [campaign(), campaign()]

    const first = track(storage.transaction((tx) => tx.insert('campaigns', a)))
    await vi.waitFor(() => expect(gate.calls).toHaveLength(1))
    let secondRan = false
    const second = track(
      storage.transaction(async (tx) => {
        // The first is committed in memory already, though not yet answered.
        expect(await tx.get('campaigns', a.id)).not.toBeNull()
        await tx.insert('campaigns', b)
        secondRan = true
      }),
    )
    // A read answers only once every write it may have seen is durable.
    const read = track(storage.transaction((tx) => tx.count('campaigns', {})))
    await vi.waitFor(() => expect(secondRan).toBe(true))
    expect(first.settled).toBe(false)

    gate.calls[0]!.release()
    await vi.waitFor(() => expect(first.settled).toBe(true))
    await vi.waitFor(() => expect(gate.calls).toHaveLength(2))
    expect([second.settled, read.settled]).toStrictEqual([false, false])

    gate.calls[1]!.release()
    await vi.waitFor(() => expect(second.settled && read.settled).toBe(true))
    expect([first.error, second.error, read.error]).toStrictEqual([null, null, null])
    vi.restoreAllMocks()
    await storage.close()
  })

  it('a failed fsync fails its whole group and every later transaction; nothing acknowledged is lost', async () => {
    const file = freshFile()
    const storage = sqlJsStorage({ persist: fileJournal(file) })
    const kept = campaign()
    await storage.transaction((tx) => tx.insert('campaigns', kept))
    const gate = await holdFsyncs()

    const [a, b, c] = [campaign(), campaign(), campaign()]
    const first = track(storage.transaction((tx) => tx.insert('campaigns', a)))
    await vi.waitFor(() => expect(gate.calls).toHaveLength(1))
    // b and c commit in memory behind a (c reads b) and queue for the next fsync.
    const second = track(storage.transaction((tx) => tx.insert('campaigns', b)))
    const third = track(
      storage.transaction(async (tx) => {
        expect(await tx.get('campaigns', b.id)).not.toBeNull()
        await tx.insert('campaigns', c)
      }),
    )
    const read = track(storage.transaction((tx) => tx.count('campaigns', {})))
    await new Promise((resolve) => setImmediate(resolve))

    gate.calls[0]!.fail(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))
    await vi.waitFor(() => expect([first, second, third, read].every((state) => state.settled)).toBe(true))
    for (const state of [first, second, third, read]) expect(String(state.error)).toMatch(/writing the journal failed/)
    // A failed fsync is never retried: the storage refuses everything until a restart.
    await expect(storage.transaction((tx) => tx.insert('campaigns', campaign()))).rejects.toThrow(/restart to recover/)
    await expect(storage.transaction((tx) => tx.get('campaigns', kept.id))).rejects.toThrow(/restart to recover/)
    expect(gate.calls).toHaveLength(1)
    vi.restoreAllMocks()
    await storage.close()

    // The restart: b and c, which memory held, were never written (nor folded into the file by
    // the close). a was written before its fsync failed, so it may or may not be there.
    const reopened = sqlJsStorage({ persist: fileJournal(file) })
    const ids = (await reopened.transaction((tx) => tx.find('campaigns', {}))).map((record) => record.id)
    await reopened.close()
    expect(ids).toContain(kept.id)
    expect(ids).not.toContain(b.id)
    expect(ids).not.toContain(c.id)
  })
})

describe('file journal after a failed fsync', () => {
  it('refuses later appends and checkpoints, leaving the stored snapshot as it was', async () => {
    const file = freshFile()
    const journal = await fileJournal(file).open()
    // The journal stores snapshot bytes as given (only an open checks them).
    await journal.checkpoint(new TextEncoder().encode('SQLite format 3\u0000 first snapshot'))
    const before = readFileSync(file)
    const gate = await holdFsyncs()
    const failed = track(journal.append(new TextEncoder().encode('lost')))
    await vi.waitFor(() => expect(gate.calls).toHaveLength(1))
    const waiting = track(journal.append(new TextEncoder().encode('waiting')))
    gate.calls[0]!.fail(new Error('EIO: i/o error, fsync'))
    await vi.waitFor(() => expect(failed.settled && waiting.settled).toBe(true))
    expect([String(failed.error), String(waiting.error)]).toStrictEqual(['Error: EIO: i/o error, fsync', 'Error: EIO: i/o error, fsync'])
    vi.restoreAllMocks()
    await expect(journal.append(new TextEncoder().encode('later'))).rejects.toThrow(/EIO/)
    await expect(journal.checkpoint(new TextEncoder().encode('SQLite format 3\u0000 memory ahead of disk'))).rejects.toThrow(/EIO/)
    expect(readFileSync(file).equals(before)).toBe(true)
    await journal.close()
  })
})
