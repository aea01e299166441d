// What PostgreSQL plans for the storage's own statements at 100k affiliates and 100k commissions:
// by-id reads and list pages come from an index (no Seq Scan on the big table), pages in
// createdAt order need no Sort, and `contains` uses the trigram index when pg_trgm is there.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import {
  countStatement,
  findStatement,
  tableSql,
  updateEachStatement,
  updateManyStatement,
  type Statement,
} from '../../adapters/postgres/sql.js'
import type { FindQuery, ModelName, Scalar } from '../../src/storage/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

const ROWS = 100_000
const BIG = 'aaaaaaaa-0000-4000-8000-000000000001'
const SMALL = 'aaaaaaaa-0000-4000-8000-000000000002'

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)]

describe.skipIf(!postgresUrl)(needs('PostgreSQL query plans at 100k rows', POSTGRES_VAR), () => {
  const schema = uniqueName('plans')
  let pool: pg.Pool
  let trigram = false
  let someAffiliate = ''

  beforeAll(async () => {
    pool = await testPool(2)
    trigram = (await postgresStorage({ pool, schema }).ready()).trigram
    const s = `"${schema}"`
    // Nine in ten rows in one workspace, the rest in another; createdAt one second apart, as
    // ISO strings the way the service writes them; the search column as the storage fills it.
    const iso = `to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    await pool.query(`
      INSERT INTO ${s}.affiliates
      SELECT md5('a' || i)::uuid::text, CASE WHEN i % 10 = 0 THEN '${SMALL}' ELSE '${BIG}' END, md5('c' || (i % 20))::uuid::text,
        'user-' || i || '@example.com', 'user-' || i || '@example.com', 'First' || i, 'Last' || i, '', '', NULL, NULL, true, false,
        0, 0, 1, 1000, ${iso}, ${iso}, 'user-' || i || '@example.com' || chr(31) || 'first' || i || chr(31) || 'last' || i
      FROM generate_series(1, ${ROWS}) AS i`)
    await pool.query(`
      -- Columns in table order: the first version's, then those migration 4 added.
      INSERT INTO ${s}.commissions
      SELECT md5('m' || i)::uuid::text, CASE WHEN i % 10 = 0 THEN '${SMALL}' ELSE '${BIG}' END, md5('c' || (i % 20))::uuid::text,
        md5('a' || i)::uuid::text, 'buyer-' || i || '@example.com', 'buyer-' || i || '@example.com', 1000, 100,
        (ARRAY['pending', 'processing', 'paid', 'refunded'])[i % 4 + 1], ${iso}, NULL, NULL, NULL, false, 0,
        NULL, 'in_' || i, NULL, NULL, NULL, ${iso}, ${iso}, 'buyer-' || i || '@example.com' || chr(31) || chr(31),
        'sale', ${iso}, NULL, 0, NULL
      FROM generate_series(1, ${ROWS}) AS i`)
    // What autovacuum does shortly after a bulk load: statistics and the visibility map. VACUUM
    // marks a page all-visible only once no open transaction (another test's, on the same
    // database) could still not see its rows, so it is repeated until the map covers the tables.
    for (let tries = 0; ; tries++) {
      await pool.query(`VACUUM ANALYZE ${s}.affiliates, ${s}.commissions`)
      const { rows } = await pool.query<{ visible: boolean }>(
        `SELECT bool_and(relallvisible >= relpages) AS visible FROM pg_class WHERE oid IN ('${s}.affiliates'::regclass, '${s}.commissions'::regclass)`,
      )
      if (rows[0]!.visible) break
      if (tries === 60)
        throw new Error('VACUUM could not mark the tables all-visible in a minute: a transaction stayed open on this database')
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
    someAffiliate = (await pool.query(`SELECT md5('a' || 4242)::uuid::text AS id`)).rows[0].id
  }, 120_000)

  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
  })

  const plan = async (statement: Statement): Promise<PlanNode[]> => {
    const { rows } = await pool.query({ text: `EXPLAIN (FORMAT JSON) ${statement.text}`, values: statement.values })
    return flatten((rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan)
  }
  /** Queries as loose objects: these name fields of several models. */
  type Query = Omit<FindQuery<ModelName>, 'where'> & { where?: Record<string, Scalar | { in: readonly Scalar[] }> }
  const find = (model: ModelName, query: Query) => plan(findStatement(tableSql(schema, model), query as FindQuery<ModelName>)!)
  const count = (model: ModelName, query: Query) => plan(countStatement(tableSql(schema, model), query as FindQuery<ModelName>))
  const seqScans = (nodes: PlanNode[]) => nodes.filter((node) => node['Node Type'] === 'Seq Scan')
  const indexes = (nodes: PlanNode[]) => nodes.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []))
  const sorts = (nodes: PlanNode[]) => nodes.filter((node) => node['Node Type'].includes('Sort'))
  /** A list page as the API asks for it: the caller's workspace(s), createdAt DESC, page 2 of 10. */
  const page = (where: Query['where'], extra: Partial<Query> = {}): Query => ({
    where,
    orderBy: { field: 'createdAt', direction: 'DESC' },
    offset: 10,
    limit: 10,
    ...extra,
  })

  it('a by-id read is one primary-key look-up', async () => {
    const nodes = await plan({ text: tableSql(schema, 'affiliates').byId, values: [someAffiliate] })
    expect(seqScans(nodes)).toEqual([])
    expect(indexes(nodes)).toEqual(['affiliates_pkey'])
  })

  it('a list page of a workspace reads the (workspaceId, createdAt, id) index in order, with no sort', async () => {
    for (const workspaceId of [BIG, SMALL]) {
      for (const direction of ['DESC', 'ASC'] as const) {
        const nodes = await find('affiliates', page({ workspaceId: { in: [workspaceId] } }, { orderBy: { field: 'createdAt', direction } }))
        expect(seqScans(nodes)).toEqual([])
        expect(sorts(nodes)).toEqual([])
        expect(indexes(nodes).length).toBeGreaterThan(0)
      }
    }
  })

  it('a list page over two workspaces still reads an index', async () => {
    const nodes = await find('affiliates', page({ workspaceId: { in: [BIG, SMALL] } }))
    expect(seqScans(nodes)).toEqual([])
    expect(indexes(nodes).length).toBeGreaterThan(0)
  })

  it("a payout run's claim finds its commissions by primary key, not by the unclaimed ones' payoutId index", async () => {
    const ids = [1, 2, 3, 4, 5].map((i) => `md5('m' || ${i * 1000})`)
    const { rows } = await pool.query(`SELECT ${ids.map((id, i) => `${id}::uuid::text AS "${i}"`).join(', ')}`)
    const statement = updateManyStatement(
      tableSql(schema, 'commissions'),
      { id: { in: Object.values(rows[0] as Record<string, string>) }, status: 'pending', payoutId: null },
      [
        ['status', 'processing'],
        ['payoutId', someAffiliate],
      ],
    )
    const nodes = await plan(statement)
    expect(seqScans(nodes)).toEqual([])
    expect(indexes(nodes)).toEqual(['commissions_pkey'])
  })

  it("a payout run's batched claim (updateEach) joins its rows on the primary key", async () => {
    const { rows } = await pool.query(`SELECT ${[1, 2, 3].map((i) => `md5('m' || ${i * 1000})::uuid::text AS "${i}"`).join(', ')}`)
    const claims = Object.values(rows[0] as Record<string, string>).map((id) => ({ id, status: 'processing', payoutId: someAffiliate }))
    const nodes = await plan(
      updateEachStatement(tableSql(schema, 'commissions'), ['status', 'payoutId'], claims, { status: 'pending', payoutId: null }),
    )
    expect(seqScans(nodes)).toEqual([])
    expect(indexes(nodes)).toEqual(['commissions_pkey'])
  })

  it("a statement's 5000 claims read the commissions through an index, not a scan of the table (the 100k-row hash per statement)", async () => {
    const { rows } = await pool.query<{ id: string }>(`SELECT md5('m' || i * 7)::uuid::text AS id FROM generate_series(1, 5000) AS i`)
    const claims = rows.map(({ id }) => ({ id, status: 'processing', payoutId: someAffiliate }))
    const nodes = await plan(
      updateEachStatement(tableSql(schema, 'commissions'), ['status', 'payoutId'], claims, { status: 'pending', payoutId: null }),
    )
    expect(seqScans(nodes)).toEqual([])
    expect(indexes(nodes)).toHaveLength(1)
  })

  it('a filtered commission list (workspace and status) reads the (workspaceId, status, createdAt, id) index, with no sort', async () => {
    const nodes = await find('commissions', page({ workspaceId: { in: [BIG] }, status: 'paid' }))
    expect(seqScans(nodes)).toEqual([])
    expect(sorts(nodes)).toEqual([])
    expect(indexes(nodes)).toEqual(['commissions_workspace_status'])
  })

  it('lists by affiliate, by campaign and by referred e-mail, and the counts a commission create makes, read indexes', async () => {
    const campaignId = (await pool.query(`SELECT md5('c' || 3)::uuid::text AS id`)).rows[0].id
    const statements = [
      await find('commissions', page({ affiliateId: someAffiliate })),
      await find('affiliates', page({ workspaceId: BIG, campaignId })),
      await count('commissions', { where: { referredUserKey: 'buyer-4242@example.com', affiliateId: someAffiliate } }),
      await count('commissions', { where: { affiliateId: someAffiliate } }),
      await find('commissions', { where: { workspaceId: BIG, invoiceId: 'in_4242' }, limit: 1 }),
    ]
    for (const nodes of statements) {
      expect(seqScans(nodes)).toEqual([])
      expect(indexes(nodes).length).toBeGreaterThan(0)
    }
  })

  it("the admin's lists read their own indexes: a workspace's top earners, its commissions of a kind, of a period in date order", async () => {
    // Loose objects: fields the Query type (shared by every model) does not know.
    const loose = (query: Record<string, unknown>) => query as unknown as Query
    const top = await find(
      'affiliates',
      loose({ where: { workspaceId: { in: [BIG] } }, orderBy: { field: 'totalEarningsMinor', direction: 'DESC' }, limit: 5 }),
    )
    expect(indexes(top)).toEqual(['affiliates_workspace_earnings'])
    expect(sorts(top)).toEqual([])
    const clawbacks = await find('commissions', page({ workspaceId: { in: [BIG] }, kind: 'clawback' }))
    expect(indexes(clawbacks)).toEqual(['commissions_workspace_kind'])
    const period = { workspaceId: { in: [BIG] }, commissionDate: { gte: '2026-01-01T10:00:00.000Z', lt: '2026-01-01T12:00:00.000Z' } }
    const dated = await find(
      'commissions',
      loose({ where: period, orderBy: { field: 'commissionDate', direction: 'DESC' }, offset: 10, limit: 10 }),
    )
    expect(indexes(dated)).toEqual(['commissions_workspace_date'])
    expect(sorts(dated)).toEqual([])
    const counted = await count('commissions', loose({ where: period }))
    expect(seqScans(counted)).toEqual([])
    expect(indexes(counted)).toEqual(['commissions_workspace_date'])
  })

  it('the exact total of a list page counts from an index, never the table', async () => {
    for (const nodes of [
      await count('affiliates', { where: { workspaceId: { in: [BIG] } } }),
      await count('affiliates', { where: { workspaceId: { in: [BIG, SMALL] } } }),
      await count('commissions', { where: { workspaceId: { in: [BIG] }, status: 'paid' } }),
    ]) {
      expect(seqScans(nodes)).toEqual([])
      expect(nodes.map((node) => node['Node Type'])).toContain('Index Only Scan')
    }
  })

  it('a contains search uses the trigram index when pg_trgm is there', async (context) => {
    if (!trigram) context.skip('pg_trgm is not available on this server: contains scans the rows the other conditions leave')
    for (const nodes of [
      await find('affiliates', page({ workspaceId: { in: [BIG] } }, { contains: 'user-4242@', offset: 0 })),
      await count('affiliates', { where: { workspaceId: { in: [BIG] } }, contains: 'user-4242@' }),
    ]) {
      expect(seqScans(nodes)).toEqual([])
      expect(indexes(nodes)).toContain('affiliates_search_trgm')
    }
  })

  it('the storage answers the same page the plan was made for', async () => {
    const storage = postgresStorage({ pool, schema })
    const query = page({ workspaceId: { in: [SMALL] } }) as FindQuery<'affiliates'>
    const records = await storage.transaction((tx) => tx.find('affiliates', query), { readOnly: true })
    // Workspace SMALL holds every tenth row; newest first, page 2 starts at the 11th newest.
    expect(records.map((record) => record.email)).toEqual(Array.from({ length: 10 }, (_, i) => `user-${ROWS - 10 * (10 + i)}@example.com`))
    expect(await storage.transaction((tx) => tx.count('affiliates', { where: { workspaceId: SMALL } }))).toBe(ROWS / 10)
  })
})
