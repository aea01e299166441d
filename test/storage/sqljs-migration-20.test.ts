import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import type { Storage } from '../../src/index.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { setup, WS_A } from '../support/helpers.js'
import { rewindFile } from '../support/sqljs-rewind.js'

// sql.js migration 20 (the referred revenue): a file written by version 19 gets each rollup row's
// sales from the sales' commissions, the figures the writes themselves keep today.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-migration-20-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const salesOf = async (storage: Storage) =>
  Object.fromEntries(
    (await storage.transaction((tx) => tx.find('rollups', { orderBy: { field: 'id', direction: 'ASC' } }), { readOnly: true })).map((row) => [row.id, row.salesMinor]),
  )

it('a version 19 file: every rollup row holds the sales dated in it, at each level, by the hour and by the day', async () => {
  const file = join(dir, 'db.sqlite')
  const first = sqlJsStorage({ persist: fileJournal(file) })
  const { api, clock } = setup({ storage: first })
  clock.set(Date.UTC(2026, 2, 1, 9))
  const campaign = await api.campaigns.create({ campaignName: 'Spring', workspaceId: WS_A, commissionType: 'percentage', amount: 10, url: 'https://shop.example.com' })
  const other = await api.campaigns.create({ campaignName: 'Autumn', workspaceId: WS_A, commissionType: 'fixed', amount: 5, url: 'https://shop.example.com' })
  for (const [i, c] of [campaign, other, campaign].entries()) {
    const affiliate = await api.affiliates.create({ email: `a${i}@example.com`, campaignId: c.id })
    await api.links.create({ affiliateId: affiliate.id, referralCode: `CODE-${i}` })
  }
  const sale = (n: number, code: string, amount: string, paidAt: string) =>
    api.conversions.sale({ workspaceId: WS_A, referralCode: code, externalId: `user-${n}`, email: `u${n}@example.com`, amount, currency: 'USD', invoiceId: `in_${n}`, paidAt })
  await sale(1, 'CODE-0', '100.00', '2026-03-01T09:30:00.000Z')
  await sale(2, 'CODE-0', '40.00', '2026-03-01T09:45:00.000Z')
  await sale(3, 'CODE-1', '25.00', '2026-03-01T23:10:00.000Z')
  await sale(4, 'CODE-2', '60.00', '2026-03-02T00:05:00.000Z')
  // A commission by hand: no sale, no revenue.
  const [hand] = (await api.affiliates.list({ workspaceId: WS_A, limit: 1 })).items
  await api.commissions.create({ campaignId: hand!.campaignId, affiliateId: hand!.id, referredUser: 'z@example.com', amount: '3.00', commissionDate: '2026-03-01T09:00:00.000Z' })
  const written = await salesOf(first)
  expect(written[`${WS_A}|*|*|2026-03-01`]).toBe(165_00)
  expect(written[`${WS_A}|${campaign.id}|*|2026-03-01T09:00:00.000Z`]).toBe(140_00)
  expect(written[`${WS_A}|*|*|2026-03-02`]).toBe(60_00)
  await first.close()
  await rewindFile(file, 19)
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  try {
    expect(await salesOf(storage)).toEqual(written)
  } finally {
    await storage.close()
  }
})
