import { describe, expect, it } from 'vitest'
import { apiCampaignInput, KEY_B, setup, UNKNOWN_ID, WS_A } from '../support/helpers.js'

// POST /integrations, GET /integrations/list, GET|PUT|DELETE /integrations, GET /integrations/events/list
// (SPEC wave 3, "Payment provider integrations (Stripe)").

const SECRET = 'whsec_test_5d2c8a1f'

describe('integrations', () => {
  it('create answers the endpoint path and never the signing secret; get, list, update and delete', async () => {
    const t = setup()
    const campaign = await t.api.campaigns.create(apiCampaignInput())
    const created = await t.call('POST', '/integrations', {
      body: { workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET, description: 'Stripe' },
    })
    expect(created.status).toBe(201)
    const integration = created.body.data
    expect(integration).toMatchObject({ workspaceId: WS_A, provider: 'stripe', campaignId: null, livemode: true, description: 'Stripe' })
    expect(integration.endpointPath).toBe(`/api/v1/integrations/${integration.integrationId}/events`)
    expect(JSON.stringify(created.body)).not.toContain(SECRET)
    expect((await t.call('GET', `/integrations?integrationId=${integration.integrationId}`)).body.data).toEqual(integration)
    expect((await t.call('GET', '/integrations/list')).body.data.items).toEqual([integration])
    expect((await t.call('GET', '/integrations/list', { key: KEY_B })).body.data.items).toEqual([])
    expect((await t.call('GET', `/integrations?integrationId=${integration.integrationId}`, { key: KEY_B })).status).toBe(404)

    const updated = await t.call('PUT', `/integrations?integrationId=${integration.integrationId}`, {
      body: { campaignId: campaign.id, livemode: false, signingSecret: 'whsec_other' },
    })
    expect(updated.status).toBe(200)
    expect(updated.body.data).toMatchObject({ campaignId: campaign.id, livemode: false })
    expect(JSON.stringify(updated.body)).not.toContain('whsec_other')
    const stored = await t.storage.transaction((tx) => tx.get('integrations', integration.integrationId))
    expect(stored?.signingSecret).toBe('whsec_other')

    expect((await t.call('DELETE', `/integrations?integrationId=${integration.integrationId}`)).status).toBe(200)
    expect((await t.call('GET', `/integrations?integrationId=${integration.integrationId}`)).status).toBe(404)
  })

  it('refuses an unknown provider, a missing secret and a campaign it cannot see, and stores nothing', async () => {
    const t = setup()
    expect(
      (await t.call('POST', '/integrations', { body: { workspaceId: WS_A, provider: 'braintree', signingSecret: SECRET } })).status,
    ).toBe(400)
    expect((await t.call('POST', '/integrations', { body: { workspaceId: WS_A, provider: 'stripe' } })).status).toBe(400)
    expect(
      (
        await t.call('POST', '/integrations', {
          body: { workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET, campaignId: UNKNOWN_ID },
        })
      ).status,
    ).toBe(404)
    expect((await t.call('GET', '/integrations/list')).body.data.pagination.total).toBe(0)
  })

  it('refuses an API key for a provider that never reads one (only Stripe uses it, for promotion codes), on create and update', async () => {
    const t = setup()
    const refused = await t.call('POST', '/integrations', {
      body: { workspaceId: WS_A, provider: 'paddle', signingSecret: SECRET, apiKey: 'pdl_live_key' },
    })
    expect(refused.status).toBe(400)
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: 'apiKey', msg: expect.stringContaining('Stripe only') })])
    expect((await t.call('GET', '/integrations/list')).body.data.items).toEqual([])
    const lemon = await t.call('POST', '/integrations', { body: { workspaceId: WS_A, provider: 'lemonsqueezy', signingSecret: SECRET } })
    const id = lemon.body.data.integrationId
    expect((await t.call('PUT', `/integrations?integrationId=${id}`, { body: { apiKey: 'key' } })).status).toBe(400)
    expect((await t.storage.transaction((tx) => tx.get('integrations', id)))?.apiKey).toBeNull()
    const stripe = await t.call('POST', '/integrations', {
      body: { workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET, apiKey: 'rk_test_key' },
    })
    expect(stripe.status).toBe(201)
  })

  it('the event log lists by integration and status', async () => {
    const t = setup()
    const integration = (await t.call('POST', '/integrations', { body: { workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET } }))
      .body.data
    const at = '2026-01-01T00:00:00.000Z'
    await t.storage.transaction(async (tx) => {
      for (const [eventId, status] of [
        ['evt_1', 'processed'],
        ['evt_2', 'ignored'],
      ] as const) {
        await tx.insert('providerEvents', {
          id: crypto.randomUUID(),
          workspaceId: WS_A,
          integrationId: integration.integrationId,
          eventId,
          type: 'invoice.paid',
          status,
          reason: status === 'ignored' ? 'not_attributed' : null,
          commissionId: null,
          invoiceId: 'in_1',
          chargeId: null,
          paymentIntentId: null,
          chargedMinor: 0,
          refundedMinor: 0,
          receivedAt: at,
          createdAt: at,
          updatedAt: at,
        })
      }
    })
    const ignored = (await t.call('GET', `/integrations/events/list?integrationId=${integration.integrationId}&status=ignored`)).body.data
    expect(ignored.items).toEqual([
      {
        eventId: 'evt_2',
        integrationId: integration.integrationId,
        type: 'invoice.paid',
        status: 'ignored',
        reason: 'not_attributed',
        commissionId: null,
        receivedAt: at,
      },
    ])
    expect((await t.call('GET', '/integrations/events/list', { key: KEY_B })).body.data.items).toEqual([])
    expect((await t.call('GET', '/integrations/events/list?status=nope')).status).toBe(400)
  })
})
