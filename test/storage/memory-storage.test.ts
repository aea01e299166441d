import { describe, expect, it } from 'vitest'
import { memoryStorage } from '../../src/index.js'
import { UniqueViolationError } from '../../src/storage/index.js'
import type { Storage } from '../../src/index.js'
import type { AffiliateRecord, CampaignRecord, CommissionRecord, StorageTransaction, Where } from '../../src/storage/index.js'
import * as sample from '../../src/storage/sample-records.js'
import { WS_A, WS_A2, WS_B } from '../support/helpers.js'

// Unit tests of the memory storage through the Storage contract alone (no service around it).

const T0 = Date.UTC(2026, 0, 1)
/** The ISO timestamp `seconds` after T0. */
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString()

const CAMPAIGN_1 = 'c1000000-0000-4000-8000-000000000000'
const CAMPAIGN_2 = 'c2000000-0000-4000-8000-000000000000'

// The sample records of the conformance kit, with the ids, workspace and values these tests read.
const campaign = (id: string, overrides: Partial<CampaignRecord> = {}): CampaignRecord =>
  sample.campaign({
    id,
    workspaceId: WS_A,
    campaignName: `Campaign ${id}`,
    amountMinor: 2000,
    payoutId: `payout-${id}`,
    url: 'https://shop.example.com',
    requiresApprovalToJoin: false,
    affiliatePortalWelcomeMessage: '',
    allowedUrlParameters: ['ref'],
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  })

function affiliate(id: string, overrides: Partial<AffiliateRecord> = {}): AffiliateRecord {
  const email = overrides.email ?? `${id}@example.com`
  return sample.affiliate({
    id,
    workspaceId: WS_A,
    campaignId: CAMPAIGN_1,
    email,
    emailKey: email.toLowerCase(),
    firstName: '',
    lastName: '',
    payoutEmail: '',
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  })
}

const commission = (id: string, overrides: Partial<CommissionRecord> = {}): CommissionRecord =>
  sample.commission({
    id,
    workspaceId: WS_A,
    campaignId: CAMPAIGN_1,
    affiliateId: 'a1',
    amountMinor: 1000,
    adminEarnedMinor: 4000,
    commissionDate: at(0),
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  })

/** Runs `work` in its own transaction. */
const run = <T>(storage: Storage, work: (tx: StorageTransaction) => Promise<T>) => storage.transaction(work)

const ids = (records: { id: string }[]) => records.map((record) => record.id)

/** A storage holding the given records, inserted in order. */
async function seeded(records: { campaigns?: CampaignRecord[]; affiliates?: AffiliateRecord[]; commissions?: CommissionRecord[] }) {
  const storage = memoryStorage()
  await run(storage, async (tx) => {
    for (const record of records.campaigns ?? []) await tx.insert('campaigns', record)
    for (const record of records.affiliates ?? []) await tx.insert('affiliates', record)
    for (const record of records.commissions ?? []) await tx.insert('commissions', record)
  })
  return storage
}

/** A deferred promise: a transaction can wait on it while the test looks at what else runs. */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('memory storage: insert and get', () => {
  it('answers an inserted record by id, equal to what was inserted', async () => {
    const storage = memoryStorage()
    const record = campaign('c1', { allowedUrlParameters: ['ref', 'via'] })
    await run(storage, (tx) => tx.insert('campaigns', record))
    expect(await run(storage, (tx) => tx.get('campaigns', 'c1'))).toEqual(record)
  })

  it('answers null for an id it does not hold, and keeps models apart', async () => {
    const storage = await seeded({ campaigns: [campaign('x1')] })
    expect(await run(storage, (tx) => tx.get('campaigns', 'nope'))).toBeNull()
    expect(await run(storage, (tx) => tx.get('affiliates', 'x1'))).toBeNull()
  })

  it('refuses a second record with the same id and keeps the first', async () => {
    const storage = await seeded({ campaigns: [campaign('c1', { campaignName: 'first' })] })
    await expect(run(storage, (tx) => tx.insert('campaigns', campaign('c1', { campaignName: 'second' })))).rejects.toThrow()
    expect((await run(storage, (tx) => tx.get('campaigns', 'c1')))?.campaignName).toBe('first')
    expect(await run(storage, (tx) => tx.count('campaigns', {}))).toBe(1)
  })

  it('sees its own writes inside the transaction', async () => {
    const storage = memoryStorage()
    const seen = await run(storage, async (tx) => {
      await tx.insert('campaigns', campaign('c1'))
      return [await tx.get('campaigns', 'c1'), await tx.count('campaigns', {})] as const
    })
    expect(seen[0]?.id).toBe('c1')
    expect(seen[1]).toBe(1)
  })

  it('answers what the work returns', async () => {
    expect(await run(memoryStorage(), async () => 42)).toBe(42)
  })
})

describe('memory storage: records are copies', () => {
  it('changing a record after inserting it changes nothing stored', async () => {
    const storage = memoryStorage()
    const record = campaign('c1')
    await run(storage, (tx) => tx.insert('campaigns', record))
    record.campaignName = 'changed'
    record.allowedUrlParameters.push('via')
    const stored = await run(storage, (tx) => tx.get('campaigns', 'c1'))
    expect(stored?.campaignName).toBe('Campaign c1')
    expect(stored?.allowedUrlParameters).toEqual(['ref'])
  })

  it('changing a record answered by get, find or update changes nothing stored', async () => {
    const storage = await seeded({ campaigns: [campaign('c1')] })
    await run(storage, async (tx) => {
      const got = (await tx.get('campaigns', 'c1'))!
      got.campaignName = 'from get'
      got.allowedUrlParameters.push('from-get')
      const [found] = await tx.find('campaigns', {})
      found!.campaignName = 'from find'
      found!.allowedUrlParameters.push('from-find')
      const updated = (await tx.update('campaigns', 'c1', { payoutTerm: 45 }))!
      updated.campaignName = 'from update'
      updated.allowedUrlParameters.push('from-update')
    })
    const stored = await run(storage, (tx) => tx.get('campaigns', 'c1'))
    expect(stored).toEqual(campaign('c1', { payoutTerm: 45 }))
  })

  it('changing a patch after update changes nothing stored', async () => {
    const storage = await seeded({ campaigns: [campaign('c1')] })
    const patch = { allowedUrlParameters: ['ref', 'via'] }
    await run(storage, (tx) => tx.update('campaigns', 'c1', patch))
    patch.allowedUrlParameters.push('later')
    expect((await run(storage, (tx) => tx.get('campaigns', 'c1')))?.allowedUrlParameters).toEqual(['ref', 'via'])
  })
})

describe('memory storage: find and count', () => {
  // Four campaigns: c2 and c3 share a createdAt, so the id breaks their tie.
  const records = [
    campaign('c1', { createdAt: at(1), workspaceId: WS_A, campaignName: 'Alpha Launch', payoutTerm: 30 }),
    campaign('c3', { createdAt: at(2), workspaceId: WS_B, campaignName: 'beta sale', payoutTerm: 45 }),
    campaign('c2', { createdAt: at(2), workspaceId: WS_A2, campaignName: 'Gamma', payoutTerm: 30, isDefault: true }),
    campaign('c4', { createdAt: at(3), workspaceId: WS_A, campaignName: 'Delta ALPHA', payoutTerm: 45 }),
  ]

  it('orders by createdAt descending by default, ties broken by id descending', async () => {
    const storage = await seeded({ campaigns: records })
    expect(ids(await run(storage, (tx) => tx.find('campaigns', {})))).toEqual(['c4', 'c3', 'c2', 'c1'])
  })

  it('orders by createdAt ascending, ties broken by id ascending', async () => {
    const storage = await seeded({ campaigns: records })
    const found = await run(storage, (tx) => tx.find('campaigns', { orderBy: { field: 'createdAt', direction: 'ASC' } }))
    expect(ids(found)).toEqual(['c1', 'c2', 'c3', 'c4'])
  })

  it('keeps createdAt order whatever the insertion order', async () => {
    const storage = await seeded({ campaigns: [...records].reverse() })
    expect(ids(await run(storage, (tx) => tx.find('campaigns', {})))).toEqual(['c4', 'c3', 'c2', 'c1'])
  })

  it('skips offset records and answers at most limit', async () => {
    const storage = await seeded({ campaigns: records })
    const page = (offset: number, limit: number) => run(storage, (tx) => tx.find('campaigns', { offset, limit }))
    expect(ids(await page(1, 2))).toEqual(['c3', 'c2'])
    expect(ids(await page(3, 2))).toEqual(['c1'])
    expect(ids(await page(4, 2))).toEqual([])
    expect(ids(await page(0, 0))).toEqual([])
  })

  it('filters by equality on indexed and plain fields, together', async () => {
    const storage = await seeded({ campaigns: records })
    const find = (where: Where<'campaigns'>) =>
      run(storage, async (tx) => ({ ids: ids(await tx.find('campaigns', { where })), count: await tx.count('campaigns', { where }) }))
    expect(await find({ workspaceId: WS_A })).toEqual({ ids: ['c4', 'c1'], count: 2 })
    expect(await find({ payoutTerm: 45 })).toEqual({ ids: ['c4', 'c3'], count: 2 })
    expect(await find({ workspaceId: WS_A, payoutTerm: 45 })).toEqual({ ids: ['c4'], count: 1 })
    expect(await find({ isDefault: true })).toEqual({ ids: ['c2'], count: 1 })
    expect(await find({ workspaceId: 'nobody' })).toEqual({ ids: [], count: 0 })
  })

  it('filters with `in`: any of the values, merged in order; an empty list matches nothing', async () => {
    const storage = await seeded({ campaigns: records })
    const find = (where: Where<'campaigns'>, direction: 'ASC' | 'DESC' = 'DESC') =>
      run(storage, async (tx) => ({
        ids: ids(await tx.find('campaigns', { where, orderBy: { field: 'createdAt', direction } })),
        count: await tx.count('campaigns', { where }),
      }))
    expect(await find({ workspaceId: { in: [WS_A, WS_A2] } })).toEqual({ ids: ['c4', 'c2', 'c1'], count: 3 })
    expect(await find({ workspaceId: { in: [WS_A, WS_A2] } }, 'ASC')).toEqual({ ids: ['c1', 'c2', 'c4'], count: 3 })
    expect(await find({ workspaceId: { in: [WS_A, WS_A] } })).toEqual({ ids: ['c4', 'c1'], count: 2 })
    expect(await find({ payoutTerm: { in: [45, 99] } })).toEqual({ ids: ['c4', 'c3'], count: 2 })
    expect(await find({ workspaceId: { in: [WS_A, WS_B] }, payoutTerm: { in: [30] } })).toEqual({ ids: ['c1'], count: 1 })
    expect(await find({ workspaceId: { in: [] } })).toEqual({ ids: [], count: 0 })
    expect(await find({ payoutTerm: { in: [] } })).toEqual({ ids: [], count: 0 })
  })

  it('matches null with null, and never with a value', async () => {
    const storage = await seeded({
      affiliates: [
        affiliate('a1', { createdAt: at(1), payoutMethod: null }),
        affiliate('a2', { createdAt: at(2), payoutMethod: 'PAYPAL' }),
        affiliate('a3', { createdAt: at(3), payoutMethod: null }),
      ],
    })
    const where = { payoutMethod: null }
    expect(ids(await run(storage, (tx) => tx.find('affiliates', { where })))).toEqual(['a3', 'a1'])
    expect(await run(storage, (tx) => tx.count('affiliates', { where }))).toBe(2)
    expect(ids(await run(storage, (tx) => tx.find('affiliates', { where: { payoutMethod: { in: [null, 'PAYPAL'] } } })))).toEqual([
      'a3',
      'a2',
      'a1',
    ])
  })

  it('searches the search fields case-insensitively with contains', async () => {
    const storage = await seeded({ campaigns: records })
    const search = (contains: string, where = {}) =>
      run(storage, async (tx) => ({
        ids: ids(await tx.find('campaigns', { contains, where })),
        count: await tx.count('campaigns', { contains, where }),
      }))
    expect(await search('alpha')).toEqual({ ids: ['c4', 'c1'], count: 2 })
    expect(await search('ALPHA')).toEqual({ ids: ['c4', 'c1'], count: 2 })
    expect(await search('a sa')).toEqual({ ids: ['c3'], count: 1 })
    expect(await search('alpha', { workspaceId: WS_A })).toEqual({ ids: ['c4', 'c1'], count: 2 })
    expect(await search('alpha', { payoutTerm: 30 })).toEqual({ ids: ['c1'], count: 1 })
    expect(await search('zzz')).toEqual({ ids: [], count: 0 })
  })

  it('searches every search field of affiliates, and no other field', async () => {
    const storage = await seeded({
      affiliates: [
        affiliate('a1', { createdAt: at(1), email: 'Jane@Example.com', firstName: 'Jane', lastName: 'Doe' }),
        affiliate('a2', { createdAt: at(2), email: 'bob@example.com', firstName: 'Robert', lastName: 'Janeway' }),
        affiliate('a3', { createdAt: at(3), email: 'max@example.com', firstName: 'Max', lastName: 'Power', notes: 'jane said hi' }),
        affiliate('a4', { createdAt: at(4), email: 'mARY.jane@example.com', firstName: 'Mary', lastName: 'Smith' }),
      ],
    })
    const search = (contains: string) => run(storage, async (tx) => ids(await tx.find('affiliates', { contains })))
    expect(await search('jane')).toEqual(['a4', 'a2', 'a1'])
    expect(await search('ROBERT')).toEqual(['a2'])
    expect(await search('power')).toEqual(['a3'])
    expect(await search('said')).toEqual([])
  })

  it('does not match a term spanning two search fields', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1', { email: 'x@example.com', firstName: 'Ann', lastName: 'Lee' })] })
    expect(await run(storage, (tx) => tx.count('affiliates', { contains: 'annlee' }))).toBe(0)
    expect(await run(storage, (tx) => tx.count('affiliates', { contains: 'ann lee' }))).toBe(0)
  })

  it('orders by another field, ties broken by id in the same direction', async () => {
    // Equal payoutTerm; the ids run against createdAt, so a createdAt tie-break would answer otherwise.
    const storage = await seeded({
      campaigns: [
        campaign('k1', { createdAt: at(5), payoutTerm: 30 }),
        campaign('k2', { createdAt: at(4), payoutTerm: 30 }),
        campaign('k3', { createdAt: at(3), payoutTerm: 10 }),
        campaign('k4', { createdAt: at(2), payoutTerm: 60 }),
        campaign('k5', { createdAt: at(1), payoutTerm: 30 }),
      ],
    })
    const order = (direction: 'ASC' | 'DESC', offset = 0, limit?: number) =>
      run(storage, async (tx) =>
        ids(await tx.find('campaigns', { orderBy: { field: 'payoutTerm', direction }, offset, ...(limit ? { limit } : {}) })),
      )
    expect(await order('ASC')).toEqual(['k3', 'k1', 'k2', 'k5', 'k4'])
    expect(await order('DESC')).toEqual(['k4', 'k5', 'k2', 'k1', 'k3'])
    expect(await order('ASC', 1, 2)).toEqual(['k1', 'k2'])
  })

  it('orders strings by code unit and booleans false before true', async () => {
    const storage = await seeded({
      campaigns: [
        campaign('s1', { campaignName: 'b', isDefault: true }),
        campaign('s2', { campaignName: 'B', isDefault: false }),
        campaign('s3', { campaignName: 'a', isDefault: true }),
      ],
    })
    const order = (field: 'campaignName' | 'isDefault') =>
      run(storage, async (tx) => ids(await tx.find('campaigns', { orderBy: { field, direction: 'ASC' } })))
    expect(await order('campaignName')).toEqual(['s2', 's3', 's1'])
    expect(await order('isDefault')).toEqual(['s2', 's1', 's3'])
  })

  it('orders by another field with where and contains applied', async () => {
    const storage = await seeded({ campaigns: records })
    const found = await run(storage, (tx) =>
      tx.find('campaigns', {
        where: { workspaceId: { in: [WS_A, WS_B] } },
        contains: 'a',
        orderBy: { field: 'campaignName', direction: 'ASC' },
      }),
    )
    expect(ids(found)).toEqual(['c1', 'c4', 'c3'])
  })
})

describe('memory storage: pages and counts stay true', () => {
  const records = [
    campaign('p1', { createdAt: at(1), workspaceId: WS_A, payoutTerm: 30 }),
    campaign('p2', { createdAt: at(2), workspaceId: WS_A2, payoutTerm: 30 }),
    campaign('p3', { createdAt: at(3), workspaceId: WS_A, payoutTerm: 45 }),
    campaign('p4', { createdAt: at(4), workspaceId: WS_A, payoutTerm: 30 }),
    campaign('p5', { createdAt: at(5), workspaceId: WS_A2, payoutTerm: 30 }),
  ]

  it('pages one index, several merged indexes and a filtered walk alike', async () => {
    const storage = await seeded({ campaigns: records })
    const page = (where: Where<'campaigns'>, direction: 'ASC' | 'DESC', offset: number, limit: number) =>
      run(storage, async (tx) => ids(await tx.find('campaigns', { where, orderBy: { field: 'createdAt', direction }, offset, limit })))
    expect(await page({ workspaceId: WS_A }, 'DESC', 1, 1)).toEqual(['p3'])
    expect(await page({ workspaceId: WS_A }, 'ASC', 1, 5)).toEqual(['p3', 'p4'])
    expect(await page({ workspaceId: WS_A }, 'ASC', 3, 5)).toEqual([])
    expect(await page({ workspaceId: { in: [WS_A, WS_A2] } }, 'DESC', 1, 3)).toEqual(['p4', 'p3', 'p2'])
    expect(await page({ workspaceId: { in: [WS_A, WS_A2] } }, 'ASC', 4, 3)).toEqual(['p5'])
    expect(await page({ workspaceId: WS_A, payoutTerm: 30 }, 'DESC', 1, 1)).toEqual(['p1'])
    expect(await page({ payoutTerm: 30 }, 'ASC', 1, 2)).toEqual(['p2', 'p4'])
    expect(await page({}, 'DESC', 2, 2)).toEqual(['p3', 'p2'])
    expect(await page({}, 'ASC', 4, 10)).toEqual(['p5'])
  })

  it('counts what is stored now, not what an earlier page of the same query saw', async () => {
    const storage = await seeded({ campaigns: records })
    await run(storage, async (tx) => {
      const query = { where: { workspaceId: WS_A, payoutTerm: 30 }, contains: 'campaign' }
      expect(ids(await tx.find('campaigns', { ...query, limit: 1 }))).toEqual(['p4'])
      expect(await tx.count('campaigns', query)).toBe(2)
      await tx.insert('campaigns', campaign('p6', { createdAt: at(6), workspaceId: WS_A, payoutTerm: 30 }))
      expect(await tx.count('campaigns', query)).toBe(3)
      await tx.find('campaigns', { ...query, limit: 1 })
      // A plain (non-indexed, non-search) field moves the match too.
      await tx.update('campaigns', 'p6', { payoutTerm: 60 })
      expect(await tx.count('campaigns', query)).toBe(2)
      await tx.find('campaigns', { ...query, limit: 1 })
      await tx.increment('campaigns', 'p4', { payoutTerm: 1 })
      expect(await tx.count('campaigns', query)).toBe(1)
      await tx.find('campaigns', { ...query, limit: 1 })
      await tx.delete('campaigns', 'p1')
      expect(await tx.count('campaigns', query)).toBe(0)
      expect(await tx.count('campaigns', { ...query, where: { workspaceId: WS_A } })).toBe(3)
    })
  })

  it('counts true after a rolled-back transaction that paged the same query', async () => {
    const storage = await seeded({ campaigns: records })
    const query = { where: { payoutTerm: 30 }, contains: 'p' }
    await expect(
      run(storage, async (tx) => {
        await tx.insert('campaigns', campaign('p6', { createdAt: at(6), payoutTerm: 30 }))
        expect(ids(await tx.find('campaigns', { ...query, limit: 2 }))).toEqual(['p6', 'p5'])
        expect(await tx.count('campaigns', query)).toBe(5)
        throw new Error('undo')
      }),
    ).rejects.toThrow('undo')
    expect(await run(storage, (tx) => tx.count('campaigns', query))).toBe(4)
    expect(ids(await run(storage, (tx) => tx.find('campaigns', { ...query, limit: 2 })))).toEqual(['p5', 'p4'])
  })
})

describe('memory storage: update', () => {
  it('sets only the given fields and answers the record as stored', async () => {
    const storage = await seeded({ campaigns: [campaign('c1')] })
    const updated = await run(storage, (tx) => tx.update('campaigns', 'c1', { campaignName: 'Renamed', updatedAt: at(9) }))
    const expected = campaign('c1', { campaignName: 'Renamed', updatedAt: at(9) })
    expect(updated).toEqual(expected)
    expect(await run(storage, (tx) => tx.get('campaigns', 'c1'))).toEqual(expected)
  })

  it('answers null for an unknown id and stores nothing', async () => {
    const storage = memoryStorage()
    expect(await run(storage, (tx) => tx.update('campaigns', 'nope', { campaignName: 'x' }))).toBeNull()
    expect(await run(storage, (tx) => tx.count('campaigns', {}))).toBe(0)
  })

  it('moves a record between index entries when an indexed field changes', async () => {
    const storage = await seeded({
      campaigns: [campaign('c1', { workspaceId: WS_A }), campaign('c2', { workspaceId: WS_A, createdAt: at(1) })],
    })
    await run(storage, (tx) => tx.update('campaigns', 'c1', { workspaceId: WS_B }))
    const where = (workspaceId: string) =>
      run(storage, async (tx) => [
        ids(await tx.find('campaigns', { where: { workspaceId } })),
        await tx.count('campaigns', { where: { workspaceId } }),
      ])
    expect(await where(WS_A)).toEqual([['c2'], 1])
    expect(await where(WS_B)).toEqual([['c1'], 1])
  })

  it('updates the search text when a search field changes', async () => {
    const storage = await seeded({ campaigns: [campaign('c1', { campaignName: 'Old name' })] })
    await run(storage, (tx) => tx.update('campaigns', 'c1', { campaignName: 'Fresh title' }))
    expect(await run(storage, (tx) => tx.count('campaigns', { contains: 'old' }))).toBe(0)
    expect(await run(storage, (tx) => tx.count('campaigns', { contains: 'fresh' }))).toBe(1)
  })

  it('moves a record in createdAt order when createdAt changes', async () => {
    const storage = await seeded({ campaigns: [campaign('c1', { createdAt: at(1) }), campaign('c2', { createdAt: at(2) })] })
    await run(storage, (tx) => tx.update('campaigns', 'c1', { createdAt: at(3) }))
    expect(ids(await run(storage, (tx) => tx.find('campaigns', {})))).toEqual(['c1', 'c2'])
    expect(ids(await run(storage, (tx) => tx.find('campaigns', { where: { workspaceId: WS_A } })))).toEqual(['c1', 'c2'])
  })
})

describe('memory storage: increment', () => {
  it('adds each delta to its field and answers the record as stored', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1', { totalClicks: 2, totalEarningsMinor: 150 })] })
    const updated = await run(storage, (tx) => tx.increment('affiliates', 'a1', { totalClicks: 3, totalEarningsMinor: -50, totalOpens: 1 }))
    expect(updated).toMatchObject({ totalClicks: 5, totalEarningsMinor: 100, totalOpens: 1, totalSignups: 0 })
    expect(await run(storage, (tx) => tx.get('affiliates', 'a1'))).toEqual(updated)
  })

  it('adds up over many concurrent transactions without losing any', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1')] })
    await Promise.all(Array.from({ length: 25 }, () => run(storage, (tx) => tx.increment('affiliates', 'a1', { totalClicks: 1 }))))
    expect((await run(storage, (tx) => tx.get('affiliates', 'a1')))?.totalClicks).toBe(25)
  })

  it('answers null for an unknown id', async () => {
    expect(await run(memoryStorage(), (tx) => tx.increment('affiliates', 'nope', { totalClicks: 1 }))).toBeNull()
  })
})

describe('memory storage: delete and deleteMany', () => {
  it('removes one record from every lookup and answers whether it existed', async () => {
    const storage = await seeded({ campaigns: [campaign('c1', { campaignName: 'Gone' }), campaign('c2', { createdAt: at(1) })] })
    expect(await run(storage, (tx) => tx.delete('campaigns', 'c1'))).toBe(true)
    expect(await run(storage, (tx) => tx.delete('campaigns', 'c1'))).toBe(false)
    expect(await run(storage, (tx) => tx.get('campaigns', 'c1'))).toBeNull()
    expect(ids(await run(storage, (tx) => tx.find('campaigns', {})))).toEqual(['c2'])
    expect(await run(storage, (tx) => tx.count('campaigns', { where: { workspaceId: WS_A } }))).toBe(1)
    expect(await run(storage, (tx) => tx.count('campaigns', { contains: 'gone' }))).toBe(0)
  })

  it('deleteMany removes every match, answers how many, and leaves the rest', async () => {
    const storage = await seeded({
      affiliates: [
        affiliate('a1', { createdAt: at(1), campaignId: CAMPAIGN_1 }),
        affiliate('a2', { createdAt: at(2), campaignId: CAMPAIGN_2 }),
        affiliate('a3', { createdAt: at(3), campaignId: CAMPAIGN_1 }),
      ],
    })
    expect(await run(storage, (tx) => tx.deleteMany('affiliates', { campaignId: CAMPAIGN_1 }))).toBe(2)
    expect(await run(storage, (tx) => tx.deleteMany('affiliates', { campaignId: CAMPAIGN_1 }))).toBe(0)
    expect(ids(await run(storage, (tx) => tx.find('affiliates', {})))).toEqual(['a2'])
  })
})

describe('memory storage: unique constraints', () => {
  it('refuses an insert that collides, naming the constraint, and stores nothing', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1', { email: 'jane@example.com' })] })
    const error = await run(storage, (tx) => tx.insert('affiliates', affiliate('a2', { email: 'jane@example.com' }))).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(UniqueViolationError)
    expect((error as UniqueViolationError).constraint).toBe('affiliates_campaign_email')
    expect(await run(storage, (tx) => tx.get('affiliates', 'a2'))).toBeNull()
    expect(await run(storage, (tx) => tx.count('affiliates', {}))).toBe(1)
    expect(await run(storage, (tx) => tx.count('affiliates', { contains: 'jane' }))).toBe(1)
  })

  it('compares the whole field set: the same email in another campaign is allowed', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1', { email: 'jane@example.com', campaignId: CAMPAIGN_1 })] })
    await run(storage, (tx) => tx.insert('affiliates', affiliate('a2', { email: 'jane@example.com', campaignId: CAMPAIGN_2 })))
    expect(await run(storage, (tx) => tx.count('affiliates', {}))).toBe(2)
  })

  it('refuses an update that collides and leaves the record as it was', async () => {
    const storage = await seeded({
      affiliates: [affiliate('a1', { email: 'one@example.com' }), affiliate('a2', { email: 'two@example.com', createdAt: at(1) })],
    })
    const error = await run(storage, (tx) => tx.update('affiliates', 'a2', { emailKey: 'one@example.com', firstName: 'X' })).catch(
      (e: unknown) => e,
    )
    expect((error as UniqueViolationError).constraint).toBe('affiliates_campaign_email')
    expect(await run(storage, (tx) => tx.get('affiliates', 'a2'))).toEqual(affiliate('a2', { email: 'two@example.com', createdAt: at(1) }))
  })

  it('lets a record keep its own key, and frees a key its record leaves or deletes', async () => {
    const storage = await seeded({
      affiliates: [affiliate('a1', { email: 'one@example.com' }), affiliate('a2', { email: 'two@example.com', createdAt: at(1) })],
    })
    await run(storage, (tx) => tx.update('affiliates', 'a1', { emailKey: 'one@example.com', firstName: 'Same' }))
    await run(storage, (tx) => tx.update('affiliates', 'a1', { email: 'uno@example.com', emailKey: 'uno@example.com' }))
    await run(storage, (tx) => tx.insert('affiliates', affiliate('a3', { email: 'one@example.com', createdAt: at(2) })))
    await run(storage, (tx) => tx.delete('affiliates', 'a2'))
    await run(storage, (tx) => tx.insert('affiliates', affiliate('a4', { email: 'two@example.com', createdAt: at(3) })))
    await expect(run(storage, (tx) => tx.insert('affiliates', affiliate('a5', { email: 'uno@example.com' })))).rejects.toBeInstanceOf(
      UniqueViolationError,
    )
    expect(ids(await run(storage, (tx) => tx.find('affiliates', {})))).toEqual(['a4', 'a3', 'a1'])
  })

  it('never collides on a constraint holding null', async () => {
    const storage = memoryStorage()
    await run(storage, async (tx) => {
      await tx.insert('commissions', commission('m1', { invoiceId: null, chargeId: null }))
      await tx.insert('commissions', commission('m2', { invoiceId: null, chargeId: null }))
      await tx.insert('commissions', commission('m3', { invoiceId: 'in_1', chargeId: null }))
      await tx.insert('commissions', commission('m4', { invoiceId: 'in_1', chargeId: null, workspaceId: WS_B }))
      await tx.update('commissions', 'm1', { invoiceId: null, chargeId: null, remarks: 'still null' })
    })
    expect(await run(storage, (tx) => tx.count('commissions', {}))).toBe(4)
    const error = await run(storage, (tx) => tx.insert('commissions', commission('m5', { invoiceId: 'in_1' }))).catch((e: unknown) => e)
    expect((error as UniqueViolationError).constraint).toBe('commissions_workspace_invoice')
    const charge = await run(storage, async (tx) => {
      await tx.update('commissions', 'm1', { chargeId: 'ch_1' })
      return tx.update('commissions', 'm2', { chargeId: 'ch_1' })
    }).catch((e: unknown) => e)
    expect((charge as UniqueViolationError).constraint).toBe('commissions_workspace_charge')
    expect(await run(storage, (tx) => tx.count('commissions', { where: { chargeId: 'ch_1' } }))).toBe(0)
  })
})

describe('memory storage: transactions', () => {
  it('rolls back every write of a failed transaction, passing the rejection on', async () => {
    const storage = await seeded({
      campaigns: [campaign('c1', { createdAt: at(1), campaignName: 'Keep me' }), campaign('c2', { createdAt: at(2), workspaceId: WS_B })],
      affiliates: [
        affiliate('a1', { email: 'held@example.com', totalClicks: 1 }),
        affiliate('a2', { email: 'doomed@example.com', createdAt: at(1) }),
      ],
    })
    const before = await run(storage, async (tx) => ({
      campaigns: await tx.find('campaigns', {}),
      affiliates: await tx.find('affiliates', {}),
    }))
    const boom = new Error('boom')
    const outcome = run(storage, async (tx) => {
      await tx.insert('campaigns', campaign('c3', { createdAt: at(3), campaignName: 'Fresh' }))
      await tx.update('campaigns', 'c1', { campaignName: 'Renamed', workspaceId: WS_A2 })
      await tx.update('campaigns', 'c3', { workspaceId: WS_B })
      await tx.delete('campaigns', 'c2')
      await tx.increment('affiliates', 'a1', { totalClicks: 10 })
      await tx.update('affiliates', 'a1', { email: 'moved@example.com', emailKey: 'moved@example.com' })
      await tx.insert('affiliates', affiliate('a3', { email: 'new@example.com', createdAt: at(2) }))
      await tx.deleteMany('affiliates', { emailKey: 'doomed@example.com' })
      await tx.update('affiliates', 'a1', { totalOpens: 4 })
      await tx.delete('affiliates', 'a1')
      throw boom
    })
    await expect(outcome).rejects.toBe(boom)

    await run(storage, async (tx) => {
      expect(await tx.find('campaigns', {})).toEqual(before.campaigns)
      expect(await tx.find('affiliates', {})).toEqual(before.affiliates)
      expect(await tx.get('campaigns', 'c3')).toBeNull()
      expect(ids(await tx.find('campaigns', { where: { workspaceId: WS_A } }))).toEqual(['c1'])
      expect(ids(await tx.find('campaigns', { where: { workspaceId: WS_B } }))).toEqual(['c2'])
      expect(await tx.count('campaigns', { where: { workspaceId: WS_A2 } })).toBe(0)
      expect(await tx.count('campaigns', { contains: 'fresh' })).toBe(0)
      expect(await tx.count('campaigns', { contains: 'renamed' })).toBe(0)
      expect(await tx.count('campaigns', { contains: 'keep me' })).toBe(1)
    })
    // Unique state is back too: the held keys are taken again, the ones the transaction made are free.
    await expect(run(storage, (tx) => tx.insert('affiliates', affiliate('x1', { email: 'held@example.com' })))).rejects.toBeInstanceOf(
      UniqueViolationError,
    )
    await expect(run(storage, (tx) => tx.insert('affiliates', affiliate('x2', { email: 'doomed@example.com' })))).rejects.toBeInstanceOf(
      UniqueViolationError,
    )
    await run(storage, async (tx) => {
      await tx.insert('affiliates', affiliate('x3', { email: 'moved@example.com', createdAt: at(5) }))
      await tx.insert('affiliates', affiliate('x4', { email: 'new@example.com', createdAt: at(6) }))
      await tx.insert('campaigns', campaign('c3', { createdAt: at(7) }))
    })
    expect(ids(await run(storage, (tx) => tx.find('affiliates', {})))).toEqual(['x4', 'x3', 'a2', 'a1'])
  })

  it('rolls back the earlier writes when a unique violation ends the transaction', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1', { email: 'taken@example.com' })] })
    await expect(
      run(storage, async (tx) => {
        await tx.insert('affiliates', affiliate('a2', { email: 'free@example.com', createdAt: at(1) }))
        await tx.increment('affiliates', 'a1', { totalSignups: 1 })
        await tx.insert('affiliates', affiliate('a3', { email: 'taken@example.com', createdAt: at(2) }))
      }),
    ).rejects.toBeInstanceOf(UniqueViolationError)
    expect(ids(await run(storage, (tx) => tx.find('affiliates', {})))).toEqual(['a1'])
    expect((await run(storage, (tx) => tx.get('affiliates', 'a1')))?.totalSignups).toBe(0)
    await run(storage, (tx) => tx.insert('affiliates', affiliate('a2', { email: 'free@example.com' })))
  })

  it('keeps the writes of a transaction whose work caught a failed write', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1', { email: 'taken@example.com' })] })
    await run(storage, async (tx) => {
      await tx.insert('affiliates', affiliate('a2', { email: 'kept@example.com', createdAt: at(1) }))
      await tx.insert('affiliates', affiliate('a3', { email: 'taken@example.com' })).catch(() => undefined)
    })
    expect(ids(await run(storage, (tx) => tx.find('affiliates', {})))).toEqual(['a2', 'a1'])
  })

  it('runs transactions one at a time, in the order they were asked for', async () => {
    const storage = memoryStorage()
    const events: string[] = []
    const gate = deferred()
    const first = run(storage, async (tx) => {
      events.push('first start')
      await gate.promise
      await tx.insert('campaigns', campaign('c1'))
      events.push('first end')
    })
    const second = run(storage, async (tx) => {
      events.push('second start')
      events.push(`second sees ${await tx.count('campaigns', {})}`)
    })
    // Let every queued microtask run: the second must still be waiting for the first.
    for (let i = 0; i < 20; i++) await Promise.resolve()
    expect(events).toEqual(['first start'])
    gate.resolve()
    await Promise.all([first, second])
    expect(events).toEqual(['first start', 'first end', 'second start', 'second sees 1'])
  })

  it('loses no update when concurrent transactions read, wait, then write', async () => {
    const storage = await seeded({ affiliates: [affiliate('a1')] })
    await Promise.all(
      Array.from({ length: 20 }, () =>
        run(storage, async (tx) => {
          const current = (await tx.get('affiliates', 'a1'))!
          await Promise.resolve()
          await tx.update('affiliates', 'a1', { totalSignups: current.totalSignups + 1 })
        }),
      ),
    )
    expect((await run(storage, (tx) => tx.get('affiliates', 'a1')))?.totalSignups).toBe(20)
  })

  it('keeps serving after a failed transaction', async () => {
    const storage = memoryStorage()
    const failed = run(storage, async () => {
      throw new Error('first fails')
    })
    const next = run(storage, (tx) => tx.insert('campaigns', campaign('c1')))
    await expect(failed).rejects.toThrow('first fails')
    await next
    expect(await run(storage, (tx) => tx.count('campaigns', {}))).toBe(1)
  })

  it('refuses a transaction handle used after its transaction ended', async () => {
    const storage = memoryStorage()
    let leaked: StorageTransaction | undefined
    await run(storage, async (tx) => {
      leaked = tx
    })
    await expect(leaked!.insert('campaigns', campaign('c1'))).rejects.toThrow()
    await expect(leaked!.get('campaigns', 'c1')).rejects.toThrow()
    expect(await run(storage, (tx) => tx.count('campaigns', {}))).toBe(0)
  })

  it('keeps separate storages apart', async () => {
    const one = await seeded({ campaigns: [campaign('c1')] })
    const two = memoryStorage()
    expect(await run(two, (tx) => tx.get('campaigns', 'c1'))).toBeNull()
    expect(await run(one, (tx) => tx.count('campaigns', {}))).toBe(1)
  })
})
