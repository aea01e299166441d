import { describe, expect, it } from 'vitest'
import type { CampaignRecord } from '../domain/records.js'
import { modelNames, models } from '../storage/models.js'
import {
  UniqueViolationError,
  type FindQuery,
  type ModelName,
  type RecordOf,
  type Storage,
  type StorageTransaction,
  type Where,
} from '../storage/types.js'
import { isUuid } from '../uuid.js'
import {
  adminSession,
  affiliate,
  apiKey,
  at,
  campaign,
  click,
  commission,
  customer,
  link,
  OTHER_WORKSPACE,
  providerEvent,
  promoCode,
  sale,
  saleRefund,
  sampleId,
  notification,
  sampleOf,
  sequence,
  WORKSPACE,
} from '../storage/sample-records.js'

/** Makes a fresh, empty storage for one test. It is closed (when it has `close`) after the test. */
export type StorageFactory = () => Storage | Promise<Storage>

export interface StorageConformanceOptions {
  /**
   * Cases to skip, by their exact test name, each with the reason (printed in the test name),
   * e.g. `{ 'serializable: a read-modify-write counter loses no increment': 'runs on a single connection' }`.
   * @default {}
   */
  skip?: Record<string, string>
}

/** A different value of the same shape (a fresh UUID for a UUID), so typed columns accept it. */
const another = (value: unknown, tag: string): string | number =>
  typeof value === 'number'
    ? value + 1_000_000 * [...tag].reduce((sum, c) => sum + c.charCodeAt(0), 0)
    : isUuid(value)
      ? sampleId()
      : `${typeof value === 'string' ? value : 'value'}-${tag}`

/**
 * Registers the whole `Storage` contract as vitest tests for a storage: every method of a
 * transaction, unique constraints (and nulls that never collide), rollback, serializable
 * concurrency, ordering with ties, paging, `in`, case-insensitive `contains` beyond ASCII, copies
 * rather than references, and transactions that refuse work once finished.
 * Call it at the top level of a test file; vitest is a peer of yours, not a dependency of ours.
 *
 * @example
 * // test/my-storage.test.ts
 * import { describeStorageConformance } from 'affiliate-service/testing'
 * describeStorageConformance('my storage', () => myStorage({ url: process.env.TEST_DB }))
 */
export function describeStorageConformance(name: string, factory: StorageFactory, options: StorageConformanceOptions = {}): void {
  const skip = options.skip ?? {}
  const test = (title: string, body: (storage: Storage) => Promise<void>) => {
    const reason = skip[title]
    if (reason !== undefined) {
      it.skip(`${title} (skipped: ${reason})`, () => {})
      return
    }
    it(title, async () => {
      const storage = await factory()
      try {
        await body(storage)
      } finally {
        await storage.close?.()
      }
    })
  }
  const tx = <T>(storage: Storage, work: (tx: StorageTransaction) => Promise<T>) => storage.transaction(work)
  const insertAll = <M extends ModelName>(storage: Storage, model: M, records: RecordOf<M>[]) =>
    tx(storage, async (t) => {
      for (const record of records) await t.insert(model, record)
    })
  const ids = (records: { id: string }[]) => records.map((record) => record.id)

  /**
   * Six claimants at once, each reading the free commissions, then claiming an overlapping share
   * with `claim` (a guarded write answering how many it changed) and failing if it got fewer than
   * it read: what each says it took must be exactly what is stored under its id.
   */
  const concurrentClaims = async (storage: Storage, claim: (t: StorageTransaction, ids: string[], payoutId: string) => Promise<number>) => {
    const records = Array.from({ length: 12 }, () => commission())
    await insertAll(storage, 'commissions', records)
    const claimants = Array.from({ length: 6 }, () => sampleId())
    const claimed = await Promise.all(
      claimants.map((payoutId, i) =>
        tx(storage, async (t) => {
          // Each reads what is free, waits, then claims its share (overlapping the others') with the guard.
          const free = await t.find('commissions', { where: { workspaceId: WORKSPACE, status: 'pending', payoutId: null } })
          await new Promise((resolve) => setTimeout(resolve, 0))
          const mine = ids(free).filter((_, j) => (j + i) % 2 === 0)
          const n = await claim(t, mine, payoutId)
          if (n !== mine.length) throw new Error('claimed fewer than read: another claimant got there first')
          return n
        }).catch(() => 0),
      ),
    )
    const stored = await tx(storage, (t) => t.find('commissions', { where: { workspaceId: WORKSPACE } }))
    const counts = new Map<string | null, number>()
    for (const record of stored) counts.set(record.payoutId, (counts.get(record.payoutId) ?? 0) + 1)
    // Nothing twice, nothing lost.
    claimants.forEach((payoutId, i) => {
      expect(counts.get(payoutId) ?? 0).toBe(claimed[i])
    })
    expect(claimed.reduce((a, b) => a + b, 0) + (counts.get(null) ?? 0)).toBe(records.length)
    expect(claimed.some((n) => n > 0)).toBe(true)
  }

  describe(`storage conformance: ${name}`, () => {
    describe('records', () => {
      for (const model of Object.keys(sampleOf) as ModelName[]) {
        test(`${model}: a record round-trips exactly`, async (storage) => {
          const record = sampleOf[model]()
          await insertAll(storage, model, [record])
          const read = await tx(storage, (t) => t.get(model, record.id))
          expect(read).toStrictEqual(record)
          const [found] = await tx(storage, (t) => t.find(model, { where: { id: record.id } }))
          expect(found).toStrictEqual(record)
        })

        test(`${model}: records stored by insertMany round-trip exactly`, async (storage) => {
          const first = sampleOf[model]()
          const records = [first, { ...sampleOf[model](), id: String(another(first.id, 'batch')) }]
          await tx(storage, (t) => t.insertMany(model, records))
          for (const record of records) expect(await tx(storage, (t) => t.get(model, record.id))).toStrictEqual(record)
        })

        // A count that disagrees with find breaks every exact total (list pages, an export's trailer).
        test(`${model}: count agrees with find, with and without a where, after inserts and deletes`, async (storage) => {
          const records = Array.from({ length: 5 }, (_, i) => {
            const record = sampleOf[model]()
            return { ...record, id: String(another(record.id, `count${i}`)) }
          })
          const field = models[model].indexes.find((fields) => fields.length === 1)?.[0] ?? 'id'
          const agree = async (expected: number) => {
            const all = await tx(storage, (t) => t.find(model, {}))
            const counted = await tx(storage, (t) => t.count(model, {}))
            const page = await tx(storage, (t) => t.findPage(model, { limit: 2 }))
            expect([all.length, counted, page.total]).toEqual([expected, expected, expected])
            // Equality on the model's first one-field index (its id when it has none).
            const where = { [field]: (records[0] as Record<string, unknown>)[field] } as Where<typeof model>
            const matching = await tx(storage, (t) => t.find(model, { where }))
            expect(await tx(storage, (t) => t.count(model, { where }))).toBe(matching.length)
          }
          await agree(0)
          await tx(storage, (t) => t.insert(model, records[0]!))
          await tx(storage, (t) => t.insertMany(model, records.slice(1)))
          await agree(records.length)
          await tx(storage, (t) => t.delete(model, records[1]!.id))
          await agree(records.length - 1)
          await tx(storage, (t) => t.deleteMany(model, {}))
          await agree(0)
        })
      }

      test('values of every kind round-trip: true/false, null, arrays, large and negative integers', async (storage) => {
        const records = [
          campaign({ isDefault: true, requiresApprovalToJoin: false, allowedUrlParameters: [], amountMinor: 0, payoutTerm: -45 }),
          campaign({
            allowedUrlParameters: ['a', 'b,c', '"q"', '日本'],
            amountMinor: 2 ** 40 + 1,
            minimumPayoutMinor: Number.MAX_SAFE_INTEGER,
          }),
        ]
        const withValues = affiliate({ payoutMethod: 'WISE', details: 'IBAN …', notes: 'line\nbreak\ttab' })
        const withNulls = commission({ remarks: null, name: null, chargeId: null, isSelfReferral: true, isWalletPayment: 1 })
        await tx(storage, async (t) => {
          for (const record of records) await t.insert('campaigns', record)
          await t.insert('affiliates', withValues)
          await t.insert('commissions', withNulls)
        })
        for (const record of records) expect(await tx(storage, (t) => t.get('campaigns', record.id))).toStrictEqual(record)
        expect(await tx(storage, (t) => t.get('affiliates', withValues.id))).toStrictEqual(withValues)
        expect(await tx(storage, (t) => t.get('commissions', withNulls.id))).toStrictEqual(withNulls)
      })

      test('values of every kind round-trip through insertMany and updateEach', async (storage) => {
        const records = [
          campaign({ isDefault: true, requiresApprovalToJoin: false, allowedUrlParameters: [], amountMinor: 0, payoutTerm: -45 }),
          campaign({
            allowedUrlParameters: ['a', 'b,c', '"q"', '日本'],
            amountMinor: 2 ** 40 + 1,
            minimumPayoutMinor: Number.MAX_SAFE_INTEGER,
          }),
        ]
        await tx(storage, (t) => t.insertMany('campaigns', records))
        for (const record of records) expect(await tx(storage, (t) => t.get('campaigns', record.id))).toStrictEqual(record)
        const patches = [
          {
            isDefault: false,
            allowedUrlParameters: ['x', '[1]', 'line\nbreak'],
            amountMinor: -(2 ** 40),
            affiliateDashboardText: '{"a":1}',
          },
          { isDefault: true, allowedUrlParameters: [], amountMinor: Number.MAX_SAFE_INTEGER, affiliateDashboardText: '' },
        ]
        await tx(storage, (t) =>
          t.updateEach(
            'campaigns',
            records.map((r, i) => ({ id: r.id, patch: patches[i]! })),
          ),
        )
        for (const [i, record] of records.entries())
          expect(await tx(storage, (t) => t.get('campaigns', record.id))).toStrictEqual({ ...record, ...patches[i] })
      })

      test('get answers null for an unknown id', async (storage) => {
        expect(await tx(storage, (t) => t.get('campaigns', sampleId()))).toBeNull()
      })

      test('insert refuses a second record with the same id and keeps the first', async (storage) => {
        const first = campaign()
        await insertAll(storage, 'campaigns', [first])
        await expect(insertAll(storage, 'campaigns', [{ ...first, campaignName: 'other' }])).rejects.toThrow()
        expect(await tx(storage, (t) => t.get('campaigns', first.id))).toStrictEqual(first)
        expect(await tx(storage, (t) => t.count('campaigns', {}))).toBe(1)
      })
    })

    describe('update, increment, delete', () => {
      test('update sets the given fields and answers the record as stored', async (storage) => {
        const record = campaign()
        await insertAll(storage, 'campaigns', [record])
        const patch = { campaignName: 'Renamed', isDefault: true, allowedUrlParameters: ['x'], updatedAt: at(5) }
        const updated = await tx(storage, (t) => t.update('campaigns', record.id, patch))
        expect(updated).toStrictEqual({ ...record, ...patch })
        expect(await tx(storage, (t) => t.get('campaigns', record.id))).toStrictEqual({ ...record, ...patch })
      })

      test('update leaves fields given as undefined alone, and can set a field to null', async (storage) => {
        const record = affiliate({ payoutMethod: 'PAYPAL', details: 'x' })
        await insertAll(storage, 'affiliates', [record])
        const updated = await tx(storage, (t) => t.update('affiliates', record.id, { firstName: undefined, details: null }))
        expect(updated).toStrictEqual({ ...record, details: null })
      })

      test('update answers null for an unknown id and stores nothing', async (storage) => {
        expect(await tx(storage, (t) => t.update('campaigns', sampleId(), { campaignName: 'x' }))).toBeNull()
        expect(await tx(storage, (t) => t.count('campaigns', {}))).toBe(0)
      })

      test('update of an indexed field moves the record between look-ups', async (storage) => {
        const record = campaign()
        await insertAll(storage, 'campaigns', [record])
        await tx(storage, (t) => t.update('campaigns', record.id, { workspaceId: OTHER_WORKSPACE }))
        expect(await tx(storage, (t) => t.find('campaigns', { where: { workspaceId: WORKSPACE } }))).toEqual([])
        expect(ids(await tx(storage, (t) => t.find('campaigns', { where: { workspaceId: OTHER_WORKSPACE } })))).toEqual([record.id])
        expect(await tx(storage, (t) => t.count('campaigns', { where: { workspaceId: WORKSPACE } }))).toBe(0)
      })

      test('increment adds each delta and answers the record as stored', async (storage) => {
        const record = affiliate({ totalClicks: 5, totalEarningsMinor: 1000 })
        await insertAll(storage, 'affiliates', [record])
        const updated = await tx(storage, (t) =>
          t.increment('affiliates', record.id, { totalClicks: 2, totalEarningsMinor: -250, totalOpens: 1 }),
        )
        expect(updated).toStrictEqual({ ...record, totalClicks: 7, totalEarningsMinor: 750, totalOpens: 1 })
        expect(await tx(storage, (t) => t.get('affiliates', record.id))).toStrictEqual(updated)
      })

      test('increment answers null for an unknown id', async (storage) => {
        expect(await tx(storage, (t) => t.increment('affiliates', sampleId(), { totalClicks: 1 }))).toBeNull()
      })

      test('delete removes one record and says whether it existed', async (storage) => {
        const [a, b] = [campaign(), campaign()]
        await insertAll(storage, 'campaigns', [a, b])
        expect(await tx(storage, (t) => t.delete('campaigns', a.id))).toBe(true)
        expect(await tx(storage, (t) => t.delete('campaigns', a.id))).toBe(false)
        expect(await tx(storage, (t) => t.get('campaigns', a.id))).toBeNull()
        expect(await tx(storage, (t) => t.get('campaigns', b.id))).toStrictEqual(b)
      })

      test('deleteMany removes every match and answers how many', async (storage) => {
        const keep = campaign({ workspaceId: OTHER_WORKSPACE })
        const doomed = [campaign(), campaign({ isDefault: true }), campaign()]
        await insertAll(storage, 'campaigns', [keep, ...doomed])
        expect(await tx(storage, (t) => t.deleteMany('campaigns', { workspaceId: WORKSPACE, isDefault: true }))).toBe(1)
        expect(await tx(storage, (t) => t.deleteMany('campaigns', { workspaceId: WORKSPACE }))).toBe(2)
        expect(await tx(storage, (t) => t.deleteMany('campaigns', { workspaceId: WORKSPACE }))).toBe(0)
        expect(ids(await tx(storage, (t) => t.find('campaigns', {})))).toEqual([keep.id])
      })

      test('deleteMany with `in` and with no condition', async (storage) => {
        const records = [campaign(), campaign(), campaign()]
        await insertAll(storage, 'campaigns', records)
        const removed = await tx(storage, (t) => t.deleteMany('campaigns', { id: { in: [records[0]!.id, records[2]!.id, sampleId()] } }))
        expect(removed).toBe(2)
        expect(await tx(storage, (t) => t.deleteMany('campaigns', {}))).toBe(1)
        expect(await tx(storage, (t) => t.count('campaigns', {}))).toBe(0)
      })
    })

    describe('updateMany: the status-guarded claim', () => {
      test('updateMany sets the fields on every match only, and answers how many', async (storage) => {
        const payoutId = sampleId()
        const due = [commission(), commission(), commission({ status: 'processing' }), commission({ payoutId: sampleId() })]
        await insertAll(storage, 'commissions', due)
        const claimed = await tx(storage, (t) =>
          t.updateMany(
            'commissions',
            { id: { in: ids(due) }, status: 'pending', payoutId: null },
            { status: 'processing', payoutId, updatedAt: at(9) },
          ),
        )
        expect(claimed).toBe(2)
        const after = await tx(storage, (t) => t.find('commissions', { where: { payoutId }, orderBy: { field: 'id', direction: 'ASC' } }))
        expect(after).toStrictEqual(
          [due[0]!, due[1]!]
            .map((c) => ({ ...c, status: 'processing', payoutId, updatedAt: at(9) }))
            .sort((a, b) => (a.id < b.id ? -1 : 1)),
        )
        expect(await tx(storage, (t) => t.get('commissions', due[2]!.id))).toStrictEqual(due[2])
        expect(await tx(storage, (t) => t.get('commissions', due[3]!.id))).toStrictEqual(due[3])
        // The guard no longer holds: a second claim takes nothing.
        expect(
          await tx(storage, (t) =>
            t.updateMany('commissions', { id: { in: ids(due) }, payoutId: null, status: 'pending' }, { payoutId: sampleId() }),
          ),
        ).toBe(0)
        expect(await tx(storage, (t) => t.count('commissions', { where: { payoutId } }))).toBe(2)
        expect(await tx(storage, (t) => t.count('commissions', { where: { workspaceId: WORKSPACE, status: 'processing' } }))).toBe(3)
      })

      test('updateMany can set a field back to null, and moves records between look-ups', async (storage) => {
        const payoutId = sampleId()
        const inPayout = [commission({ payoutId, status: 'processing' }), commission({ payoutId, status: 'processing' })]
        await insertAll(storage, 'commissions', inPayout)
        expect(await tx(storage, (t) => t.updateMany('commissions', { payoutId }, { payoutId: null, status: 'pending' }))).toBe(2)
        expect(await tx(storage, (t) => t.count('commissions', { where: { payoutId } }))).toBe(0)
        expect(
          await tx(storage, (t) => t.count('commissions', { where: { payoutId: null, status: 'pending', workspaceId: WORKSPACE } })),
        ).toBe(2)
        expect(await tx(storage, (t) => t.count('commissions', { where: { workspaceId: WORKSPACE, status: 'processing' } }))).toBe(0)
      })

      test('updateMany is undone with its transaction', async (storage) => {
        const record = commission()
        await insertAll(storage, 'commissions', [record])
        await tx(storage, async (t) => {
          expect(await t.updateMany('commissions', { id: record.id }, { status: 'paid', payoutId: sampleId() })).toBe(1)
          throw new Error('undo')
        }).catch((error: Error) => expect(error.message).toBe('undo'))
        expect(await tx(storage, (t) => t.get('commissions', record.id))).toStrictEqual(record)
        expect(await tx(storage, (t) => t.count('commissions', { where: { workspaceId: WORKSPACE, status: 'paid' } }))).toBe(0)
      })

      test('updateMany that would break a unique constraint throws and changes nothing', async (storage) => {
        const records = [commission({ invoiceId: null }), commission({ invoiceId: null })]
        await insertAll(storage, 'commissions', records)
        await tx(storage, async (t) => {
          await expect(t.updateMany('commissions', { id: { in: ids(records) } }, { invoiceId: 'in_1' })).rejects.toBeInstanceOf(
            UniqueViolationError,
          )
          expect(await t.count('commissions', { where: { invoiceId: 'in_1' } })).toBe(0)
        })
        expect(await tx(storage, (t) => t.count('commissions', { where: { invoiceId: null } }))).toBe(2)
      })

      test('serializable: concurrent claims of the same records never give one record to two claimants', (storage) =>
        concurrentClaims(storage, (t, mine, payoutId) =>
          t.updateMany('commissions', { id: { in: mine }, status: 'pending', payoutId: null }, { status: 'processing', payoutId }),
        ))
    })

    describe('fraud review: held commissions and what the fraud rules read', () => {
      test("a held commission's reasons round-trip, and review's guarded move empties them once", async (storage) => {
        const held = commission({ status: 'hold', holdReasons: ['disposable_email', 'paid_ad_click'] })
        const other = commission()
        await insertAll(storage, 'commissions', [held, other])
        expect(await tx(storage, (t) => t.get('commissions', held.id))).toStrictEqual(held)
        expect(ids(await tx(storage, (t) => t.find('commissions', { where: { workspaceId: WORKSPACE, status: 'hold' } })))).toEqual([
          held.id,
        ])
        const release = { status: 'pending' as const, holdReasons: [], updatedAt: at(9) }
        expect(await tx(storage, (t) => t.updateMany('commissions', { id: held.id, status: 'hold' }, release))).toBe(1)
        expect(await tx(storage, (t) => t.updateMany('commissions', { id: held.id, status: 'hold' }, { status: 'voided' }))).toBe(0)
        expect(await tx(storage, (t) => t.get('commissions', held.id))).toStrictEqual({ ...held, ...release })
        expect(await tx(storage, (t) => t.count('commissions', { where: { workspaceId: WORKSPACE, status: 'hold' } }))).toBe(0)
      })

      test("a campaign's fraud rules, a click's and a customer's fraud facts and an affiliate's portal devices round-trip", async (storage) => {
        const rules = JSON.stringify({
          self_referral: 'flag',
          disposable_email: 'block',
          paid_ad_click: 'flag',
          address_burst: 'off',
          refund_rate: 'block',
        })
        const records = {
          campaign: campaign({ fraudRules: rules }),
          click: click({ address: 'YWRkcmVzcy1oYXNo', device: 'ZGV2aWNlLWhhc2g', paidAd: true }),
          customer: customer({ clickAddress: 'YWRkcmVzcy1oYXNo', clickDevice: 'ZGV2aWNlLWhhc2g', clickPaidAd: true }),
          affiliate: affiliate({ portalDevices: ['ZGV2aWNlLWhhc2g', 'b3RoZXI'] }),
        }
        await tx(storage, async (t) => {
          await t.insert('campaigns', records.campaign)
          await t.insert('clicks', records.click)
          await t.insert('customers', records.customer)
          await t.insert('affiliates', records.affiliate)
        })
        expect(await tx(storage, (t) => t.get('campaigns', records.campaign.id))).toStrictEqual(records.campaign)
        expect(await tx(storage, (t) => t.get('clicks', records.click.id))).toStrictEqual(records.click)
        expect(await tx(storage, (t) => t.get('customers', records.customer.id))).toStrictEqual(records.customer)
        expect(await tx(storage, (t) => t.get('affiliates', records.affiliate.id))).toStrictEqual(records.affiliate)
        await tx(storage, (t) => t.update('affiliates', records.affiliate.id, { portalDevices: ['bmV3'] }))
        expect((await tx(storage, (t) => t.get('affiliates', records.affiliate.id)))!.portalDevices).toEqual(['bmV3'])
      })

      test("an affiliate's customers from one click address within a window (what address_burst counts)", async (storage) => {
        const affiliateId = sampleId()
        const from = (clickAddress: string, createdAt: string, other = affiliateId) =>
          customer({ affiliateId: other, clickAddress, createdAt, updatedAt: createdAt })
        const inside = [from('addr-1', at(100)), from('addr-1', at(200)), from('addr-1', at(300))]
        const outside = [from('addr-1', at(10)), from('addr-1', at(400)), from('addr-2', at(200)), from('addr-1', at(200), sampleId())]
        await insertAll(storage, 'customers', [...outside, ...inside])
        const found = await tx(storage, (t) =>
          t.select('customers', ['id'], {
            where: { affiliateId, clickAddress: 'addr-1', createdAt: { gte: at(100), lte: at(300) } },
            orderBy: { field: 'createdAt', direction: 'ASC' },
          }),
        )
        expect(ids(found)).toEqual(ids(inside))
      })
    })

    describe('select', () => {
      test('select answers the given fields and the id of the records find answers, in its order and page', async (storage) => {
        const records = Array.from({ length: 7 }, (_, i) =>
          commission({
            createdAt: at(i),
            amountMinor: 100 * (i % 3),
            status: i % 2 ? 'paid' : 'pending',
            payoutId: i === 3 ? sampleId() : null,
            isSelfReferral: i === 2,
            referredUser: `buyer-${i}@example.com`,
          }),
        )
        await insertAll(storage, 'commissions', records)
        const fields = ['status', 'amountMinor', 'payoutId', 'isSelfReferral', 'createdAt'] as const
        const pick = (record: object) =>
          Object.fromEntries(['id', ...fields].map((field) => [field, (record as Record<string, unknown>)[field]]))
        const queries: FindQuery<'commissions'>[] = [
          {},
          { where: { status: 'pending', payoutId: null } },
          { orderBy: { field: 'amountMinor', direction: 'ASC' }, offset: 2, limit: 3 },
          { where: { workspaceId: WORKSPACE }, contains: 'BUYER-4' },
          { limit: 0 },
        ]
        for (const query of queries) {
          const full = await tx(storage, (t) => t.find('commissions', query))
          const some = await tx(storage, (t) => t.select('commissions', fields, query))
          expect(some.map(pick), JSON.stringify(query)).toStrictEqual(full.map(pick))
        }
        expect(await tx(storage, (t) => t.select('commissions', ['status'], { where: { status: 'paid' } }))).toHaveLength(3)
      })
    })

    describe('batches: insertMany, updateEach, incrementEach', () => {
      test('insertMany stores every record as given, searchable and in look-ups', async (storage) => {
        const records = [
          affiliate({ email: 'Ann@example.com', details: null }),
          affiliate({ email: 'bob@example.com', payoutMethod: 'PAYPAL' }),
          affiliate({ workspaceId: OTHER_WORKSPACE }),
        ]
        await tx(storage, (t) => t.insertMany('affiliates', records))
        for (const record of records) expect(await tx(storage, (t) => t.get('affiliates', record.id))).toStrictEqual(record)
        expect(await tx(storage, (t) => t.count('affiliates', { where: { workspaceId: WORKSPACE } }))).toBe(2)
        expect(ids(await tx(storage, (t) => t.find('affiliates', { contains: 'ANN@' })))).toEqual([records[0]!.id])
        await tx(storage, (t) => t.insertMany('affiliates', []))
        expect(await tx(storage, (t) => t.count('affiliates', {}))).toBe(3)
      })

      test('insertMany that breaks a unique constraint throws, stores none, and the transaction goes on', async (storage) => {
        const held = commission({ invoiceId: 'in_1' })
        await insertAll(storage, 'commissions', [held])
        const fresh = commission({ invoiceId: 'in_2' })
        await tx(storage, async (t) => {
          await expect(t.insertMany('commissions', [fresh, commission({ invoiceId: 'in_1' })])).rejects.toBeInstanceOf(UniqueViolationError)
          // A collision among the records themselves.
          await expect(t.insertMany('commissions', [fresh, commission({ invoiceId: 'in_2' })])).rejects.toBeInstanceOf(UniqueViolationError)
          expect(await t.get('commissions', fresh.id)).toBeNull()
          await t.insertMany('commissions', [fresh])
        })
        expect(ids(await tx(storage, (t) => t.find('commissions', { orderBy: { field: 'id', direction: 'ASC' } })))).toEqual(
          ids([held, fresh]).sort(),
        )
      })

      test('insertMany of an id already stored throws and stores none', async (storage) => {
        const held = campaign()
        await insertAll(storage, 'campaigns', [held])
        const fresh = campaign()
        await expect(tx(storage, (t) => t.insertMany('campaigns', [fresh, { ...campaign(), id: held.id }]))).rejects.toThrow()
        expect(await tx(storage, (t) => t.get('campaigns', fresh.id))).toBeNull()
        expect(await tx(storage, (t) => t.get('campaigns', held.id))).toStrictEqual(held)
      })

      test('updateEach gives each record its own patch, only where the guard still holds, and counts those', async (storage) => {
        const [first, second] = [sampleId(), sampleId()]
        const due = [commission(), commission(), commission({ status: 'processing' }), commission({ payoutId: sampleId() })]
        await insertAll(storage, 'commissions', due)
        const changes = [
          { id: due[0]!.id, patch: { status: 'processing' as const, payoutId: first, updatedAt: at(9) } },
          { id: due[1]!.id, patch: { status: 'processing' as const, payoutId: second, updatedAt: at(10) } },
          // No longer matching the guard: not changed, not counted.
          { id: due[2]!.id, patch: { status: 'processing' as const, payoutId: first, updatedAt: at(9) } },
          { id: due[3]!.id, patch: { status: 'processing' as const, payoutId: first, updatedAt: at(9) } },
          // No such record.
          { id: sampleId(), patch: { status: 'processing' as const, payoutId: first, updatedAt: at(9) } },
        ]
        expect(await tx(storage, (t) => t.updateEach('commissions', changes, { status: 'pending', payoutId: null }))).toBe(2)
        expect(await tx(storage, (t) => t.get('commissions', due[0]!.id))).toStrictEqual({
          ...due[0]!,
          status: 'processing',
          payoutId: first,
          updatedAt: at(9),
        })
        expect(await tx(storage, (t) => t.get('commissions', due[1]!.id))).toStrictEqual({
          ...due[1]!,
          status: 'processing',
          payoutId: second,
          updatedAt: at(10),
        })
        expect(await tx(storage, (t) => t.get('commissions', due[2]!.id))).toStrictEqual(due[2])
        expect(await tx(storage, (t) => t.get('commissions', due[3]!.id))).toStrictEqual(due[3])
        expect(ids(await tx(storage, (t) => t.find('commissions', { where: { payoutId: second } })))).toEqual([due[1]!.id])
        expect(await tx(storage, (t) => t.count('commissions', { where: { workspaceId: WORKSPACE, status: 'processing' } }))).toBe(3)
        // The guard no longer holds for any of them: a second claim changes nothing.
        expect(await tx(storage, (t) => t.updateEach('commissions', changes, { status: 'pending', payoutId: null }))).toBe(0)
        expect(await tx(storage, (t) => t.get('commissions', due[1]!.id))).toStrictEqual({
          ...due[1]!,
          status: 'processing',
          payoutId: second,
          updatedAt: at(10),
        })
      })

      test('updateEach without a guard, with patches of different fields, nulls and a range guard', async (storage) => {
        const records = [affiliate({ details: 'x', totalClicks: 1 }), affiliate({ payoutMethod: null }), affiliate()]
        await insertAll(storage, 'affiliates', records)
        const n = await tx(storage, (t) =>
          t.updateEach('affiliates', [
            { id: records[0]!.id, patch: { details: null, isBanned: true } },
            { id: records[1]!.id, patch: { payoutMethod: 'WISE', notes: 'n' } },
          ]),
        )
        expect(n).toBe(2)
        expect(await tx(storage, (t) => t.get('affiliates', records[0]!.id))).toStrictEqual({
          ...records[0]!,
          details: null,
          isBanned: true,
        })
        expect(await tx(storage, (t) => t.get('affiliates', records[1]!.id))).toStrictEqual({
          ...records[1]!,
          payoutMethod: 'WISE',
          notes: 'n',
        })
        expect(await tx(storage, (t) => t.get('affiliates', records[2]!.id))).toStrictEqual(records[2])
        const ranged = await tx(storage, (t) =>
          t.updateEach(
            'affiliates',
            [records[0]!, records[2]!].map((r) => ({ id: r.id, patch: { notes: 'ranged' } })),
            { totalClicks: { gte: 1 } },
          ),
        )
        expect(ranged).toBe(1)
        expect((await tx(storage, (t) => t.get('affiliates', records[0]!.id)))!.notes).toBe('ranged')
        expect((await tx(storage, (t) => t.get('affiliates', records[2]!.id)))!.notes).toBe(records[2]!.notes)
      })

      test('updateEach that would break a unique constraint throws and changes nothing', async (storage) => {
        const records = [commission({ invoiceId: null }), commission({ invoiceId: null }), commission({ invoiceId: 'in_9' })]
        await insertAll(storage, 'commissions', records)
        await tx(storage, async (t) => {
          const changes = [
            { id: records[0]!.id, patch: { invoiceId: 'in_1', status: 'paid' as const } },
            { id: records[1]!.id, patch: { invoiceId: 'in_9', status: 'paid' as const } },
          ]
          await expect(t.updateEach('commissions', changes)).rejects.toBeInstanceOf(UniqueViolationError)
          expect(await t.get('commissions', records[0]!.id)).toStrictEqual(records[0])
          expect(await t.get('commissions', records[1]!.id)).toStrictEqual(records[1])
        })
        expect(await tx(storage, (t) => t.count('commissions', { where: { invoiceId: null } }))).toBe(2)
      })

      test('updateEach and incrementEach are undone with their transaction', async (storage) => {
        const record = commission()
        const person = affiliate({ totalClicks: 3 })
        await insertAll(storage, 'commissions', [record])
        await insertAll(storage, 'affiliates', [person])
        await tx(storage, async (t) => {
          expect(await t.updateEach('commissions', [{ id: record.id, patch: { status: 'paid', payoutId: sampleId() } }])).toBe(1)
          expect(await t.incrementEach('affiliates', [{ id: person.id, deltas: { totalClicks: 2 } }])).toBe(1)
          throw new Error('undo')
        }).catch((error: Error) => expect(error.message).toBe('undo'))
        expect(await tx(storage, (t) => t.get('commissions', record.id))).toStrictEqual(record)
        expect(await tx(storage, (t) => t.get('affiliates', person.id))).toStrictEqual(person)
        expect(await tx(storage, (t) => t.count('commissions', { where: { workspaceId: WORKSPACE, status: 'paid' } }))).toBe(0)
      })

      test('a batch naming one record twice is refused', async (storage) => {
        const record = affiliate()
        await insertAll(storage, 'affiliates', [record])
        await expect(
          tx(storage, (t) =>
            t.updateEach('affiliates', [
              { id: record.id, patch: { notes: 'a' } },
              { id: record.id, patch: { notes: 'b' } },
            ]),
          ),
        ).rejects.toThrow(/twice/)
        await expect(
          tx(storage, (t) =>
            t.incrementEach('affiliates', [
              { id: record.id, deltas: { totalClicks: 1 } },
              { id: record.id, deltas: { totalClicks: 1 } },
            ]),
          ),
        ).rejects.toThrow(/twice/)
        expect(await tx(storage, (t) => t.get('affiliates', record.id))).toStrictEqual(record)
      })

      test('incrementEach adds each record its own deltas and counts the records it found', async (storage) => {
        const records = [affiliate({ totalClicks: 5, totalEarningsMinor: 1000 }), affiliate({ totalClicks: 1 }), affiliate()]
        await insertAll(storage, 'affiliates', records)
        const n = await tx(storage, (t) =>
          t.incrementEach('affiliates', [
            { id: records[0]!.id, deltas: { totalClicks: 2, totalEarningsMinor: -250 } },
            { id: records[1]!.id, deltas: { totalOpens: 4 } },
            { id: sampleId(), deltas: { totalClicks: 1 } },
          ]),
        )
        expect(n).toBe(2)
        expect(await tx(storage, (t) => t.get('affiliates', records[0]!.id))).toStrictEqual({
          ...records[0]!,
          totalClicks: 7,
          totalEarningsMinor: 750,
        })
        expect(await tx(storage, (t) => t.get('affiliates', records[1]!.id))).toStrictEqual({
          ...records[1]!,
          totalOpens: records[1]!.totalOpens + 4,
        })
        expect(await tx(storage, (t) => t.get('affiliates', records[2]!.id))).toStrictEqual(records[2])
        // A field named like a column of the database's own row sources (`value`, `id`, `key`).
        const counter = sequence({ value: 5 })
        await insertAll(storage, 'sequences', [counter])
        expect(await tx(storage, (t) => t.incrementEach('sequences', [{ id: counter.id, deltas: { value: 2 } }]))).toBe(1)
        expect(await tx(storage, (t) => t.updateEach('sequences', [{ id: counter.id, patch: { updatedAt: at(3) } }], { value: 7 }))).toBe(1)
        expect(await tx(storage, (t) => t.get('sequences', counter.id))).toStrictEqual({ ...counter, value: 7, updatedAt: at(3) })
      })

      test('takeSequence: consecutive numbers in commit order, across concurrent transactions; a rolled-back take holds nothing back', async (storage) => {
        const first = await tx(storage, (t) => t.takeSequence('events', 3, at(0)))
        expect(await tx(storage, (t) => t.takeSequence('events', 1, at(0)))).toBe(first + 3)
        await expect(
          tx(storage, async (t) => {
            await t.takeSequence('events', 2, at(0))
            throw new Error('rolled back')
          }),
        ).rejects.toThrow('rolled back')
        // Concurrent takers: each transaction's numbers are consecutive, and numbers are committed in
        // order: once a taker's commit is answered, every smaller number is committed and visible.
        // Each taker writes a marker with its numbers and, once committed, reads the markers it sees.
        // (The order the answers reach the client is not the commit order: a loaded database may
        // answer one COMMIT after the next transaction's, so the test does not rely on it.)
        const taken = await Promise.all(
          Array.from({ length: 6 }, () =>
            tx(storage, async (t) => {
              const a = await t.takeSequence('events', 2, at(0))
              const b = await t.takeSequence('events', 1, at(0))
              expect(b).toBe(a + 2)
              await t.insert('sequences', sequence({ id: `taken-${a}`, value: a }))
              return a
            }).then(async (a) => {
              const seen = await tx(storage, (t) => t.find('sequences', { limit: 100 }))
              return { a, seen: seen.filter((s) => s.id.startsWith('taken-')).map((s) => s.value) }
            }),
          ),
        )
        for (const { a, seen } of taken) {
          expect(seen.filter((value) => value < a).sort((x, y) => x - y)).toStrictEqual(
            taken
              .map((other) => other.a)
              .filter((value) => value < a)
              .sort((x, y) => x - y),
          )
        }
        const numbers = taken.flatMap(({ a }) => [a, a + 1, a + 2])
        expect(new Set(numbers).size).toBe(18)
        expect(Math.min(...numbers)).toBeGreaterThan(first + 3)
      })

      test('serializable: concurrent updateEach claims never give one record to two claimants', (storage) =>
        concurrentClaims(storage, (t, mine, payoutId) =>
          t.updateEach(
            'commissions',
            mine.map((id) => ({ id, patch: { status: 'processing' as const, payoutId } })),
            { status: 'pending', payoutId: null },
          ),
        ))
    })

    describe('where', () => {
      test('equality on text, boolean and null; every condition must hold; count agrees', async (storage) => {
        const records = [
          affiliate({ payoutMethod: null, isActive: true }),
          affiliate({ payoutMethod: 'PAYPAL', isActive: true }),
          affiliate({ payoutMethod: null, isActive: false }),
          affiliate({ payoutMethod: 'WISE', isActive: false, workspaceId: OTHER_WORKSPACE }),
        ]
        await insertAll(storage, 'affiliates', records)
        const cases: [FindQuery<'affiliates'>, number[]][] = [
          [{ where: { payoutMethod: null } }, [0, 2]],
          [{ where: { isActive: false } }, [2, 3]],
          [{ where: { isActive: true, payoutMethod: 'PAYPAL' } }, [1]],
          [{ where: { workspaceId: WORKSPACE, isActive: false } }, [2]],
          [{ where: { payoutMethod: 'BANK_TRANSFER' } }, []],
        ]
        for (const [query, expected] of cases) {
          const found = await tx(storage, (t) => t.find('affiliates', query))
          expect(ids(found).sort()).toEqual(expected.map((i) => records[i]!.id).sort())
          expect(await tx(storage, (t) => t.count('affiliates', query))).toBe(expected.length)
        }
      })

      test('`in` matches any listed value, null included; an empty list matches nothing', async (storage) => {
        const records = [affiliate({ payoutMethod: null }), affiliate({ payoutMethod: 'PAYPAL' }), affiliate({ payoutMethod: 'WISE' })]
        await insertAll(storage, 'affiliates', records)
        const cases: [readonly (string | null)[], number[]][] = [
          [
            ['PAYPAL', 'WISE'],
            [1, 2],
          ],
          [
            ['PAYPAL', null],
            [0, 1],
          ],
          [[null], [0]],
          [['PAYPAL', 'PAYPAL'], [1]],
          [[], []],
        ]
        for (const [values, expected] of cases) {
          const where = { payoutMethod: { in: values } }
          expect(ids(await tx(storage, (t) => t.find('affiliates', { where }))).sort()).toEqual(expected.map((i) => records[i]!.id).sort())
          expect(await tx(storage, (t) => t.count('affiliates', { where }))).toBe(expected.length)
        }
      })
    })

    describe('ranges', () => {
      const amounts = [100, 250, 250, 400, 900]
      const make = () =>
        amounts.map((amountMinor, i) =>
          commission({
            amountMinor,
            dueAt: at(10 + i),
            payoutDate: i % 2 === 0 ? null : at(20 + i),
            workspaceId: i === 4 ? OTHER_WORKSPACE : WORKSPACE,
            createdAt: at(i),
          }),
        )

      test('gt, gte, lt and lte on numbers and timestamps, alone, together and with equality; count agrees', async (storage) => {
        const records = make()
        await insertAll(storage, 'commissions', records)
        const cases: [FindQuery<'commissions'>, number[]][] = [
          [{ where: { amountMinor: { gt: 250 } } }, [3, 4]],
          [{ where: { amountMinor: { gte: 250 } } }, [1, 2, 3, 4]],
          [{ where: { amountMinor: { lt: 250 } } }, [0]],
          [{ where: { amountMinor: { lte: 250 } } }, [0, 1, 2]],
          [{ where: { amountMinor: { gt: 100, lt: 900 } } }, [1, 2, 3]],
          [{ where: { amountMinor: { gte: 900, lte: 100 } } }, []],
          [{ where: { dueAt: { gte: at(11), lt: at(14) } } }, [1, 2, 3]],
          [{ where: { dueAt: { lte: at(13) }, workspaceId: WORKSPACE } }, [0, 1, 2, 3]],
          [{ where: { dueAt: { gt: at(10) }, workspaceId: { in: [OTHER_WORKSPACE] } } }, [4]],
          [{ where: { amountMinor: { gte: 250 }, dueAt: { lt: at(13) } } }, [1, 2]],
          // Long lists (a backend may bind them differently from short ones), of numbers and of text, with a null.
          [{ where: { amountMinor: { in: [1, 2, 3, 4, 5, 6, 7, 8, 9, 900, 250] } } }, [1, 2, 4]],
          [{ where: { workspaceId: { in: [...Array.from({ length: 12 }, () => sampleId()), OTHER_WORKSPACE] } } }, [4]],
          [{ where: { payoutDate: { in: [null, ...Array.from({ length: 12 }, (_, i) => at(40 + i)), at(21)] } } }, [0, 1, 2, 4]],
          // A null field lies in no range, whichever way it is bounded.
          [{ where: { payoutDate: { gte: at(0) } } }, [1, 3]],
          [{ where: { payoutDate: { lt: at(99) } } }, [1, 3]],
        ]
        for (const [query, expected] of cases) {
          const found = await tx(storage, (t) => t.find('commissions', query))
          expect(ids(found).sort(), JSON.stringify(query.where)).toEqual(expected.map((i) => records[i]!.id).sort())
          expect(await tx(storage, (t) => t.count('commissions', query))).toBe(expected.length)
          const page = await tx(storage, (t) => t.findPage('commissions', { ...query, limit: 1 }))
          expect(page.total).toBe(expected.length)
        }
      })

      test('a range on the order field pages like a cursor: after a value, in order, limited', async (storage) => {
        const records = make()
        await insertAll(storage, 'commissions', records)
        const after = await tx(storage, (t) =>
          t.find('commissions', { where: { dueAt: { gt: at(11) } }, orderBy: { field: 'dueAt', direction: 'ASC' }, limit: 2 }),
        )
        expect(ids(after)).toEqual([records[2]!.id, records[3]!.id])
        const before = await tx(storage, (t) =>
          t.find('commissions', { where: { createdAt: { lt: at(3) } }, orderBy: { field: 'createdAt', direction: 'DESC' }, limit: 2 }),
        )
        expect(ids(before)).toEqual([records[2]!.id, records[1]!.id])
      })

      test('updateMany and deleteMany honour ranges, and a range guards a claim', async (storage) => {
        const records = make()
        await insertAll(storage, 'commissions', records)
        expect(await tx(storage, (t) => t.updateMany('commissions', { dueAt: { lte: at(11) } }, { stripeSubscriptionId: 'early' }))).toBe(2)
        expect(await tx(storage, (t) => t.count('commissions', { where: { stripeSubscriptionId: 'early' } }))).toBe(2)
        // Claimed by moving the field past the bound: the same guarded update then claims nothing.
        const claim = () =>
          tx(storage, (t) => t.updateMany('commissions', { id: records[3]!.id, dueAt: { lte: at(13) } }, { dueAt: at(50) }))
        expect(await claim()).toBe(1)
        expect(await claim()).toBe(0)
        expect(await tx(storage, (t) => t.deleteMany('commissions', { amountMinor: { lt: 300 } }))).toBe(3)
        expect(ids(await tx(storage, (t) => t.find('commissions', {}))).sort()).toEqual([records[3]!.id, records[4]!.id].sort())
      })

      test('a range on id walks the ids in order, alone and with other conditions (how click records are pruned)', async (storage) => {
        const records = make()
        await insertAll(storage, 'commissions', records)
        const sorted = ids(records).sort()
        const below = await tx(storage, (t) =>
          t.find('commissions', { where: { id: { lt: sorted[3]! } }, orderBy: { field: 'id', direction: 'ASC' }, limit: 2 }),
        )
        expect(ids(below)).toEqual(sorted.slice(0, 2))
        const rest = await tx(storage, (t) => t.find('commissions', { where: { id: { gte: sorted[1]! }, createdAt: { lt: at(4) } } }))
        const expected = records.filter((r) => r.id >= sorted[1]! && r.createdAt < at(4))
        expect(ids(rest).sort()).toEqual(ids(expected).sort())
        expect(await tx(storage, (t) => t.count('commissions', { where: { id: { gt: sorted[4]! } } }))).toBe(0)
        expect(await tx(storage, (t) => t.deleteMany('commissions', { id: { lte: sorted[1]! } }))).toBe(2)
        expect(ids(await tx(storage, (t) => t.find('commissions', {}))).sort()).toEqual(sorted.slice(2))
      })

      test('adminSessions: the ended ones are deleted by a range on expiresAt, the live ones kept (how sign-in prunes them)', async (storage) => {
        const records = [adminSession({ expiresAt: at(5) }), adminSession({ expiresAt: at(10) }), adminSession({ expiresAt: at(11) })]
        await insertAll(storage, 'adminSessions', records)
        expect(await tx(storage, (t) => t.deleteMany('adminSessions', { expiresAt: { lte: at(10) } }))).toBe(2)
        expect(await tx(storage, (t) => t.find('adminSessions', {}))).toStrictEqual([records[2]])
        expect(await tx(storage, (t) => t.get('adminSessions', records[0]!.id))).toBeNull()
      })

      test('strings compare by code unit, as JavaScript does', async (storage) => {
        const names = ['B', 'a', 'Z', 'é', 'b']
        const records = names.map((campaignName, i) => campaign({ campaignName, createdAt: at(i) }))
        await insertAll(storage, 'campaigns', records)
        const found = await tx(storage, (t) =>
          t.find('campaigns', { where: { campaignName: { gte: 'B', lt: 'b' } }, orderBy: { field: 'campaignName', direction: 'ASC' } }),
        )
        expect(found.map((r) => r.campaignName)).toEqual(names.filter((n) => n >= 'B' && n < 'b').sort())
      })
    })

    describe('order and paging', () => {
      // createdAt ties on purpose: the order must then follow id, in the same direction.
      const dated = () => [
        campaign({ id: 'c0000000-0000-4000-8000-000000000003', createdAt: at(1), campaignName: 'b' }),
        campaign({ id: 'c0000000-0000-4000-8000-000000000001', createdAt: at(2), campaignName: 'a' }),
        campaign({ id: 'c0000000-0000-4000-8000-000000000002', createdAt: at(2), campaignName: 'b' }),
        campaign({ id: 'c0000000-0000-4000-8000-000000000004', createdAt: at(2), campaignName: 'a' }),
        campaign({ id: 'c0000000-0000-4000-8000-000000000000', createdAt: at(3), campaignName: 'c' }),
      ]
      const byId = (records: CampaignRecord[], order: number[]) => order.map((i) => records[i]!.id)

      test('default order is createdAt descending, ties broken by id descending', async (storage) => {
        const records = dated()
        await insertAll(storage, 'campaigns', records)
        expect(ids(await tx(storage, (t) => t.find('campaigns', {})))).toEqual(byId(records, [4, 3, 2, 1, 0]))
      })

      test('createdAt ascending breaks ties by id ascending', async (storage) => {
        const records = dated()
        await insertAll(storage, 'campaigns', records)
        const found = await tx(storage, (t) => t.find('campaigns', { orderBy: { field: 'createdAt', direction: 'ASC' } }))
        expect(ids(found)).toEqual(byId(records, [0, 1, 2, 3, 4]))
      })

      test('another field orders first, ties broken by id in the same direction', async (storage) => {
        const records = dated()
        await insertAll(storage, 'campaigns', records)
        const asc = await tx(storage, (t) => t.find('campaigns', { orderBy: { field: 'campaignName', direction: 'ASC' } }))
        expect(ids(asc)).toEqual(byId(records, [1, 3, 2, 0, 4]))
        const desc = await tx(storage, (t) => t.find('campaigns', { orderBy: { field: 'campaignName', direction: 'DESC' } }))
        expect(ids(desc)).toEqual(byId(records, [4, 0, 2, 3, 1]))
      })

      test('numbers order as numbers, not as text', async (storage) => {
        const records = [9, 100, -5, 20].map((payoutTerm, i) => campaign({ payoutTerm, createdAt: at(i) }))
        await insertAll(storage, 'campaigns', records)
        const found = await tx(storage, (t) => t.find('campaigns', { orderBy: { field: 'payoutTerm', direction: 'ASC' } }))
        expect(found.map((record) => record.payoutTerm)).toEqual([-5, 9, 20, 100])
      })

      test('offset and limit page through the order without gaps or repeats', async (storage) => {
        const records = Array.from({ length: 23 }, (_, i) => campaign({ createdAt: at(i % 7) }))
        await insertAll(storage, 'campaigns', records)
        const all = ids(await tx(storage, (t) => t.find('campaigns', {})))
        expect(all).toHaveLength(23)
        const paged: string[] = []
        for (let offset = 0; offset < 30; offset += 5) {
          paged.push(...ids(await tx(storage, (t) => t.find('campaigns', { offset, limit: 5 }))))
        }
        expect(paged).toEqual(all)
        expect(await tx(storage, (t) => t.find('campaigns', { offset: 23, limit: 5 }))).toEqual([])
        expect(await tx(storage, (t) => t.find('campaigns', { limit: 0 }))).toEqual([])
        expect(ids(await tx(storage, (t) => t.find('campaigns', { offset: 20 })))).toEqual(all.slice(20))
      })

      test('paging applies after where and order', async (storage) => {
        const records = Array.from({ length: 10 }, (_, i) =>
          campaign({ createdAt: at(i), workspaceId: i % 2 ? WORKSPACE : OTHER_WORKSPACE }),
        )
        await insertAll(storage, 'campaigns', records)
        const page = await tx(storage, (t) =>
          t.find('campaigns', {
            where: { workspaceId: WORKSPACE },
            orderBy: { field: 'createdAt', direction: 'ASC' },
            offset: 1,
            limit: 2,
          }),
        )
        expect(ids(page)).toEqual([records[3]!.id, records[5]!.id])
      })

      test('findPage answers the page find answers and the total count answers', async (storage) => {
        const statuses = ['pending', 'paid', 'paid', 'refunded'] as const
        const records = Array.from({ length: 30 }, (_, i) =>
          commission({
            createdAt: at(i % 9),
            status: statuses[i % 4]!,
            workspaceId: i % 3 ? WORKSPACE : OTHER_WORKSPACE,
            remarks: i % 5 ? `note ${i}` : 'Needle',
          }),
        )
        await insertAll(storage, 'commissions', records)
        const queries: FindQuery<'commissions'>[] = [
          {},
          { offset: 5, limit: 10 },
          { where: { workspaceId: WORKSPACE }, offset: 2, limit: 3 },
          { where: { workspaceId: WORKSPACE, status: 'paid' }, offset: 1, limit: 4 },
          { where: { workspaceId: { in: [WORKSPACE, OTHER_WORKSPACE] }, status: { in: ['paid', 'refunded'] } }, limit: 5 },
          { where: { status: 'pending' }, orderBy: { field: 'amountMinor', direction: 'ASC' }, limit: 2 },
          { contains: 'needle', offset: 1, limit: 2 },
          { where: { workspaceId: WORKSPACE }, contains: 'NOTE', limit: 3 },
          { where: { status: 'paid' }, offset: 40, limit: 5 },
          { where: { status: 'paid' }, limit: 0 },
        ]
        for (const query of queries) {
          const expected = await tx(storage, async (t) => ({
            items: await t.find('commissions', query),
            total: await t.count('commissions', { where: query.where, contains: query.contains }),
          }))
          expect(await tx(storage, (t) => t.findPage('commissions', query)), JSON.stringify(query)).toStrictEqual(expected)
        }
        const paid = records.filter((record) => record.workspaceId === WORKSPACE && record.status === 'paid')
        const { total } = await tx(storage, (t) =>
          t.findPage('commissions', { where: { workspaceId: WORKSPACE, status: 'paid' }, limit: 1 }),
        )
        expect(total).toBe(paid.length)
      })

      test('findPage sees the writes of its own transaction, before and after', async (storage) => {
        const records = Array.from({ length: 6 }, (_, i) => commission({ createdAt: at(i), status: i % 2 ? 'paid' : 'pending' }))
        await insertAll(storage, 'commissions', records)
        const query: FindQuery<'commissions'> = { where: { workspaceId: WORKSPACE, status: 'paid' }, limit: 2 }
        await tx(storage, async (t) => {
          expect((await t.findPage('commissions', query)).total).toBe(3)
          await t.update('commissions', records[0]!.id, { status: 'paid' })
          await t.delete('commissions', records[5]!.id)
          const page = await t.findPage('commissions', query)
          expect(page.total).toBe(3)
          expect(ids(page.items)).toEqual([records[3]!.id, records[1]!.id])
          expect(await t.count('commissions', { where: query.where })).toBe(3)
        })
      })
    })

    describe('contains', () => {
      test('is a case-insensitive substring of any search field', async (storage) => {
        const records = [
          affiliate({ email: 'Alice.Smith@Example.com', firstName: 'Alice', lastName: 'Smith' }),
          affiliate({ email: 'bob@example.com', firstName: 'Bob', lastName: 'SMITHERS' }),
          affiliate({ email: 'carol@example.org', firstName: 'Carol', lastName: 'Jones', notes: 'smith' }),
        ]
        await insertAll(storage, 'affiliates', records)
        const cases: [string, number[]][] = [
          ['smith', [0, 1]],
          ['ALICE.S', [0]],
          ['example.com', [0, 1]],
          ['jones', [2]],
          ['nobody', []],
        ]
        for (const [contains, expected] of cases) {
          expect(ids(await tx(storage, (t) => t.find('affiliates', { contains }))).sort()).toEqual(
            expected.map((i) => records[i]!.id).sort(),
          )
          expect(await tx(storage, (t) => t.count('affiliates', { contains }))).toBe(expected.length)
        }
      })

      test('folds case beyond ASCII as JavaScript toLowerCase does', async (storage) => {
        const records = [
          campaign({ campaignName: 'École d’été' }),
          campaign({ campaignName: 'ДРУЖБА' }),
          campaign({ campaignName: 'ΣΟΦΊΑ' }),
          campaign({ campaignName: 'plain' }),
        ]
        await insertAll(storage, 'campaigns', records)
        const cases: [string, number[]][] = [
          ['école', [0]],
          ['ÉTÉ', [0]],
          ['дружба', [1]],
          ['Друж', [1]],
          ['σοφία', [2]],
          ['ecole', []],
        ]
        for (const [contains, expected] of cases) {
          expect(ids(await tx(storage, (t) => t.find('campaigns', { contains }))).sort()).toEqual(
            expected.map((i) => records[i]!.id).sort(),
          )
        }
      })

      test('combines with where, order and paging; an updated search field is searched anew', async (storage) => {
        const records = Array.from({ length: 6 }, (_, i) =>
          campaign({
            campaignName: i % 2 ? `Summer ${i}` : `Winter ${i}`,
            createdAt: at(i),
            workspaceId: i < 4 ? WORKSPACE : OTHER_WORKSPACE,
          }),
        )
        await insertAll(storage, 'campaigns', records)
        const query = { where: { workspaceId: WORKSPACE }, contains: 'summer' }
        expect(ids(await tx(storage, (t) => t.find('campaigns', { ...query, limit: 1 })))).toEqual([records[3]!.id])
        expect(await tx(storage, (t) => t.count('campaigns', query))).toBe(2)
        await tx(storage, (t) => t.update('campaigns', records[0]!.id, { campaignName: 'SUMMER again' }))
        expect(await tx(storage, (t) => t.count('campaigns', query))).toBe(3)
        await tx(storage, (t) => t.update('campaigns', records[1]!.id, { campaignName: 'autumn' }))
        expect(await tx(storage, (t) => t.count('campaigns', query))).toBe(2)
      })

      test('does not search fields outside the model’s search list', async (storage) => {
        const record = campaign({ campaignName: 'Plain', url: 'https://needle.example.com' })
        await insertAll(storage, 'campaigns', [record])
        expect(await tx(storage, (t) => t.count('campaigns', { contains: 'needle' }))).toBe(0)
      })
    })

    /** The unique-constraint cases of one model: typed by the model, so records need no casts. */
    const uniqueCases = <M extends ModelName>(model: M) => {
      const sample: (overrides?: Partial<RecordOf<M>>) => RecordOf<M> = sampleOf[model]
      // The same objects, seen field by field: the cases set a constraint's fields by name.
      const fields = (record: RecordOf<M>): Record<string, unknown> => record
      for (const constraint of models[model].unique) {
        /** A patch setting the constraint's fields to `record`'s values. */
        const pick = (record: RecordOf<M>): Partial<RecordOf<M>> => {
          const patch: Partial<RecordOf<M>> = {}
          for (const field of constraint.fields) patch[field] = record[field]
          return patch
        }
        test(`${constraint.name}: a colliding insert throws UniqueViolationError and stores nothing`, async (storage) => {
          const first = sample()
          for (const field of constraint.fields) fields(first)[field] ??= another(null, field)
          const second = sample()
          for (const field of constraint.fields) fields(second)[field] = fields(first)[field]
          await insertAll(storage, model, [first])
          const error = await tx(storage, (t) => t.insert(model, second)).catch((e: unknown) => e)
          expect(error).toBeInstanceOf(UniqueViolationError)
          expect((error as UniqueViolationError).constraint).toBe(constraint.name)
          expect(await tx(storage, (t) => t.get(model, second.id))).toBeNull()
          expect(await tx(storage, (t) => t.count(model, {}))).toBe(1)
        })

        test(`${constraint.name}: an update into a collision throws and changes nothing`, async (storage) => {
          const first = sample()
          const second = sample()
          for (const field of constraint.fields) {
            fields(first)[field] ??= another(null, field)
            fields(second)[field] = another(fields(first)[field], 'other')
          }
          await insertAll(storage, model, [first, second])
          const error = await tx(storage, (t) => t.update(model, second.id, pick(first))).catch((e: unknown) => e)
          expect(error).toBeInstanceOf(UniqueViolationError)
          expect((error as UniqueViolationError).constraint).toBe(constraint.name)
          expect(await tx(storage, (t) => t.get(model, second.id))).toStrictEqual(second)
        })

        const nullable = constraint.fields.filter((field) => fields(sample())[field] === null)
        if (nullable.length > 0) {
          test(`${constraint.name}: a field set holding null never collides`, async (storage) => {
            const records = [sample(), sample()]
            for (const record of records) {
              for (const field of constraint.fields) fields(record)[field] = nullable.includes(field) ? null : fields(records[0]!)[field]
            }
            await insertAll(storage, model, records)
            expect(await tx(storage, (t) => t.count(model, {}))).toBe(2)
          })
        }

        test(`${constraint.name}: a value is free again once its holder is deleted or changed`, async (storage) => {
          const first = sample()
          for (const field of constraint.fields) fields(first)[field] ??= another(null, field)
          const copyOf = () => {
            const record = sample()
            for (const field of constraint.fields) fields(record)[field] = fields(first)[field]
            return record
          }
          await insertAll(storage, model, [first])
          // Updating the holder with its own values is no collision.
          await tx(storage, (t) => t.update(model, first.id, pick(first)))
          await tx(storage, (t) => t.delete(model, first.id))
          const second = copyOf()
          await insertAll(storage, model, [second])
          const moved = sample()
          for (const field of constraint.fields) fields(moved)[field] = another(fields(first)[field], 'moved')
          await tx(storage, (t) => t.update(model, second.id, pick(moved)))
          await insertAll(storage, model, [copyOf()])
          expect(await tx(storage, (t) => t.count(model, {}))).toBe(2)
        })
      }
    }

    describe('unique constraints', () => {
      for (const model of modelNames) uniqueCases(model)

      test('commissions: invoiceId and chargeId are unique per workspace only', async (storage) => {
        const records = [
          commission({ invoiceId: 'in_1', chargeId: 'ch_1' }),
          commission({ invoiceId: 'in_1', chargeId: 'ch_1', workspaceId: OTHER_WORKSPACE }),
          commission({ invoiceId: null, chargeId: null }),
          commission({ invoiceId: null, chargeId: null }),
        ]
        await insertAll(storage, 'commissions', records)
        expect(await tx(storage, (t) => t.count('commissions', {}))).toBe(4)
      })

      test('customers: externalId is unique per workspace only, and found by it, by stripeCustomerId and by affiliate and e-mail', async (storage) => {
        const mine = customer({ externalId: 'user-1', stripeCustomerId: 'cus_1' })
        const theirs = customer({
          externalId: 'user-1',
          stripeCustomerId: 'cus_1',
          workspaceId: OTHER_WORKSPACE,
          affiliateId: mine.affiliateId,
        })
        await insertAll(storage, 'customers', [
          mine,
          theirs,
          customer({ externalId: 'user-2', stripeCustomerId: null, affiliateId: mine.affiliateId, emailKey: 'other@example.com' }),
        ])
        const error = await tx(storage, (t) => t.insert('customers', customer({ externalId: 'user-1' }))).catch((e: unknown) => e)
        expect((error as UniqueViolationError).constraint).toBe('customers_workspace_external')
        const found = await tx(storage, async (t) => ({
          external: await t.find('customers', { where: { workspaceId: WORKSPACE, externalId: 'user-1' } }),
          stripe: await t.find('customers', { where: { workspaceId: OTHER_WORKSPACE, stripeCustomerId: 'cus_1' } }),
          sameEmail: await t.count('customers', { where: { affiliateId: mine.affiliateId, emailKey: mine.emailKey } }),
        }))
        expect(found.external).toStrictEqual([mine])
        expect(found.stripe).toStrictEqual([theirs])
        expect(found.sameEmail).toBe(2)
      })

      test('customers: a Stripe customer is bound to one customer per workspace, in another workspace to another; no Stripe customer never collides', async (storage) => {
        const mine = customer({ stripeCustomerId: 'cus_shared' })
        const theirs = customer({ stripeCustomerId: 'cus_shared', workspaceId: OTHER_WORKSPACE })
        await insertAll(storage, 'customers', [mine, theirs, customer({ stripeCustomerId: null }), customer({ stripeCustomerId: null })])
        const second = customer({ stripeCustomerId: 'cus_shared' })
        const inserted = await tx(storage, (t) => t.insert('customers', second)).catch((e: unknown) => e)
        expect((inserted as UniqueViolationError).constraint).toBe('customers_workspace_stripe')
        // Binding a customer to a Stripe customer another holds is refused too, and binding one that is free is not.
        const unbound = customer({ stripeCustomerId: null })
        await insertAll(storage, 'customers', [unbound])
        const updated = await tx(storage, (t) => t.update('customers', unbound.id, { stripeCustomerId: 'cus_shared' })).catch(
          (e: unknown) => e,
        )
        expect((updated as UniqueViolationError).constraint).toBe('customers_workspace_stripe')
        expect(await tx(storage, (t) => t.update('customers', unbound.id, { stripeCustomerId: 'cus_free' }))).toMatchObject({
          stripeCustomerId: 'cus_free',
        })
        const found = await tx(storage, (t) => t.find('customers', { where: { workspaceId: WORKSPACE, stripeCustomerId: 'cus_shared' } }))
        expect(found).toStrictEqual([mine])
        expect(await tx(storage, (t) => t.count('customers', {}))).toBe(5)
      })

      test('notifications: one per kind and record; the due ones found by status and time, and claimed once', async (storage) => {
        const due = notification({ kind: 'payout.paid', recordId: 'payout-1', nextAttemptAt: '2026-01-01T00:00:00.000Z' })
        const later = notification({ kind: 'payout.paid', recordId: 'payout-2', nextAttemptAt: '2026-01-02T00:00:00.000Z' })
        const sent = notification({ kind: 'payout.paid', recordId: 'payout-3', status: 'sent', nextAttemptAt: null })
        // The same record under another kind is another notice.
        const other = notification({ kind: 'clawback.created', recordId: 'payout-1', nextAttemptAt: '2026-01-01T00:00:00.000Z' })
        await insertAll(storage, 'notifications', [due, later, sent, other])
        const again = await tx(storage, (t) =>
          t.insert('notifications', notification({ kind: 'payout.paid', recordId: 'payout-1' })),
        ).catch((e: unknown) => e)
        expect((again as UniqueViolationError).constraint).toBe('notifications_kind_record')
        const where = { status: { in: ['pending'] }, nextAttemptAt: { lte: '2026-01-01T12:00:00.000Z' } }
        const found = await tx(storage, (t) => t.find('notifications', { where, orderBy: { field: 'nextAttemptAt', direction: 'ASC' } }))
        expect(found.map((n) => n.recordId).sort()).toEqual(['payout-1', 'payout-1'])
        const claim = { nextAttemptAt: '2026-01-01T12:01:00.000Z', claimToken: 'claim-a' }
        expect(await tx(storage, (t) => t.updateMany('notifications', { ...where, id: { in: [due.id, later.id] } }, claim))).toBe(1)
        // A second claim finds it no longer due.
        expect(
          await tx(storage, (t) => t.updateMany('notifications', { ...where, id: { in: [due.id] } }, { ...claim, claimToken: 'claim-b' })),
        ).toBe(0)
        expect(await tx(storage, (t) => t.get('notifications', due.id))).toMatchObject({ claimToken: 'claim-a' })
      })

      test('sales: a payment intent is unique per workspace, and a sale is found by it and by its Stripe customer', async (storage) => {
        const first = sale({ paymentIntentId: 'pi_1', stripeCustomerId: 'cus_1', customerId: null })
        await insertAll(storage, 'sales', [
          first,
          sale({ paymentIntentId: 'pi_1', workspaceId: OTHER_WORKSPACE }),
          sale({ paymentIntentId: null }),
          sale({ paymentIntentId: null }),
        ])
        const error = await tx(storage, (t) => t.insert('sales', sale({ paymentIntentId: 'pi_1' }))).catch((e: unknown) => e)
        expect((error as UniqueViolationError).constraint).toBe('sales_workspace_payment_intent')
        const found = await tx(storage, async (t) => ({
          byIntent: await t.find('sales', { where: { workspaceId: WORKSPACE, paymentIntentId: 'pi_1' } }),
          unclaimed: await t.find('sales', { where: { workspaceId: WORKSPACE, stripeCustomerId: 'cus_1', customerId: null } }),
        }))
        expect(found).toStrictEqual({ byIntent: [first], unclaimed: [first] })
      })

      test('sales and sale refunds: an invoiceId and a refundId are unique per workspace only', async (storage) => {
        await insertAll(storage, 'sales', [sale({ invoiceId: 'in_1' }), sale({ invoiceId: 'in_1', workspaceId: OTHER_WORKSPACE })])
        const error = await tx(storage, (t) => t.insert('sales', sale({ invoiceId: 'in_1' }))).catch((e: unknown) => e)
        expect((error as UniqueViolationError).constraint).toBe('sales_workspace_invoice')
        await insertAll(storage, 'saleRefunds', [
          saleRefund({ refundId: 're_1' }),
          saleRefund({ refundId: 're_1', workspaceId: OTHER_WORKSPACE }),
        ])
        const again = await tx(storage, (t) => t.insert('saleRefunds', saleRefund({ refundId: 're_1' }))).catch((e: unknown) => e)
        expect((again as UniqueViolationError).constraint).toBe('sale_refunds_workspace_refund')
        expect(await tx(storage, (t) => t.count('sales', {}))).toBe(2)
        expect(await tx(storage, (t) => t.count('saleRefunds', {}))).toBe(2)
      })

      test('promo codes: a code and a Stripe promotion code are unique per workspace only (no Stripe promotion code never collides), and found by either', async (storage) => {
        const mine = promoCode({ code: 'ALICE20', stripePromotionCodeId: 'promo_1' })
        await insertAll(storage, 'promoCodes', [
          mine,
          promoCode({ code: 'ALICE20', stripePromotionCodeId: 'promo_1', workspaceId: OTHER_WORKSPACE }),
          promoCode({ stripePromotionCodeId: null }),
          promoCode({ stripePromotionCodeId: null }),
        ])
        const sameCode = await tx(storage, (t) => t.insert('promoCodes', promoCode({ code: 'ALICE20' }))).catch((e: unknown) => e)
        expect((sameCode as UniqueViolationError).constraint).toBe('promo_codes_workspace_code')
        const sameStripe = await tx(storage, (t) => t.insert('promoCodes', promoCode({ stripePromotionCodeId: 'promo_1' }))).catch(
          (e: unknown) => e,
        )
        expect((sameStripe as UniqueViolationError).constraint).toBe('promo_codes_workspace_stripe')
        const found = await tx(storage, async (t) => ({
          byCode: await t.find('promoCodes', { where: { workspaceId: WORKSPACE, code: 'ALICE20' } }),
          byStripe: await t.find('promoCodes', { where: { workspaceId: WORKSPACE, stripePromotionCodeId: 'promo_1' } }),
          used: await t.increment('promoCodes', mine.id, { uses: 1 }),
        }))
        expect(found).toStrictEqual({ byCode: [mine], byStripe: [mine], used: { ...mine, uses: 1 } })
        expect(await tx(storage, (t) => t.count('promoCodes', {}))).toBe(4)
      })

      test('provider events: an eventId is unique per integration only, and listed by integration and status', async (storage) => {
        const integrationId = sampleId()
        const first = providerEvent({ integrationId, eventId: 'evt_1', status: 'ignored', reason: 'not_attributed' })
        await insertAll(storage, 'providerEvents', [first, providerEvent({ eventId: 'evt_1' })])
        const error = await tx(storage, (t) => t.insert('providerEvents', providerEvent({ integrationId, eventId: 'evt_1' }))).catch(
          (e: unknown) => e,
        )
        expect((error as UniqueViolationError).constraint).toBe('provider_events_integration_event')
        expect(await tx(storage, (t) => t.find('providerEvents', { where: { integrationId, status: 'ignored' } }))).toStrictEqual([first])
        expect(await tx(storage, (t) => t.count('providerEvents', {}))).toBe(2)
      })
    })

    describe('transactions', () => {
      test('answer what the work answers; readOnly work runs too', async (storage) => {
        const record = campaign()
        expect(await tx(storage, async (t) => (await t.insert('campaigns', record), 42))).toBe(42)
        expect(await storage.transaction(async (t) => (await t.get('campaigns', record.id))?.id, { readOnly: true })).toBe(record.id)
      })

      test('a transaction whose work throws stores none of its writes and passes the error on', async (storage) => {
        const kept = affiliate({ totalClicks: 1 })
        const removed = campaign()
        await tx(storage, async (t) => {
          await t.insert('affiliates', kept)
          await t.insert('campaigns', removed)
        })
        const failure = new Error('work failed')
        const fresh = link()
        const error = await tx(storage, async (t) => {
          await t.insert('links', fresh)
          await t.update('affiliates', kept.id, { firstName: 'Changed' })
          await t.increment('affiliates', kept.id, { totalClicks: 10 })
          await t.delete('campaigns', removed.id)
          await t.deleteMany('affiliates', {})
          throw failure
        }).catch((e: unknown) => e)
        expect(error).toBe(failure)
        expect(await tx(storage, (t) => t.get('links', fresh.id))).toBeNull()
        expect(await tx(storage, (t) => t.get('affiliates', kept.id))).toStrictEqual(kept)
        expect(await tx(storage, (t) => t.get('campaigns', removed.id))).toStrictEqual(removed)
      })

      test('counts and pages read inside a rolled-back transaction do not outlive it', async (storage) => {
        const kept = affiliate({ email: 'kept@example.com', emailKey: 'kept@example.com' })
        await insertAll(storage, 'affiliates', [kept])
        const query = { where: { workspaceId: WORKSPACE, campaignId: kept.campaignId }, contains: 'example.com' } as const
        await tx(storage, async (t) => {
          await t.insert('affiliates', affiliate({ email: 'gone@example.com', emailKey: 'gone@example.com', campaignId: kept.campaignId }))
          expect(await t.find('affiliates', { ...query, limit: 10 })).toHaveLength(2)
          expect(await t.count('affiliates', query)).toBe(2)
          throw new Error('undo')
        }).catch((error: Error) => expect(error.message).toBe('undo'))
        expect(await tx(storage, (t) => t.count('affiliates', query))).toBe(1)
        expect(await tx(storage, (t) => t.count('affiliates', { where: { workspaceId: WORKSPACE } }))).toBe(1)
        expect(ids(await tx(storage, (t) => t.find('affiliates', { ...query, limit: 10 })))).toEqual([kept.id])
      })

      test('a rolled-back insert frees its unique values', async (storage) => {
        const first = link()
        await tx(storage, async (t) => {
          await t.insert('links', first)
          throw new Error('undo')
        }).catch(() => undefined)
        await insertAll(storage, 'links', [link({ referralCode: first.referralCode })])
        expect(await tx(storage, (t) => t.count('links', { where: { referralCode: first.referralCode } }))).toBe(1)
      })

      test('work that catches a unique violation goes on, and commits its other writes', async (storage) => {
        const first = link()
        await insertAll(storage, 'links', [first])
        const other = campaign()
        await tx(storage, async (t) => {
          await expect(t.insert('links', link({ referralCode: first.referralCode }))).rejects.toBeInstanceOf(UniqueViolationError)
          await t.insert('campaigns', other)
        })
        expect(await tx(storage, (t) => t.get('campaigns', other.id))).toStrictEqual(other)
        expect(await tx(storage, (t) => t.count('links', {}))).toBe(1)
      })

      test('a transaction refuses work once it has ended, committed or rolled back', async (storage) => {
        let kept: StorageTransaction | undefined
        await tx(storage, async (t) => {
          kept = t
        })
        const late = (t: StorageTransaction) => Promise.resolve().then(() => t.insert('campaigns', campaign()))
        await expect(late(kept!)).rejects.toThrow()
        await tx(storage, async (t) => {
          kept = t
          throw new Error('undo')
        }).catch(() => undefined)
        await expect(late(kept!)).rejects.toThrow()
        await expect(Promise.resolve().then(() => kept!.get('campaigns', sampleId()))).rejects.toThrow()
        expect(await tx(storage, (t) => t.count('campaigns', {}))).toBe(0)
      })

      test('serializable: a read-modify-write counter loses no increment', async (storage) => {
        const record = affiliate({ totalClicks: 0 })
        await insertAll(storage, 'affiliates', [record])
        const runs = 25
        await Promise.all(
          Array.from({ length: runs }, () =>
            tx(storage, async (t) => {
              const current = await t.get('affiliates', record.id)
              // Give other transactions every chance to interleave between the read and the write.
              await new Promise((resolve) => setTimeout(resolve, 0))
              await t.update('affiliates', record.id, { totalClicks: current!.totalClicks + 1 })
            }),
          ),
        )
        expect((await tx(storage, (t) => t.get('affiliates', record.id)))!.totalClicks).toBe(runs)
      })

      test('serializable: check-then-insert by concurrent transactions admits exactly one', async (storage) => {
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            tx(storage, async (t) => {
              if ((await t.count('campaigns', { where: { isDefault: true } })) > 0) return false
              await new Promise((resolve) => setTimeout(resolve, 0))
              await t.insert('campaigns', campaign({ isDefault: true, campaignName: `c${i}` }))
              return true
            }),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(await tx(storage, (t) => t.count('campaigns', { where: { isDefault: true } }))).toBe(1)
      })

      test('a failing transaction does not disturb the ones queued with it', async (storage) => {
        const records = Array.from({ length: 6 }, () => campaign())
        const outcomes = await Promise.allSettled(
          records.map((record, i) =>
            tx(storage, async (t) => {
              await t.insert('campaigns', record)
              if (i % 2) throw new Error('odd')
            }),
          ),
        )
        expect(outcomes.map((outcome) => outcome.status)).toEqual([
          'fulfilled',
          'rejected',
          'fulfilled',
          'rejected',
          'fulfilled',
          'rejected',
        ])
        expect(ids(await tx(storage, (t) => t.find('campaigns', {}))).sort()).toEqual(
          [records[0]!.id, records[2]!.id, records[4]!.id].sort(),
        )
      })
    })

    describe('copies, not references', () => {
      test('changing a record after insert or update changes nothing stored', async (storage) => {
        const record = campaign()
        const expected = structuredClone(record)
        await insertAll(storage, 'campaigns', [record])
        record.campaignName = 'mutated'
        record.allowedUrlParameters.push('mutated')
        expect(await tx(storage, (t) => t.get('campaigns', record.id))).toStrictEqual(expected)
        const patch = { allowedUrlParameters: ['p'] }
        await tx(storage, (t) => t.update('campaigns', record.id, patch))
        patch.allowedUrlParameters.push('mutated')
        expect((await tx(storage, (t) => t.get('campaigns', record.id)))!.allowedUrlParameters).toEqual(['p'])
      })

      test('changing what get, find, update or increment answered changes nothing stored', async (storage) => {
        const record = affiliate()
        const keyRecord = apiKey()
        await tx(storage, async (t) => {
          await t.insert('affiliates', record)
          await t.insert('apiKeys', keyRecord)
        })
        await tx(storage, async (t) => {
          const answers = [
            await t.get('affiliates', record.id),
            (await t.find('affiliates', {}))[0],
            await t.update('affiliates', record.id, { notes: '' }),
            await t.increment('affiliates', record.id, { totalClicks: 0 }),
          ]
          for (const answer of answers) answer!.firstName = 'mutated'
          const key = await t.get('apiKeys', keyRecord.id)
          key!.workspaceIds.push('mutated')
          ;(await t.find('apiKeys', {}))[0]!.workspaceIds.length = 0
        })
        expect(await tx(storage, (t) => t.get('affiliates', record.id))).toStrictEqual(record)
        expect(await tx(storage, (t) => t.get('apiKeys', keyRecord.id))).toStrictEqual(keyRecord)
      })
    })
  })
}
