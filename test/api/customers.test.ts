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
  const customer = await t.api.conversions.lead({ workspaceId: WS_A, externalId: 'user-1', email: 'Buyer@Example.com', name: 'Buyer', referralCode: 'ANN-2026' })
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
    expect(await t.api.commissions.get(sale.commission!.commissionId)).toEqual(sale.commission)
    expect((await t.api.affiliates.get(t.ann.id)).totalEarnings).toBe(10)
    const [event] = (await t.api.events.list({ type: 'customer.deleted' })).items
    expect(event!.data).toMatchObject({ customerId: t.customer.customerId, email: '' })
    // The host's id is free again: the same person signing up anew is a new customer.
    const again = await t.call('POST', '/conversions/lead', { body: { workspaceId: WS_A, externalId: 'user-1', email: 'buyer@example.com', affiliateId: t.bob.id } })
    expect(again.status).toBe(201)
    expect(again.body.data.customerId).not.toBe(t.customer.customerId)
  })
})

describe('the HTTP client', () => {
  it('has the conversions and customers namespaces, with the typed API\'s shapes', async () => {
    const t = await withCustomer()
    const client = createAffiliateClient({ baseUrl: 'http://test.local/api/v1', apiKey: KEY_A, fetch: (request) => t.service.fetch(request) })
    const sale = await client.conversions.sale({ workspaceId: WS_A, externalId: 'user-1', amount: '12.50', currency: 'USD', invoiceId: 'in_client' })
    expect(sale).toMatchObject({ commission: { amount: '2.50' }, skipped: null })
    expect(await client.conversions.sale({ workspaceId: WS_A, externalId: 'user-1', amount: '12.50', currency: 'USD', invoiceId: 'in_client' })).toEqual(sale)
    expect(await client.customers.get(t.customer.customerId)).toEqual(sale.customer)
    expect((await client.customers.list({ affiliateId: t.ann.id })).items).toEqual([sale.customer])
    expect(await client.conversions.refund({ workspaceId: WS_A, invoiceId: 'in_client' })).toMatchObject({ commission: { amount: '0.00', status: 'refunded' }, clawback: null })
    await expect(client.customers.update(t.customer.customerId, { affiliateId: UNKNOWN_ID })).rejects.toMatchObject({ status: 404 })
    expect(await client.customers.delete(t.customer.customerId)).toEqual({ id: t.customer.customerId })
  })
})
