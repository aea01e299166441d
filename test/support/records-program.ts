// A program's records in a storage, as the service writes them, for the export and import tests:
// two workspaces of campaigns, affiliates, links, commissions, a payout run, webhooks and their
// events and deliveries (populateBoth), clicks through the redirect, a lead, a sale and a refund,
// an idempotent create, a stored API key; then one record of every model with every kind of value
// (nulls, booleans, lists, large and negative integers, text beyond ASCII). Time moves between
// steps, and some records share a createdAt, as they do in a real program.
import { expect } from 'vitest'
import { storageKeyStore, type Storage } from '../../src/index.js'
import { modelNames } from '../../src/storage/models.js'
import * as samples from '../../src/storage/sample-records.js'
import type { ModelName, RecordOf } from '../../src/storage/types.js'
import { populateBoth } from './fixtures.js'
import { setup, WS_A } from './helpers.js'

const HOUR = 3_600_000

/** Values of every kind in the models' sample records, beyond their defaults. */
const kinds: { [M in ModelName]?: Partial<RecordOf<M>> } = {
  campaigns: { allowedUrlParameters: ['a', 'b,c', '"q"', '日本'], amountMinor: 2 ** 40 + 1, payoutTerm: -45 },
  affiliates: { payoutMethod: 'WISE', details: 'IBAN …', notes: 'line\nbreak\ttab \u2028' },
  commissions: { remarks: null, name: null, chargeId: null, isSelfReferral: true },
  apiKeys: { revokedAt: samples.at(5) },
  webhooks: { previousSecrets: [`${samples.at(9)} whsec_old`] },
  sequences: { value: 7 },
  settings: { value: 'ö-value "quoted" \\ back' },
  sales: { amountMinor: Number.MAX_SAFE_INTEGER },
  providerEvents: { reason: 'ü', status: 'ignored' },
}

/** Fills `storage` with a program's records (see the top of this file); answers the service's clock. */
export async function fillProgram(storage: Storage) {
  const t = setup({ storage })
  const { a } = await populateBoth(t.call)
  for (const [i, agent] of ['Chrome/131.0', 'Firefox/133.0', 'Safari/605.1', 'Chrome/131.0'].entries()) {
    t.clock.advance(i === 3 ? 0 : HOUR)
    const response = await t.service.fetch(
      new Request(`http://test.local/api/v1/r/${a.link.referralCode}`, {
        redirect: 'manual',
        headers: { 'user-agent': `Mozilla/5.0 (X11; Linux x86_64) ${agent}` },
      }),
    )
    expect(response.status).toBe(302)
  }
  await t.service.flush()
  t.clock.advance(HOUR)
  const body = { workspaceId: WS_A, externalId: 'user-1', email: 'Buyer@Example.com', referralCode: a.link.referralCode }
  expect((await t.call('POST', '/conversions/lead', { body })).status).toBe(201)
  const sale = { workspaceId: WS_A, externalId: 'user-1', amount: '100.00', currency: 'USD', invoiceId: 'in_1' }
  expect((await t.call('POST', '/conversions/sale', { body: sale })).status).toBe(201)
  t.clock.advance(HOUR)
  expect(
    (await t.call('POST', '/conversions/refund', { body: { workspaceId: WS_A, invoiceId: 'in_1', amount: '40.00' } })).status,
  ).toBeLessThan(300)
  const idempotent = {
    body: { campaignName: 'Once', workspaceId: WS_A, commissionType: 'fixed', amount: 5, url: 'https://shop.example.com/' },
    headers: { 'idempotency-key': 'create-once' },
  }
  expect((await t.call('POST', '/campaigns', idempotent)).status).toBe(201)
  await storageKeyStore(storage).create({ workspaceIds: [WS_A], label: 'stored key' })
  await storage.transaction(async (tx) => {
    // One sample of every model but events (the service's own events hold the sequence's numbers).
    for (const model of modelNames) {
      if (model === 'events') continue
      const make = samples.sampleOf[model] as (overrides?: Partial<RecordOf<ModelName>>) => RecordOf<ModelName>
      await tx.insert(model, make(kinds[model] as Partial<RecordOf<ModelName>> | undefined))
    }
  })
  const empty: ModelName[] = []
  for (const model of modelNames) if ((await storage.transaction((tx) => tx.count(model, {}))) === 0) empty.push(model)
  // Every model holds records, so every model's lines are checked.
  expect(empty).toEqual([])
  return t
}
