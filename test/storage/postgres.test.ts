// The PostgreSQL storage beyond the conformance kit: migrations when instances start together,
// bounded retries of serialization failures, errors the work swallows, LIKE escaping and null
// ordering against the memory storage, the race suite and the idempotency essentials.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrations, postgresStorage, SCHEMA_VERSION } from '../../adapters/postgres.js'
import { memoryStorage, type Storage } from '../../src/index.js'
import { dueAt } from '../../src/domain/due.js'
import { campaign, commission, integration, link } from '../../src/storage/sample-records.js'
import { affiliate } from '../../src/storage/sample-records.js'
import { campaignInput, setup, UNKNOWN_ID } from '../support/helpers.js'
import { raceSuite } from '../support/race-suite.js'
import { checkMigrated, olderRecords, writeOlder } from './stripe-migration.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, truncateAll, uniqueName } from '../support/services.js'

describe.skipIf(!postgresUrl)(needs('PostgreSQL storage', POSTGRES_VAR), () => {
  const schema = uniqueName('pg')
  const scratch: string[] = []
  let pool: pg.Pool
  /** A fresh schema name, dropped after the file. */
  const scratchSchema = (tag: string) => {
    const name = uniqueName(tag)
    scratch.push(name)
    return name
  }
  /** An empty storage on the file's schema. */
  const emptyStorage = async (options: { maxAttempts?: number } = {}) => {
    await truncateAll(pool, schema)
    return postgresStorage({ pool, schema, ...options })
  }

  beforeAll(async () => {
    pool = await testPool()
    await postgresStorage({ pool, schema }).ready()
  })
  afterAll(async () => {
    for (const name of [schema, ...scratch]) await dropSchema(pool, name)
    await pool.end()
  })

  describe('migrations', () => {
    it('four instances starting at once on a new schema all start, and each migration runs once', async () => {
      const name = scratchSchema('migrate')
      const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: postgresUrl, max: 1 }))
      try {
        const results = await Promise.all(pools.map((each) => postgresStorage({ pool: each, schema: name }).ready()))
        expect(results.flatMap((result) => result.applied).sort((a, b) => a - b)).toEqual(migrations.map((m) => m.version))
        const recorded = await pool.query(`SELECT version FROM "${name}".affiliate_migrations ORDER BY version`)
        expect(recorded.rows.map((row) => row.version)).toEqual(migrations.map((m) => m.version))
        // A later start finds everything done.
        expect((await postgresStorage({ pool, schema: name }).ready()).applied).toEqual([])
      } finally {
        await Promise.all(pools.map((each) => each.end()))
      }
    })

    it('uses pg_trgm for contains exactly when the server has the extension', async () => {
      const available = await pool.query("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
      const result = await postgresStorage({ pool, schema }).ready()
      expect(result.trigram).toBe((available.rowCount ?? 0) > 0)
    })

    it('migrate: false starts on a migrated schema and refuses one that is missing or behind', async () => {
      expect((await postgresStorage({ pool, schema, migrate: false }).ready()).applied).toEqual([])
      await expect(postgresStorage({ pool, schema: scratchSchema('absent'), migrate: false }).ready()).rejects.toThrow(/migrate is false/)
      const behind = scratchSchema('behind')
      await postgresStorage({ pool, schema: behind }).ready()
      await pool.query(`DELETE FROM "${behind}".affiliate_migrations WHERE version = $1`, [SCHEMA_VERSION])
      await expect(postgresStorage({ pool, schema: behind, migrate: false }).ready()).rejects.toThrow(
        new RegExp(`lacks migrations ${SCHEMA_VERSION}`),
      )
    })

    it('migration 4 makes the commissions of a version 3 schema sales, due payoutTerm days after their date', async () => {
      const name = scratchSchema('v3')
      const storage = postgresStorage({ pool, schema: name })
      const campaigns = [campaign({ payoutTerm: 30 }), campaign({ payoutTerm: 0 })]
      const dates = ['2024-01-31T10:20:30.456Z', '2023-12-31T23:59:59.999Z', '2024-02-29T00:00:00.000Z']
      const records = dates.flatMap((commissionDate) => campaigns.map((c) => commission({ campaignId: c.id, commissionDate })))
      await storage.transaction(async (tx) => {
        for (const record of campaigns) await tx.insert('campaigns', record)
        for (const record of records) await tx.insert('commissions', record)
      })
      const s = `"${name}"`
      await pool.query(`DROP TABLE ${s}.payouts;
        ALTER TABLE ${s}.commissions DROP COLUMN "kind", DROP COLUMN "dueAt", DROP COLUMN "payoutId", DROP COLUMN "refundedMinor", DROP COLUMN "reversesCommissionId";
        ALTER TABLE ${s}.campaigns DROP COLUMN "currency", DROP COLUMN "attributionWindowDays";
        DELETE FROM ${s}.affiliate_migrations WHERE version = 4;`)
      const upgraded = postgresStorage({ pool, schema: name })
      expect((await upgraded.ready()).applied).toEqual([4])
      const term = new Map(campaigns.map((c) => [c.id, c.payoutTerm]))
      for (const record of records) {
        expect(await upgraded.transaction((tx) => tx.get('commissions', record.id))).toStrictEqual({
          ...record,
          kind: 'sale',
          dueAt: dueAt(record.commissionDate, term.get(record.campaignId)!),
          payoutId: null,
          refundedMinor: 0,
          reversesCommissionId: null,
        })
      }
      expect(await upgraded.transaction((tx) => tx.get('campaigns', campaigns[1]!.id))).toStrictEqual({
        ...campaigns[1]!,
        currency: 'USD',
        attributionWindowDays: 30,
      })
    })

    it('migration 18: customers attributed, one customer per Stripe customer, commissions carrying their sale (see stripe-migration.ts)', async () => {
      const name = scratchSchema('v17')
      const records = olderRecords()
      await writeOlder(postgresStorage({ pool, schema: name }), records)
      const s = `"${name}"`
      await pool.query(`DROP INDEX ${s}.customers_workspace_stripe;
        CREATE INDEX customers_stripe ON ${s}.customers ("workspaceId", "stripeCustomerId", "createdAt", "id");
        ALTER TABLE ${s}.customers DROP COLUMN "attributedAt";
        ALTER TABLE ${s}.sales DROP COLUMN "paymentIntentId", DROP COLUMN "subscriptionId", DROP COLUMN "stripeCustomerId";
        ALTER TABLE ${s}.commissions DROP COLUMN "saleAmountMinor", DROP COLUMN "currency", DROP COLUMN "customerId", DROP COLUMN "paymentIntentId", DROP COLUMN "holdReasons";
        ALTER TABLE ${s}."providerEvents" DROP COLUMN "invoiceId", DROP COLUMN "chargeId", DROP COLUMN "paymentIntentId", DROP COLUMN "chargedMinor", DROP COLUMN "refundedMinor";
        UPDATE ${s}.customers SET "stripeCustomerId" = 'cus_dup' WHERE "id" = '${records.later.id}';
        DELETE FROM ${s}.affiliate_migrations WHERE version = 18;`)
      const upgraded = postgresStorage({ pool, schema: name })
      expect((await upgraded.ready()).applied).toEqual([18])
      await checkMigrated(upgraded, records)
    })

    it('migration 19: links get their shareUrl from their url, campaigns no beacon, integrations no key, and the promo codes table', async () => {
      const name = scratchSchema('v18')
      const place = campaign({ url: 'https://shop.example.com/landing?utm=x#top' })
      const byRef = link({
        campaignId: place.id,
        referralCode: 'ANN-2026',
        urlParameter: 'ref',
        url: 'https://shop.example.com/landing?utm=x&ref=ANN-2026#top',
      })
      const connected = integration()
      await postgresStorage({ pool, schema: name }).transaction(async (tx) => {
        await tx.insert('campaigns', place)
        await tx.insert('links', byRef)
        await tx.insert('integrations', connected)
      })
      const s = `"${name}"`
      await pool.query(`DROP TABLE ${s}."promoCodes";
        ALTER TABLE ${s}.links DROP COLUMN "shareUrl";
        ALTER TABLE ${s}.campaigns DROP COLUMN "beaconInstalled";
        ALTER TABLE ${s}.integrations DROP COLUMN "apiKey";
        DELETE FROM ${s}.affiliate_migrations WHERE version = 19;`)
      const upgraded = postgresStorage({ pool, schema: name })
      expect((await upgraded.ready()).applied).toEqual([19])
      const found = await upgraded.transaction(async (tx) => ({
        link: await tx.get('links', byRef.id),
        campaign: await tx.get('campaigns', place.id),
        integration: await tx.get('integrations', connected.id),
        codes: await tx.count('promoCodes', {}),
      }))
      expect(found).toStrictEqual({
        link: { ...byRef, shareUrl: 'https://shop.example.com/landing?utm=x&via=ANN-2026#top' },
        campaign: { ...place, beaconInstalled: false },
        integration: { ...connected, apiKey: null },
        codes: 0,
      })
    })

    it('moving the counters of a full table of rollup rows is a HOT update: no index is written (migration 10)', async () => {
      const s = `"${schema}"`
      const columns = await pool.query<{ name: string; type: string }>(
        "SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'rollups' ORDER BY ordinal_position",
        [schema],
      )
      const values = columns.rows.map(({ name, type }) => (name === 'id' ? `'row-' || i` : type === 'bigint' ? '0' : `'a-' || i`))
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        await client.query(`DELETE FROM ${s}.rollups`)
        await client.query(
          `INSERT INTO ${s}.rollups (${columns.rows.map(({ name }) => `"${name}"`).join(', ')}) SELECT ${values.join(', ')} FROM generate_series(1, 2000) AS i`,
        )
        await client.query(`UPDATE ${s}.rollups SET "pendingCount" = "pendingCount" - 1, "processingCount" = "processingCount" + 1`)
        const { rows } = await client.query(
          `SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname = 'rollups'`,
          [schema],
        )
        // With full pages (the default fillfactor) almost none of these would be HOT.
        expect(rows[0]).toEqual({ updated: '2000', hot: '2000' })
      } finally {
        await client.query('ROLLBACK')
        client.release()
      }
    })

    it('refuses a schema made by a newer version of the package', async () => {
      const newer = scratchSchema('newer')
      await postgresStorage({ pool, schema: newer }).ready()
      await pool.query(`INSERT INTO "${newer}".affiliate_migrations (version, description) VALUES ($1, 'from the future')`, [
        SCHEMA_VERSION + 1,
      ])
      await expect(postgresStorage({ pool, schema: newer }).ready()).rejects.toThrow(/newer than this affiliate-service knows/)
    })

    it('takes either a pool or a connectionString, and ends only a pool it made', async () => {
      expect(() => postgresStorage({} as never)).toThrow(/either `pool` or `connectionString`/)
      const own = postgresStorage({ connectionString: postgresUrl!, schema })
      expect(await own.transaction((tx) => tx.count('campaigns', {}))).toBeGreaterThanOrEqual(0)
      await own.close()
      expect(own.pool.ended).toBe(true)
      await expect(own.transaction((tx) => tx.count('campaigns', {}))).rejects.toThrow(/closed/)
      const borrowed = postgresStorage({ pool, schema })
      await borrowed.close()
      expect(pool.ended).toBe(false)
    })
  })

  describe('transactions', () => {
    /**
     * Two read-modify-write transactions on one row, interleaved on purpose: both read, then A
     * writes and commits, then B writes. PostgreSQL must refuse B's write (40001).
     */
    async function collide(storage: Storage) {
      const record = affiliate({ totalClicks: 0 })
      await storage.transaction((tx) => tx.insert('affiliates', record))
      let bRead!: () => void
      const bHasRead = new Promise<void>((resolve) => (bRead = resolve))
      let runsOfB = 0
      const a = storage.transaction(async (tx) => {
        const current = await tx.get('affiliates', record.id)
        await bHasRead
        await tx.update('affiliates', record.id, { totalClicks: current!.totalClicks + 1 })
      })
      const b = storage.transaction(async (tx) => {
        runsOfB++
        const current = await tx.get('affiliates', record.id)
        bRead()
        await a
        await tx.update('affiliates', record.id, { totalClicks: current!.totalClicks + 1 })
      })
      const outcome = await b.then(
        () => null,
        (error: unknown) => error,
      )
      const final = (await storage.transaction((tx) => tx.get('affiliates', record.id)))!.totalClicks
      return { outcome, runsOfB, final }
    }

    it('a serialization failure runs the work again, and the second run commits', async () => {
      const { outcome, runsOfB, final } = await collide(await emptyStorage())
      expect(outcome).toBeNull()
      expect(runsOfB).toBe(2)
      expect(final).toBe(2)
    })

    it('stops after maxAttempts and throws the serialization failure (SQLSTATE 40001)', async () => {
      const { outcome, runsOfB, final } = await collide(await emptyStorage({ maxAttempts: 1 }))
      expect(outcome).toMatchObject({ code: '40001' })
      expect(runsOfB).toBe(1)
      expect(final).toBe(1)
    })

    it('work that swallows a database error does not commit: the error is thrown and nothing is kept', async () => {
      const storage = await emptyStorage()
      const kept = campaign()
      const error = await storage
        .transaction(async (tx) => {
          await tx.insert('campaigns', kept)
          // Not a number: PostgreSQL refuses it and aborts the transaction.
          await tx.insert('campaigns', campaign({ amountMinor: 'lots' as never })).catch(() => undefined)
          return 'resolved anyway'
        })
        .catch((e: unknown) => e)
      expect(error).toMatchObject({ code: '22P02' })
      expect(await storage.transaction((tx) => tx.get('campaigns', kept.id))).toBeNull()
    })

    it('a unique violation undoes only its own statement, even with writes sent alongside it', async () => {
      const storage = await emptyStorage()
      const holder = commission({ invoiceId: 'in_taken' })
      const mover = commission({ invoiceId: 'in_free' })
      await storage.transaction(async (tx) => {
        await tx.insert('commissions', holder)
        await tx.insert('commissions', mover)
      })
      const other = campaign()
      const outcomes = await storage.transaction((tx) =>
        Promise.allSettled([
          tx.update('commissions', mover.id, { invoiceId: 'in_taken' }),
          // Sent while the update's savepoint is open: it must not be rolled back with it.
          Promise.resolve().then(() => tx.insert('campaigns', other)),
        ]),
      )
      expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: { constraint: 'commissions_workspace_invoice' } })
      expect(outcomes[1]).toMatchObject({ status: 'fulfilled' })
      expect(await storage.transaction((tx) => tx.get('campaigns', other.id))).toStrictEqual(other)
      expect((await storage.transaction((tx) => tx.get('commissions', mover.id)))!.invoiceId).toBe('in_free')
    })

    it('matches the memory storage: `contains` takes %, _, \\ and quotes literally; nulls sort first ascending, last descending', async () => {
      const names = ['100% off', '100 off', 'a_b', 'axb', 'back\\slash', "O'Brien", 'plain']
      const campaigns = names.map((campaignName) => campaign({ campaignName }))
      const commissions = [
        commission({ invoiceId: 'in_2', chargeId: null }),
        commission({ invoiceId: null, chargeId: 'ch_1' }),
        commission({ invoiceId: 'in_1', chargeId: null }),
        commission({ invoiceId: null, chargeId: 'ch_2' }),
      ]
      const answers = async (storage: Storage) => {
        await storage.transaction(async (tx) => {
          for (const record of campaigns) await tx.insert('campaigns', record)
          for (const record of commissions) await tx.insert('commissions', record)
        })
        return storage.transaction(async (tx) => {
          const out: unknown[] = []
          for (const term of ['%', '_', '\\', "'", '0%', 'A_B', '%off']) {
            out.push(
              (await tx.find('campaigns', { contains: term, orderBy: { field: 'campaignName', direction: 'ASC' } })).map(
                (c) => c.campaignName,
              ),
            )
          }
          for (const field of ['invoiceId', 'chargeId'] as const) {
            for (const direction of ['ASC', 'DESC'] as const) {
              out.push((await tx.find('commissions', { orderBy: { field, direction } })).map((c) => c[field]))
            }
          }
          return out
        })
      }
      const expected = await answers(memoryStorage())
      expect(expected[0]).toEqual(['100% off'])
      expect(expected[7]).toEqual([null, null, 'in_1', 'in_2'])
      expect(await answers(await emptyStorage())).toEqual(expected)
    })
  })

  raceSuite('PostgreSQL storage', () => emptyStorage())

  describe('idempotency across instances sharing the database', () => {
    const post = (key: string, body: unknown = campaignInput()) => ({ body, headers: { 'idempotency-key': key } })
    /** Two services, each with its own pool: two instances as far as PostgreSQL can tell. */
    async function twoInstances() {
      await truncateAll(pool, schema)
      const pools = [new pg.Pool({ connectionString: postgresUrl, max: 5 }), new pg.Pool({ connectionString: postgresUrl, max: 5 })]
      const storages = pools.map((each) => postgresStorage({ pool: each, schema }))
      return {
        a: setup({ storage: storages[0] }),
        b: setup({ storage: storages[1] }),
        count: () => storages[0]!.transaction((tx) => tx.count('campaigns', {})),
        close: () => Promise.all(pools.map((each) => each.end())),
      }
    }

    it('a retry sent to the other instance replays the first answer and changes nothing', async () => {
      const { a, b, count, close } = await twoInstances()
      try {
        const first = await a.call('POST', '/campaigns', post('cross-instance'))
        expect(first.status).toBe(201)
        const again = await b.call('POST', '/campaigns', post('cross-instance'))
        expect(again.status).toBe(201)
        expect(again.headers.get('idempotent-replayed')).toBe('true')
        expect(again.text).toBe(first.text)
        const other = await b.call('POST', '/campaigns', post('cross-instance', campaignInput({ campaignName: 'Other' })))
        expect(other.status).toBe(422)
        expect(await count()).toBe(1)
      } finally {
        await close()
      }
    })

    it('parallel retries spread over both instances make exactly one record', async () => {
      const { a, b, count, close } = await twoInstances()
      try {
        const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).call('POST', '/campaigns', post('burst'))))
        const fresh = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null)
        expect(fresh).toHaveLength(1)
        for (const r of responses) expect([201, 409]).toContain(r.status)
        for (const r of responses.filter((r) => r.status === 201)) expect(r.text).toBe(fresh[0]!.text)
        expect(await count()).toBe(1)
      } finally {
        await close()
      }
    })

    it('a refusal earned by the request is kept and replayed', async () => {
      const { a, b, close } = await twoInstances()
      try {
        const body = { email: 'a@example.com', campaignId: UNKNOWN_ID }
        expect((await a.call('POST', '/affiliates', post('refused', body))).status).toBe(404)
        const replayed = await b.call('POST', '/affiliates', post('refused', body))
        expect(replayed.status).toBe(404)
        expect(replayed.headers.get('idempotent-replayed')).toBe('true')
      } finally {
        await close()
      }
    })
  })
})
