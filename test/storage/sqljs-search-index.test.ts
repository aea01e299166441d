// The sql.js storage answers narrow `contains` searches from a search index kept in JavaScript
// beside the database (src/storage/sqljs/search-index.ts). It must answer exactly what the SQL scan
// and the memory storage answer, through every kind of write, rolled-back transactions included.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AffiliateRecord } from '../../src/domain/records.js'
import { MAX_INDEXED_MATCHES } from '../../src/storage/sqljs/search-index.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { memoryStorage } from '../../src/storage/memory.js'
import type { FindQuery, Storage } from '../../src/storage/types.js'
import { affiliate, at, OTHER_WORKSPACE, WORKSPACE } from '../../src/storage/sample-records.js'

const NAMES = ['ana', 'Bo', 'CHLOÉ', 'dev', 'Émile', 'ana-maria']
const TERMS = ['ana', 'a', 'é', 'chlo', 'bo@', 'example', 'nobody', '-m', 'ÉMI']

type Step =
  | { kind: 'insert'; slot: number; name: number; workspace: boolean; second: number }
  | { kind: 'rename'; slot: number; name: number }
  | { kind: 'touch'; slot: number }
  | { kind: 'delete'; slot: number }
  | { kind: 'deleteWorkspace'; workspace: boolean }
  | { kind: 'rolledBack'; slot: number; name: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    slot: fc.nat(11),
    name: fc.nat(NAMES.length - 1),
    workspace: fc.boolean(),
    second: fc.nat(5),
  }),
  fc.record({ kind: fc.constant('rename' as const), slot: fc.nat(11), name: fc.nat(NAMES.length - 1) }),
  fc.record({ kind: fc.constant('touch' as const), slot: fc.nat(11) }),
  fc.record({ kind: fc.constant('delete' as const), slot: fc.nat(11) }),
  fc.record({ kind: fc.constant('deleteWorkspace' as const), workspace: fc.boolean() }),
  fc.record({ kind: fc.constant('rolledBack' as const), slot: fc.nat(11), name: fc.nat(NAMES.length - 1) }),
)

/** Runs one step on a storage; `ids` maps slots to the ids inserted there (shared by both storages). */
async function apply(storage: Storage, ids: Map<number, string>, s: Step, records: Map<number, AffiliateRecord>): Promise<void> {
  const id = 'slot' in s ? ids.get(s.slot) : undefined
  switch (s.kind) {
    case 'insert': {
      if (id) return
      const record = records.get(s.slot)!
      await storage.transaction((tx) => tx.insert('affiliates', record))
      return
    }
    case 'rename':
      if (id)
        await storage.transaction((tx) =>
          tx.update('affiliates', id, { firstName: NAMES[s.name]!, email: `${NAMES[s.name]!.toLowerCase()}@example.com` }),
        )
      return
    case 'touch':
      if (id) await storage.transaction((tx) => tx.update('affiliates', id, { notes: 'seen' }))
      return
    case 'delete':
      if (id) await storage.transaction((tx) => tx.delete('affiliates', id))
      return
    case 'deleteWorkspace':
      await storage.transaction((tx) => tx.deleteMany('affiliates', { workspaceId: s.workspace ? WORKSPACE : OTHER_WORKSPACE }))
      return
    case 'rolledBack':
      await storage
        .transaction(async (tx) => {
          if (id) await tx.update('affiliates', id, { lastName: NAMES[s.name]! })
          else await tx.insert('affiliates', { ...records.get(s.slot)!, id: crypto.randomUUID() })
          throw new Error('roll back')
        })
        .catch(() => undefined)
  }
}

const queries = (term: string): FindQuery<'affiliates'>[] => [
  { contains: term },
  { contains: term, where: { workspaceId: WORKSPACE }, limit: 2, offset: 1 },
  { contains: term, where: { workspaceId: { in: [WORKSPACE, OTHER_WORKSPACE] } }, orderBy: { field: 'email', direction: 'ASC' } },
]

async function answers(storage: Storage, term: string) {
  return storage.transaction(async (tx) =>
    Promise.all(
      queries(term).map(async (query) => ({
        ids: (await tx.find('affiliates', query)).map((record) => record.id),
        total: await tx.count('affiliates', query),
      })),
    ),
  )
}

describe('sql.js search index', () => {
  it('answers every search as the memory storage does, after any sequence of writes and rollbacks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const sql = sqlJsStorage()
        const memory = memoryStorage()
        await sql.ready()
        try {
          const ids = new Map<number, string>()
          const records = new Map<number, AffiliateRecord>()
          for (const [index, s] of steps.entries()) {
            if (s.kind === 'insert' && !ids.has(s.slot)) {
              const name = NAMES[s.name]!
              const record = affiliate({
                email: `${name.toLowerCase()}${s.slot}@example.com`,
                firstName: name,
                workspaceId: s.workspace ? WORKSPACE : OTHER_WORKSPACE,
                createdAt: at(s.second),
              })
              records.set(s.slot, record)
            }
            await apply(sql, ids, s, records)
            await apply(memory, ids, s, records)
            if (s.kind === 'insert' && !ids.has(s.slot)) ids.set(s.slot, records.get(s.slot)!.id)
            if (s.kind === 'delete') ids.delete(s.slot)
            if (s.kind === 'deleteWorkspace') {
              for (const [slot, id] of ids)
                if (records.get(slot)?.workspaceId === (s.workspace ? WORKSPACE : OTHER_WORKSPACE) && id) ids.delete(slot)
            }
            // Search between steps (the index is built on the first), not only at the end.
            if (index % 3 === 2 || index === steps.length - 1) {
              for (const term of TERMS) expect(await answers(sql, term)).toEqual(await answers(memory, term))
            }
          }
        } finally {
          await sql.close()
        }
      }),
      { numRuns: 60 },
    )
  })

  it('sees a transaction’s own uncommitted changes, and forgets them when it rolls back', async () => {
    const storage = sqlJsStorage()
    await storage.ready()
    const kept = affiliate({ email: 'kept@example.com', firstName: 'Kept' })
    await storage.transaction((tx) => tx.insert('affiliates', kept))
    expect(await storage.transaction((tx) => tx.find('affiliates', { contains: 'kept' }))).toHaveLength(1)
    await storage
      .transaction(async (tx) => {
        await tx.update('affiliates', kept.id, { firstName: 'Renamed', email: 'renamed@example.com' })
        await tx.insert('affiliates', affiliate({ email: 'fresh@example.com', firstName: 'Fresh' }))
        expect(await tx.find('affiliates', { contains: 'kept' })).toHaveLength(0)
        expect(await tx.count('affiliates', { contains: 'renamed' })).toBe(1)
        expect(await tx.find('affiliates', { contains: 'fresh' })).toHaveLength(1)
        throw new Error('roll back')
      })
      .catch(() => undefined)
    const after = await storage.transaction(async (tx) => ({
      kept: await tx.count('affiliates', { contains: 'kept' }),
      renamed: await tx.count('affiliates', { contains: 'renamed' }),
      fresh: await tx.count('affiliates', { contains: 'fresh' }),
    }))
    expect(after).toEqual({ kept: 1, renamed: 0, fresh: 0 })
    await storage.close()
  })

  it(`answers a term matching more than ${MAX_INDEXED_MATCHES} records by the scan, with the same page and total`, async () => {
    const sql = sqlJsStorage()
    const memory = memoryStorage()
    await sql.ready()
    const size = MAX_INDEXED_MATCHES + 50
    const records = Array.from({ length: size }, (_, i) => affiliate({ email: `member${i}@example.com`, createdAt: at(i % 17) }))
    for (const storage of [sql, memory]) {
      await storage.transaction(async (tx) => {
        for (const record of records) await tx.insert('affiliates', record)
      })
    }
    for (const term of ['member', 'member1', 'member104', 'EXAMPLE']) {
      const query: FindQuery<'affiliates'> = { contains: term, limit: 10, offset: 20 }
      const read = (storage: Storage) =>
        storage.transaction(async (tx) => ({
          ids: (await tx.find('affiliates', query)).map((r) => r.id),
          total: await tx.count('affiliates', query),
        }))
      expect(await read(sql)).toEqual(await read(memory))
    }
    await sql.close()
  })
})
