import { describe, expect, it } from 'vitest'
import { addToRollups, type RollupEntry } from '../../src/reports/rollup.js'
import { memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import type { StorageTransaction } from '../../src/storage/types.js'

// addToRollups increments first and looks up which rows exist only when some did not: whichever
// rows exist beforehand, each row it leaves must hold the sum of the entries that fall in it (its
// level's campaign and affiliate, '' for all; its hour, or its UTC day), worked out here from the
// entries alone.
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const scope = (n: number) => ({ workspaceId: WORKSPACE, campaignId: `campaign-${n % 2}`, affiliateId: `affiliate-${n % 3}` })
const entry = (n: number, hour: number, clicks: number): RollupEntry => ({
  scope: scope(n),
  at: new Date(Date.UTC(2026, 10, 1, hour, 30)).toISOString(),
  deltas: { clicks, earningsMinor: 100 * clicks },
})

/** Which storage calls a transaction made, by name. */
function counting(tx: StorageTransaction, calls: string[]): StorageTransaction {
  return new Proxy(tx, {
    get(target, name) {
      const value = Reflect.get(target, name)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.push(String(name))
        return value.apply(target, args)
      }
    },
  })
}

const rows = (storage: Storage) =>
  storage.transaction(async (tx) => (await tx.find('rollups', { limit: 1000 })).sort((a, b) => (a.id < b.id ? -1 : 1)))

/** The rows the entries make, as `campaign|affiliate|start` ('' for all), each with its summed clicks. */
function model(entries: readonly RollupEntry[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const { scope, at, deltas } of entries) {
    const hour = `${at.slice(0, 13)}:00:00.000Z`
    const day = `${at.slice(0, 10)}T00:00:00.000Z`
    for (const [campaign, affiliate] of [
      [scope.campaignId, scope.affiliateId],
      [scope.campaignId, ''],
      ['', ''],
    ])
      for (const start of [hour, day]) {
        const key = `${campaign}|${affiliate}|${start}`
        out.set(key, (out.get(key) ?? 0) + deltas.clicks!)
      }
  }
  return out
}

const earlier = [entry(0, 1, 1), entry(1, 2, 2)]
const cases: [string, RollupEntry[], RollupEntry[], string[]][] = [
  ['no row exists', [], [entry(0, 1, 3), entry(4, 5, 1)], ['incrementEach', 'insertMany']],
  ['every row exists', earlier, [entry(0, 1, 5), entry(1, 2, -1)], ['incrementEach']],
  ['some rows exist', earlier, [entry(0, 1, 5), entry(2, 1, 1), entry(1, 7, 4)], ['incrementEach', 'select', 'insertMany']],
]

describe.each([
  ['memory', () => memoryStorage()],
  ['sql.js', () => sqlJsStorage()],
])('addToRollups over many rows on %s', (_, make) => {
  it.each(cases)('%s: each row holds the sum of the entries that fall in it', async (_, before, entries, expectedCalls) => {
    const storage = make()
    for (const each of before) await storage.transaction((tx) => addToRollups(tx, [each]))
    const calls: string[] = []
    await storage.transaction((tx) => addToRollups(counting(tx, calls), entries))
    const found = await rows(storage)
    const held = new Map(found.map((row) => [`${row.campaignId}|${row.affiliateId}|${row.hourStart}`, row.clicks]))
    expect(held).toEqual(model([...before, ...entries]))
    for (const row of found) expect(row.earningsMinor).toBe(100 * row.clicks)
    expect(calls).toEqual(expectedCalls)
  })
})
