import { describe, expect, it } from 'vitest'
import { populateBoth, snapshot, type Population } from '../support/fixtures.js'
import { KEY_A, KEY_B, setup as setupWith, UNKNOWN_ID, WS_A } from '../support/helpers.js'
import { storageKinds } from '../support/fixtures.js'

// Generated over every route and every id parameter: key B aimed at workspace A's ids must be
// answered exactly like ids that do not exist, change nothing, and carry none of A's data.

type Ids = {
  campaignId: string
  affiliateId: string
  linkId: string
  referralCode: string
  commissionId: string
  referredId: string
  referredUser: string
  payoutId: string
  payeeId: string
  webhookId: string
  deliveryId: string
  eventId: string
}

interface Probe {
  name: string
  method: string
  path: (ids: Ids) => string
  body?: (ids: Ids) => unknown
}

const probes: Probe[] = [
  { name: 'GET /campaigns', method: 'GET', path: (i) => `/campaigns?campaignId=${i.campaignId}` },
  {
    name: 'PUT /campaigns',
    method: 'PUT',
    path: (i) => `/campaigns?campaignId=${i.campaignId}`,
    body: () => ({ campaignName: 'Taken over' }),
  },
  { name: 'DELETE /campaigns', method: 'DELETE', path: (i) => `/campaigns?campaignId=${i.campaignId}` },
  { name: 'GET /affiliates', method: 'GET', path: (i) => `/affiliates?affiliateId=${i.affiliateId}` },
  { name: 'PUT /affiliates', method: 'PUT', path: (i) => `/affiliates?affiliateId=${i.affiliateId}`, body: () => ({ isBanned: true }) },
  { name: 'DELETE /affiliates', method: 'DELETE', path: (i) => `/affiliates?affiliateId=${i.affiliateId}` },
  {
    name: 'POST /affiliates campaignId',
    method: 'POST',
    path: () => '/affiliates',
    body: (i) => ({ email: 'intruder@example.com', campaignId: i.campaignId }),
  },
  { name: 'GET /links affiliateId', method: 'GET', path: (i) => `/links?affiliateId=${i.affiliateId}` },
  { name: 'POST /links affiliateId', method: 'POST', path: () => '/links', body: (i) => ({ affiliateId: i.affiliateId }) },
  { name: 'DELETE /links', method: 'DELETE', path: (i) => `/links?linkId=${i.linkId}` },
  {
    name: 'POST /links/track',
    method: 'POST',
    path: () => '/links/track',
    body: (i) => ({ referralCode: i.referralCode, event: 'click' }),
  },
  { name: 'GET /commissions', method: 'GET', path: (i) => `/commissions?commissionId=${i.commissionId}` },
  { name: 'PUT /commissions', method: 'PUT', path: (i) => `/commissions?commissionId=${i.commissionId}`, body: () => ({ status: 'paid' }) },
  { name: 'DELETE /commissions', method: 'DELETE', path: (i) => `/commissions?commissionId=${i.commissionId}` },
  {
    name: 'POST /commissions campaignId+affiliateId',
    method: 'POST',
    path: () => '/commissions',
    body: (i) => ({ campaignId: i.campaignId, affiliateId: i.affiliateId, referredUser: 'x@example.com', amount: 1 }),
  },
  { name: 'GET /referred-users', method: 'GET', path: (i) => `/referred-users?referredUser=${encodeURIComponent(i.referredUser)}` },
  {
    name: 'PUT /referred-users',
    method: 'PUT',
    path: (i) => `/referred-users?commissionId=${i.referredId}`,
    body: () => ({ name: 'Taken over' }),
  },
  { name: 'DELETE /referred-users', method: 'DELETE', path: (i) => `/referred-users?commissionId=${i.referredId}` },
  {
    name: 'POST /referred-users affiliateId',
    method: 'POST',
    path: () => '/referred-users',
    body: (i) => ({ referredTo: 'y@example.com', affiliateId: i.affiliateId }),
  },
  { name: 'GET /affiliates/list campaignId', method: 'GET', path: (i) => `/affiliates/list?campaignId=${i.campaignId}` },
  { name: 'GET /commissions/list affiliateId', method: 'GET', path: (i) => `/commissions/list?affiliateId=${i.affiliateId}` },
  { name: 'GET /commissions/list campaignId', method: 'GET', path: (i) => `/commissions/list?campaignId=${i.campaignId}` },
  { name: 'GET /referred-users/list affiliateId', method: 'GET', path: (i) => `/referred-users/list?affiliateId=${i.affiliateId}` },
  {
    name: 'POST /commissions/refund',
    method: 'POST',
    path: () => '/commissions/refund',
    body: (i) => ({ commissionId: i.commissionId, amount: '1.00' }),
  },
  { name: 'GET /affiliates/balance', method: 'GET', path: (i) => `/affiliates/balance?affiliateId=${i.payeeId}` },
  {
    name: 'POST /payouts/run campaignId',
    method: 'POST',
    path: () => '/payouts/run',
    body: (i) => ({ workspaceId: '33333333-3333-4333-8333-333333333333', campaignId: i.campaignId }),
  },
  { name: 'GET /payouts', method: 'GET', path: (i) => `/payouts?payoutId=${i.payoutId}` },
  { name: 'PUT /payouts', method: 'PUT', path: (i) => `/payouts?payoutId=${i.payoutId}`, body: () => ({ status: 'canceled' }) },
  { name: 'GET /payouts/items', method: 'GET', path: (i) => `/payouts/items?payoutId=${i.payoutId}` },
  { name: 'GET /payouts/list affiliateId', method: 'GET', path: (i) => `/payouts/list?affiliateId=${i.payeeId}` },
  { name: 'GET /payouts/export payoutId', method: 'GET', path: (i) => `/payouts/export?format=csv&payoutId=${i.payoutId}` },
  { name: 'GET /webhooks', method: 'GET', path: (i) => `/webhooks?webhookId=${i.webhookId}` },
  {
    name: 'PUT /webhooks',
    method: 'PUT',
    path: (i) => `/webhooks?webhookId=${i.webhookId}`,
    body: () => ({ url: 'https://attacker.example.com/' }),
  },
  { name: 'DELETE /webhooks', method: 'DELETE', path: (i) => `/webhooks?webhookId=${i.webhookId}` },
  {
    name: 'POST /webhooks/rotate-secret',
    method: 'POST',
    path: () => '/webhooks/rotate-secret',
    body: (i) => ({ webhookId: i.webhookId }),
  },
  { name: 'POST /webhooks/test', method: 'POST', path: () => '/webhooks/test', body: (i) => ({ webhookId: i.webhookId }) },
  { name: 'GET /webhooks/deliveries webhookId', method: 'GET', path: (i) => `/webhooks/deliveries?webhookId=${i.webhookId}` },
  { name: 'GET /webhooks/deliveries eventId', method: 'GET', path: (i) => `/webhooks/deliveries?eventId=${i.eventId}` },
  {
    name: 'POST /webhooks/deliveries/retry',
    method: 'POST',
    path: () => '/webhooks/deliveries/retry',
    body: (i) => ({ deliveryId: i.deliveryId }),
  },
  { name: 'GET /events', method: 'GET', path: (i) => `/events?eventId=${i.eventId}` },
  { name: 'GET /events/list after', method: 'GET', path: (i) => `/events/list?after=${i.eventId}` },
]

const idsOf = (p: Population): Ids => ({
  campaignId: p.campaign.id,
  affiliateId: p.affiliate.id,
  linkId: p.link.id,
  referralCode: p.link.referralCode,
  commissionId: p.commission.commissionId,
  referredId: p.referred.commissionId,
  referredUser: p.referred.referredUser,
  payoutId: p.payout.payoutId,
  payeeId: p.payee.id,
  webhookId: p.webhook.webhookId,
  deliveryId: p.delivery.deliveryId,
  eventId: p.delivery.eventId,
})

const unknownIds: Ids = {
  campaignId: UNKNOWN_ID,
  affiliateId: UNKNOWN_ID,
  linkId: UNKNOWN_ID,
  referralCode: 'CODE-nobody',
  commissionId: UNKNOWN_ID,
  referredId: UNKNOWN_ID,
  referredUser: 'nobody@example.com',
  payoutId: UNKNOWN_ID,
  payeeId: UNKNOWN_ID,
  webhookId: UNKNOWN_ID,
  deliveryId: UNKNOWN_ID,
  eventId: UNKNOWN_ID,
}

/** Strings that identify workspace A's records: none may appear in an answer to key B. */
const secretsOf = (p: Population): string[] => [
  p.workspaceId,
  p.campaign.id,
  p.affiliate.id,
  p.affiliate.email,
  p.link.id,
  p.link.referralCode,
  p.commission.commissionId,
  p.referred.commissionId,
  p.referred.referredUser,
  `INV-${p.tag}`,
  `CH-${p.tag}`,
  `Campaign ${p.tag}`,
  p.payout.payoutId,
  p.payee.id,
  p.payee.email,
  `paid-${p.tag}@example.com`,
  p.webhook.webhookId,
  p.webhook.secret,
  `https://hooks.example.com/${p.tag}`,
  p.delivery.deliveryId,
  p.delivery.eventId,
]

for (const [kind, makeStorage] of storageKinds)
  describe(`workspace isolation (${kind})`, () => {
    const setup = async () => setupWith({ storage: await makeStorage() })
    for (const probe of probes) {
      it(`${probe.name}: another workspace's ids answer exactly like unknown ids and change nothing`, async () => {
        const { call, storage } = await setup()
        const { a } = await populateBoth(call)
        const send = (ids: Ids, key: string) =>
          call(probe.method, probe.path(ids), { key, ...(probe.body ? { body: probe.body(ids) } : {}) })

        const before = await snapshot(storage)
        const foreign = await send(idsOf(a), KEY_B)
        const unknown = await send(unknownIds, KEY_B)
        expect(await snapshot(storage)).toBe(before)
        expect({ status: foreign.status, body: foreign.body }).toEqual({ status: unknown.status, body: unknown.body })
        for (const secret of secretsOf(a)) expect(foreign.text).not.toContain(secret)

        // The same request from the owner reaches the record, so the probe really aims at it.
        const owner = await send(idsOf(a), KEY_A)
        expect(owner.text).not.toBe(unknown.text)
      })
    }

    it('lists never mix workspaces', async () => {
      const { call } = await setup()
      const { a, b } = await populateBoth(call)
      for (const path of [
        '/campaigns/list',
        '/affiliates/list',
        '/commissions/list',
        '/referred-users/list',
        '/payouts/list',
        '/webhooks/list',
        '/events/list',
      ]) {
        const asB = await call('GET', `${path}?limit=100`, { key: KEY_B })
        const asA = await call('GET', `${path}?limit=100`, { key: KEY_A })
        expect(asB.status).toBe(200)
        expect(asB.body.data.items.length).toBeGreaterThan(0)
        for (const item of asB.body.data.items) expect(item.workspaceId).toBe(b.workspaceId)
        for (const item of asA.body.data.items) expect(item.workspaceId).toBe(a.workspaceId)
        for (const secret of secretsOf(a)) expect(asB.text).not.toContain(secret)
        for (const secret of secretsOf(b)) expect(asA.text).not.toContain(secret)
      }
    })

    it("a workspaceId that is not the key's is 403 on lists, not an empty page", async () => {
      const { call } = await setup()
      await populateBoth(call)
      for (const path of [
        '/campaigns/list',
        '/affiliates/list',
        '/commissions/list',
        '/referred-users/list',
        '/payouts/list',
        '/webhooks/list',
        '/webhooks/deliveries',
        '/events/list',
      ]) {
        const response = await call('GET', `${path}?workspaceId=${WS_A}`, { key: KEY_B })
        expect(response.status).toBe(403)
        expect(response.body).toEqual({ status: 403, code: 'forbidden', message: 'You do not have access to this workspace' })
      }
    })

    it('a referral code of another workspace cannot be taken over by supplying it again', async () => {
      const { call } = await setup()
      const { a, b } = await populateBoth(call)
      const response = await call('POST', '/links', {
        key: KEY_B,
        body: { affiliateId: b.affiliate.id, referralCode: a.link.referralCode },
      })
      // Codes are unique across the store, so the answer is a conflict, and it does not say whose.
      expect(response.status).toBe(422)
      for (const secret of secretsOf(a).filter((s) => s !== a.link.referralCode)) expect(response.text).not.toContain(secret)
    })
  })
