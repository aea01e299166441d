import { describe, expect, it } from 'vitest'
import { snapshot } from '../support/fixtures.js'
import { createAffiliateClient } from '../../src/client/index.js'
import { apiCampaignInput, expectValidation, fieldError, KEY_A, KEY_B, setup, UNKNOWN_ID, WS_A } from '../support/helpers.js'

// GET /customers/list, GET|PUT|DELETE /customers (SPEC wave 3, "Customers and conversions").

async function withCustomer() {
  const t = setup()
  const campaign = await t.api.campaigns.create(apiCampaignInput())
  const ann = await t.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const bob = await t.api.affiliates.create({ email: 'bob@example.com', campaignId: campaign.id })
  await t.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-2026' })
  const customer = await t.api.conversions.lead({
    workspaceId: WS_A,
    externalId: 'user-1',
    email: 'Buyer@Example.com',
    name: 'Buyer',
    referralCode: 'ANN-2026',
  })
  const signups = async () => [(await t.api.affiliates.get(ann.id)).totalSignups, (await t.api.affiliates.get(bob.id)).totalSignups]
  return { ...t, campaign, ann, bob, customer, signups }
}

describe('customers', () => {
  it('get and list (filtered by affiliate and campaign, searched by e-mail); another workspace sees none', async () => {
    const t = await withCustomer()
    await t.api.conversions.lead({ workspaceId: WS_A, externalId: 'user-2', email: 'other@example.com', affiliateId: t.bob.id })
    expect((await t.call('GET', `/customers?customerId=${t.customer.customerId}`)).body.data).toEqual(t.customer)
    const list = (await t.call('GET', `/customers/list?affiliateId=${t.ann.id}`)).body.data
    expect(list.items).toEqual([t.customer])
    expect(list.pagination).toEqual({ page: 1, limit: 10, total: 1, totalPages: 1 })
    expect((await t.api.customers.list({ campaignId: t.campaign.id })).pagination.total).toBe(2)
    expect((await t.api.customers.list({ contains: 'BUYER@' })).items.map((c) => c.externalId)).toEqual(['user-1'])
    expect((await t.call('GET', `/customers?customerId=${t.customer.customerId}`, { key: KEY_B })).status).toBe(404)
    expect((await t.call('GET', '/customers/list', { key: KEY_B })).body.data.items).toEqual([])
    expect((await t.call('GET', `/customers?customerId=${UNKNOWN_ID}`)).status).toBe(404)
  })

  it('PUT moves it to another affiliate (its future sales; its signup moves too) and writes customer.updated', async () => {
    const t = await withCustomer()
    const first = await t.api.conversions.sale({ workspaceId: WS_A, externalId: 'user-1', amount: 50, currency: 'USD', invoiceId: 'in_1' })
    expect(await t.signups()).toEqual([1, 0])
    const moved = await t.call('PUT', `/customers?customerId=${t.customer.customerId}`, { body: { affiliateId: t.bob.id, name: null } })
    expect(moved.status).toBe(200)
    expect(moved.body.data).toMatchObject({ affiliateId: t.bob.id, linkId: null, name: null, email: 'Buyer@Example.com' })
    // Ann keeps the signup through the commission she earned; Bob gains one.
    expect(await t.signups()).toEqual([1, 1])
    const next = await t.api.conversions.sale({ workspaceId: WS_A, externalId: 'user-1', amount: 50, currency: 'USD', invoiceId: 'in_2' })
    expect(next.commission!.affiliateId).toBe(t.bob.id)
    expect((await t.api.commissions.get(first.commission!.commissionId)).affiliateId).toBe(t.ann.id)
    const events = await t.api.events.list({ type: 'customer.updated' })
    expect(events.items).toHaveLength(1)
    // Setting what is there changes nothing and writes no event.
    const before = await snapshot(t.storage)
    await t.api.customers.update(t.customer.customerId, { affiliateId: t.bob.id })
    expect(await snapshot(t.storage)).toBe(before)
  })

  it('PUT refuses read-only and unknown fields with 400 naming them, and an empty body', async () => {
    const t = await withCustomer()
    const put = (body: unknown) => t.call('PUT', `/customers?customerId=${t.customer.customerId}`, { body })
    expectValidation(await put({ externalId: 'x', salesCount: 3, shoeSize: 9 }), [
      fieldError('externalId', 'externalId is read-only'),
      fieldError('salesCount', 'salesCount is read-only'),
      fieldError('shoeSize', 'shoeSize is not a known field'),
    ])
    expect((await put({})).status).toBe(400)
    expect((await put({ affiliateId: UNKNOWN_ID })).status).toBe(404)
  })

  it('DELETE forgets the person (e-mail, name, externalId) and keeps every commission', async () => {
    const t = await withCustomer()
    const sale = await t.api.conversions.sale({ workspaceId: WS_A, externalId: 'user-1', amount: 50, currency: 'USD', invoiceId: 'in_1' })
    const deleted = await t.call('DELETE', `/customers?customerId=${t.customer.customerId}`)
    expect(deleted.body).toEqual({ status: 200, message: 'Customer deleted successfully', data: { id: t.customer.customerId } })
    const forgotten = await t.api.customers.get(t.customer.customerId)
    expect(forgotten).toMatchObject({ email: '', name: null, externalId: t.customer.customerId, salesCount: 1, affiliateId: t.ann.id })
    // Its commission keeps its money and names the erased address instead of the person.
    expect(await t.api.commissions.get(sale.commission!.commissionId)).toEqual({
      ...sale.commission,
      referredUser: `${t.customer.customerId}@erased.invalid`,
    })
    expect((await t.api.affiliates.get(t.ann.id)).totalEarnings).toBe(10)
    const [event] = (await t.api.events.list({ type: 'customer.deleted' })).items
    expect(event!.data).toMatchObject({ customerId: t.customer.customerId, email: '' })
    // The host's id is free again: the same person signing up anew is a new customer.
    const again = await t.call('POST', '/conversions/lead', {
      body: { workspaceId: WS_A, externalId: 'user-1', email: 'buyer@example.com', affiliateId: t.bob.id },
    })
    expect(again.status).toBe(201)
    expect(again.body.data.customerId).not.toBe(t.customer.customerId)
  })
})

describe('erasure forgets the person everywhere (SPEC wave 4)', () => {
  it('nothing the API answers afterwards holds the e-mail, name or externalId: replayed answers, commissions, events, exports; money and signups stay', async () => {
    const t = setup()
    const campaign = await t.api.campaigns.create(apiCampaignInput({ payoutTerm: 0 }))
    const ann = await t.api.affiliates.create({
      email: 'ann@example.com',
      campaignId: campaign.id,
      payoutMethod: 'PAYPAL',
      payoutEmail: 'ann.pay@example.com',
    })
    await t.api.links.create({ affiliateId: ann.id, referralCode: 'ANN-2026' })
    const keyed = (key: string) => ({ headers: { 'idempotency-key': key } })
    const lead = {
      workspaceId: WS_A,
      externalId: 'host-user-7781',
      email: 'Zoe.Person@Example.com',
      name: 'Zoe Person',
      referralCode: 'ANN-2026',
    }
    const sale = { workspaceId: WS_A, externalId: 'host-user-7781', amount: '80.00', currency: 'USD', invoiceId: 'in_z1' }
    const refund = { workspaceId: WS_A, invoiceId: 'in_z1', amount: '20.00', refundId: 're_z1' }
    const customerId = (await t.call('POST', '/conversions/lead', { body: lead, ...keyed('k-lead') })).body.data.customerId as string
    await t.call('POST', '/conversions/sale', { body: sale, ...keyed('k-sale') })
    await t.call('POST', '/conversions/sale', { body: { ...sale, invoiceId: 'in_z2' } })
    // A paid sale refunded: its clawback names the person too.
    const [payout] = (await t.api.payouts.run({ workspaceId: WS_A })).payouts
    await t.api.payouts.update(payout!.payoutId, { status: 'processing' })
    await t.api.payouts.update(payout!.payoutId, { status: 'paid' })
    await t.call('POST', '/conversions/refund', { body: refund, ...keyed('k-refund') })
    const period = { workspaceId: WS_A, from: '2025-12-01T00:00:00.000Z', to: '2026-02-01T00:00:00.000Z' }
    const before = {
      ann: await t.api.affiliates.get(ann.id),
      balance: await t.api.affiliates.balance(ann.id),
      report: await t.api.reports.summary(period),
    }
    const person = /zoe|7781/i
    expect(JSON.stringify((await t.api.commissions.list({ limit: 100 })).items)).toMatch(person)

    expect((await t.call('DELETE', `/customers?customerId=${customerId}`)).status).toBe(200)

    const answers = [
      await t.call('POST', '/conversions/lead', { body: lead, ...keyed('k-lead') }),
      await t.call('POST', '/conversions/sale', { body: sale, ...keyed('k-sale') }),
      await t.call('POST', '/conversions/refund', { body: refund, ...keyed('k-refund') }),
      await t.call('POST', '/conversions/sale', { body: { ...sale, invoiceId: 'in_z2' } }),
      await t.call('POST', '/conversions/refund', { body: refund }),
    ]
    expect(answers.map((a) => a.status)).toEqual([201, 201, 200, 200, 200])
    expect(answers.slice(0, 3).map((a) => a.headers.get('idempotent-replayed'))).toEqual(['true', 'true', 'true'])
    for (const answer of answers) expect(answer.text).not.toMatch(person)
    const commissions = (await t.api.commissions.list({ limit: 100 })).items
    expect(commissions.map((c) => [c.kind, c.referredUser, c.customerId])).toEqual(
      expect.arrayContaining([
        ['sale', `${customerId}@erased.invalid`, customerId],
        ['clawback', `${customerId}@erased.invalid`, customerId],
      ]),
    )
    expect(commissions).toHaveLength(3)
    const everything = [
      (await t.call('GET', '/events/list?limit=100')).text,
      (await t.call('GET', '/referred-users/list?limit=100')).text,
      (await t.call('GET', `/customers?customerId=${customerId}`)).text,
      await (
        await t.service.fetch(
          new Request(`http://test.local/api/v1/exports/commissions?workspaceId=${WS_A}`, { headers: { 'x-auth-service': KEY_A } }),
        )
      ).text(),
      JSON.stringify(
        await t.storage.transaction((tx) =>
          Promise.all([tx.find('sales', {}), tx.find('saleRefunds', {}), tx.find('idempotency', {}), tx.find('commissions', {})]),
        ),
      ),
    ]
    for (const text of everything) expect(text).not.toMatch(person)
    // The money stays where it was; the erased address counts as the one signup the person was.
    expect(await t.api.affiliates.get(ann.id)).toMatchObject({ totalEarnings: before.ann.totalEarnings, totalSignups: 1 })
    expect(await t.api.affiliates.balance(ann.id)).toEqual(before.balance)
    expect(await t.api.reports.summary(period)).toEqual(before.report)
    expect(before.report).toMatchObject({ signups: 1 })
    expect(
      (await t.api.events.list({ type: 'commission.updated' })).items.map((e) => (e.data as { referredUser: string }).referredUser),
    ).toEqual(Array(3).fill(`${customerId}@erased.invalid`))
  })

  it('an affiliate with customers cannot be deleted (422 has_customers), even once they are forgotten; ban it instead', async () => {
    const t = await withCustomer()
    const refused = await t.call('DELETE', `/affiliates?affiliateId=${t.ann.id}`)
    expect(refused.body).toEqual({
      status: 422,
      code: 'has_customers',
      message: 'This affiliate has customers and cannot be deleted; ban it instead',
    })
    await t.api.customers.delete(t.customer.customerId)
    expect((await t.call('DELETE', `/affiliates?affiliateId=${t.ann.id}`)).body.code).toBe('has_customers')
    expect((await t.call('DELETE', `/affiliates?affiliateId=${t.bob.id}`)).status).toBe(200)
    expect((await t.call('PUT', `/affiliates?affiliateId=${t.ann.id}`, { body: { isBanned: true } })).status).toBe(200)
  })
})

describe('the HTTP client', () => {
  it("has the conversions and customers namespaces, with the typed API's shapes", async () => {
    const t = await withCustomer()
    const client = createAffiliateClient({
      baseUrl: 'http://test.local/api/v1',
      apiKey: KEY_A,
      fetch: (request) => t.service.fetch(request),
    })
    const sale = await client.conversions.sale({
      workspaceId: WS_A,
      externalId: 'user-1',
      amount: '12.50',
      currency: 'USD',
      invoiceId: 'in_client',
    })
    expect(sale).toMatchObject({ commission: { amount: '2.50' }, skipped: null })
    expect(
      await client.conversions.sale({ workspaceId: WS_A, externalId: 'user-1', amount: '12.50', currency: 'USD', invoiceId: 'in_client' }),
    ).toEqual(sale)
    expect(await client.customers.get(t.customer.customerId)).toEqual(sale.customer)
    expect((await client.customers.list({ affiliateId: t.ann.id })).items).toEqual([sale.customer])
    expect(await client.conversions.refund({ workspaceId: WS_A, invoiceId: 'in_client' })).toMatchObject({
      commission: { amount: '0.00', status: 'refunded' },
      clawback: null,
    })
    await expect(client.customers.update(t.customer.customerId, { affiliateId: UNKNOWN_ID })).rejects.toMatchObject({ status: 404 })
    expect(await client.customers.delete(t.customer.customerId)).toEqual({ id: t.customer.customerId })
  })
})
