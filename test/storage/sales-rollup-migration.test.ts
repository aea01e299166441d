import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { postgresStorage } from '../../adapters/postgres.js'
import type { Storage } from '../../src/index.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { setup, WS_A } from '../support/helpers.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { rewindFile } from '../support/sqljs-rewind.js'

// The migration adding the referred revenue (sql.js 21, PostgreSQL 20): a file or schema written
// before it gets each rollup row's sales from the sales' commissions, the figures the writes
// themselves keep today, at each level, by the hour and by the day.

const salesOf = async (storage: Storage) =>
  Object.fromEntries(
    (await storage.transaction((tx) => tx.find('rollups', { orderBy: { field: 'id', direction: 'ASC' } }), { readOnly: true })).map(
      (row) => [row.id, row.salesMinor],
    ),
  )

/** Sales of two campaigns across two days and the hours of one, and a commission by hand; answers the rows' sales as written. */
async function writeSales(storage: Storage): Promise<Record<string, number>> {
  const { api, clock } = setup({ storage })
  clock.set(Date.UTC(2026, 2, 1, 9))
  const campaign = await api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS_A,
    commissionType: 'percentage',
    amount: 10,
    url: 'https://shop.example.com',
  })
  const other = await api.campaigns.create({
    campaignName: 'Autumn',
    workspaceId: WS_A,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://shop.example.com',
  })
  const people = []
  for (const [i, c] of [campaign, other, campaign].entries()) {
    const affiliate = await api.affiliates.create({ email: `a${i}@example.com`, campaignId: c.id })
    await api.links.create({ affiliateId: affiliate.id, referralCode: `CODE-${i}` })
    people.push(affiliate)
  }
  const sale = (n: number, code: string, amount: string, paidAt: string) =>
    api.conversions.sale({
      workspaceId: WS_A,
      referralCode: code,
      externalId: `user-${n}`,
      email: `u${n}@example.com`,
      amount,
      currency: 'USD',
      invoiceId: `in_${n}`,
      paidAt,
    })
  await sale(1, 'CODE-0', '100.00', '2026-03-01T09:30:00.000Z')
  await sale(2, 'CODE-0', '40.00', '2026-03-01T09:45:00.000Z')
  await sale(3, 'CODE-1', '25.00', '2026-03-01T23:10:00.000Z')
  await sale(4, 'CODE-2', '60.00', '2026-03-02T00:05:00.000Z')
  await api.commissions.create({
    campaignId: campaign.id,
    affiliateId: people[0]!.id,
    referredUser: 'z@example.com',
    amount: '3.00',
    commissionDate: '2026-03-01T09:00:00.000Z',
  })
  const written = await salesOf(storage)
  expect(written[`${WS_A}|*|*|2026-03-01`]).toBe(165_00)
  expect(written[`${WS_A}|${campaign.id}|*|2026-03-01T09:00:00.000Z`]).toBe(140_00)
  expect(written[`${WS_A}|*|${people[2]!.id}|2026-03-02`]).toBe(60_00)
  return written
}

describe('the referred revenue migration', () => {
  it('sql.js 21 fills a version 20 file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'affiliate-migration-21-'))
    try {
      const file = join(dir, 'db.sqlite')
      const first = sqlJsStorage({ persist: fileJournal(file) })
      const written = await writeSales(first)
      await first.close()
      await rewindFile(file, 20)
      const upgraded = sqlJsStorage({ persist: fileJournal(file) })
      expect(await salesOf(upgraded)).toEqual(written)
      await upgraded.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  describe.skipIf(!postgresUrl)(needs('PostgreSQL', POSTGRES_VAR), () => {
    let pool: pg.Pool
    const schema = uniqueName('sales_rollup')
    beforeAll(async () => {
      pool = await testPool()
    })
    afterAll(async () => {
      await dropSchema(pool, schema)
      await pool.end()
    })

    it('PostgreSQL 20 fills a version 19 schema', async () => {
      const first = postgresStorage({ pool, schema })
      const written = await writeSales(first)
      await pool.query(
        `ALTER TABLE "${schema}".rollups DROP COLUMN "salesMinor"; DELETE FROM "${schema}".affiliate_migrations WHERE version = 20;`,
      )
      const upgraded = postgresStorage({ pool, schema })
      expect((await upgraded.ready()).applied).toEqual([20])
      expect(await salesOf(upgraded)).toEqual(written)
    })
  })
})
