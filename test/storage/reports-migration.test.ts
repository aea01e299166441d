// The migrations that add rollups (sql.js 7, PostgreSQL 5) fill them from the records an older file
// or schema already holds: the rows they make are the rows the writes themselves kept.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { sqlJsStorage, type Storage } from '../../src/index.js'
import { ROLLUP_COUNTERS } from '../../src/domain/descriptions/service.js'
import { setup, WS_A } from '../support/helpers.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { rewindFile } from '../support/sqljs-rewind.js'

const HOUR = 3_600_000

/** A history touching every figure, written through the typed API; opens and clicks in the hour their affiliate was made. */
async function writeHistory(storage: Storage): Promise<void> {
  const { api, clock } = setup({ storage })
  clock.set(Date.UTC(2026, 2, 1, 9, 10))
  const campaign = await api.campaigns.create({
    campaignName: 'Spring',
    workspaceId: WS_A,
    commissionType: 'fixed',
    amount: 5,
    url: 'https://shop.example.com',
  })
  const ann = await api.affiliates.create({
    email: 'ann@example.com',
    campaignId: campaign.id,
    payoutMethod: 'PAYPAL',
    payoutEmail: 'ann-pay@example.com',
  })
  const bob = await api.affiliates.create({ email: 'bob@example.com', campaignId: campaign.id })
  const link = await api.links.create({ affiliateId: ann.id, referralCode: 'ANN-1' })
  await api.links.track({ referralCode: link.referralCode, event: 'click' })
  await api.links.track({ referralCode: link.referralCode, event: 'click' })
  await api.links.track({ referralCode: link.referralCode, event: 'open' })
  const sale = (affiliateId: string, referredUser: string, amount: string, commissionDate: string) =>
    api.commissions.create({
      campaignId: campaign.id,
      affiliateId,
      referredUser,
      amount,
      commissionDate,
      ...(affiliateId === ann.id ? { referralCode: 'ANN-1' } : {}),
    })
  const paid = await sale(ann.id, 'x@example.com', '40.00', '2026-02-27T23:30:00.000Z')
  await sale(ann.id, 'x@example.com', '15.00', '2026-02-26T10:00:00.000Z')
  const refunded = await sale(ann.id, 'y@example.com', '12.00', '2026-02-28T01:00:00.000Z')
  await api.commissions.refund(refunded.commissionId, { amount: '12.00' })
  const moved = await sale(bob.id, 'z@example.com', '7.50', '2026-02-28T05:00:00.000Z')
  await api.commissions.update(moved.commissionId, { commissionDate: '2026-02-20T05:00:00.000Z', status: 'processing' })
  const gone = await sale(bob.id, 'w@example.com', '3.00', '2026-02-21T05:00:00.000Z')
  await api.commissions.delete(gone.commissionId)
  await api.referredUsers.create({ referredTo: 'v@example.com', affiliateId: bob.id })
  clock.advance(40 * 24 * HOUR)
  const run = await api.payouts.run({ workspaceId: WS_A })
  await api.payouts.update(run.payouts[0]!.payoutId, { status: 'processing' })
  await api.payouts.update(run.payouts[0]!.payoutId, { status: 'paid' })
  await api.commissions.refund(paid.commissionId, { amount: '10.00' })
}

/** Every rollup row with a figure other than zero, by id. */
async function rollupRows(storage: Storage) {
  const rows = await storage.transaction((tx) => tx.find('rollups', { orderBy: { field: 'id', direction: 'ASC' } }))
  return rows.filter((row) => ROLLUP_COUNTERS.some((counter) => row[counter] !== 0))
}

describe('the rollups migration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-rollups-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('sql.js 7 rolls up what a version 6 file holds, as the writes did', async () => {
    const file = join(dir, 'db.sqlite')
    const first = sqlJsStorage({ persist: fileJournal(file) })
    await writeHistory(first)
    const kept = await rollupRows(first)
    expect(kept.length).toBeGreaterThan(10)
    await first.close()
    await rewindFile(file, 6)
    const upgraded = sqlJsStorage({ persist: fileJournal(file) })
    expect(await rollupRows(upgraded)).toStrictEqual(kept)
    await upgraded.close()
  })

  describe.skipIf(!postgresUrl)(needs('PostgreSQL', POSTGRES_VAR), () => {
    let pool: pg.Pool
    const schema = uniqueName('rollups')
    beforeAll(async () => {
      pool = await testPool()
    })
    // biome-ignore lint/suspicious/noDuplicateTestHooks: this afterAll is the inner describe's (describe.skipIf(...)(...))
    afterAll(async () => {
      await dropSchema(pool, schema)
      await pool.end()
    })

    it('PostgreSQL 5 rolls up what a version 4 schema holds, as the writes did', async () => {
      const first = postgresStorage({ pool, schema })
      await writeHistory(first)
      const kept = await rollupRows(first)
      expect(kept.length).toBeGreaterThan(10)
      // 20 adds the rollups' salesMinor and 23 the held and voided figures: the table made again by 5 gets them again.
      await pool.query(`DROP TABLE "${schema}".rollups; DELETE FROM "${schema}".affiliate_migrations WHERE version IN (5, 20, 23);`)
      const upgraded = postgresStorage({ pool, schema })
      expect((await upgraded.ready()).applied).toEqual([5, 20, 23])
      expect(await rollupRows(upgraded)).toStrictEqual(kept)
    })
  })
})
