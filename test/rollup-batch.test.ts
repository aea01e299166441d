import { describe, expect, it } from 'vitest'
import { addToRollups, type RollupEntry } from '../src/reports/rollup.js'
import { memoryStorage, sqlJsStorage, type Storage } from '../src/index.js'
import type { StorageTransaction } from '../src/storage/types.js'

// addToRollups over many rows increments first and looks up which rows exist only when some did not:
// whichever rows exist beforehand, the rows it leaves must be what adding the entries one at a time
// (the single-row path: increment, else insert) leaves.
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
  it.each(cases)('%s: the rows equal those of adding each entry alone', async (_, before, entries, expectedCalls) => {
    const batched = make()
    const oneByOne = make()
    for (const storage of [batched, oneByOne]) for (const each of before) await storage.transaction((tx) => addToRollups(tx, [each]))
    const calls: string[] = []
    await batched.transaction((tx) => addToRollups(counting(tx, calls), entries))
    for (const each of entries) await oneByOne.transaction((tx) => addToRollups(tx, [each]))
    expect(await rows(batched)).toEqual(await rows(oneByOne))
    expect((await rows(batched)).length).toBeGreaterThan(6)
    expect(calls).toEqual(expectedCalls)
  })
})
