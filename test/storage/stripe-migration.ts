import { expect } from 'vitest'
import type { Storage } from '../../src/index.js'
import { at, campaign, click, commission, customer, sale } from '../../src/storage/sample-records.js'

// What the migration for Stripe as it sends events today (sql.js 19, PostgreSQL 18) does to the
// records an older version wrote, shared by the two storages' tests: `write` stores them, the test
// takes the database back to before the migration, and `check` reads them after it ran again.

/** Records as the older version kept them (the new fields are whatever the migration leaves). */
export function olderRecords() {
  const program = campaign({ currency: 'GBP' })
  const clicked = click({ createdAt: at(-500) })
  // Two customers of one Stripe customer (the older version allowed it): the one made first keeps it.
  const first = customer({
    campaignId: program.id,
    stripeCustomerId: 'cus_dup',
    clickId: clicked.id,
    createdAt: at(10),
    firstSaleAt: at(20),
  })
  const later = customer({ campaignId: program.id, stripeCustomerId: 'cus_dup', clickId: null, createdAt: at(11), firstSaleAt: at(5) })
  const madeBySale = customer({ campaignId: program.id, stripeCustomerId: 'cus_solo', clickId: null, createdAt: at(30), firstSaleAt: null })
  const earned = commission({
    campaignId: program.id,
    stripeSubscriptionId: 'sub_1',
    invoiceId: 'in_1',
    status: 'paid',
    refundedMinor: 3_00,
  })
  const clawback = commission({ campaignId: program.id, kind: 'clawback', amountMinor: -3_00, reversesCommissionId: earned.id })
  const paid = sale({ customerId: first.id, commissionId: earned.id, invoiceId: 'in_1', amountMinor: 80_00 })
  return { program, clicked, first, later, madeBySale, earned, clawback, paid }
}

export async function writeOlder(storage: Storage, records: ReturnType<typeof olderRecords>): Promise<void> {
  await storage.transaction(async (tx) => {
    await tx.insert('campaigns', records.program)
    await tx.insert('clicks', records.clicked)
    // Written as the new version would, then taken back: the second duplicate goes in under another id first.
    for (const c of [records.first, { ...records.later, stripeCustomerId: 'cus_other' }, records.madeBySale])
      await tx.insert('customers', c)
    for (const c of [records.earned, records.clawback]) await tx.insert('commissions', c)
    await tx.insert('sales', records.paid)
  })
}

export async function checkMigrated(storage: Storage, records: ReturnType<typeof olderRecords>): Promise<void> {
  const read = await storage.transaction(async (tx) => ({
    first: await tx.get('customers', records.first.id),
    later: await tx.get('customers', records.later.id),
    madeBySale: await tx.get('customers', records.madeBySale.id),
    earned: await tx.get('commissions', records.earned.id),
    clawback: await tx.get('commissions', records.clawback.id),
    paid: await tx.get('sales', records.paid.id),
  }))
  // Attributed at its click, at its earliest sale, or when made, whichever came first.
  expect(read.first).toMatchObject({ stripeCustomerId: 'cus_dup', attributedAt: at(-500) })
  expect(read.later).toMatchObject({ stripeCustomerId: null, attributedAt: at(5) })
  expect(read.madeBySale).toMatchObject({ stripeCustomerId: 'cus_solo', attributedAt: at(30) })
  expect(read.earned).toMatchObject({
    currency: 'GBP',
    saleAmountMinor: 80_00,
    customerId: records.first.id,
    paymentIntentId: null,
    holdReasons: [],
  })
  expect(read.clawback).toMatchObject({ currency: 'GBP', saleAmountMinor: null, customerId: records.first.id })
  expect(read.paid).toMatchObject({ subscriptionId: 'sub_1', stripeCustomerId: 'cus_dup', paymentIntentId: null })
  // From now on the Stripe customer is bound once.
  const again = await storage
    .transaction((tx) => tx.update('customers', records.later.id, { stripeCustomerId: 'cus_dup' }))
    .catch((e: unknown) => e)
  expect(again).toMatchObject({ constraint: 'customers_workspace_stripe' })
}
