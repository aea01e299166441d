import { describe, expect, it } from 'vitest'
import { memoryStorage, type Storage } from '../../src/index.js'
import type { AffiliateEvent } from '../../src/events/types.js'
import { storageKinds } from '../support/fixtures.js'
import { apiCampaignInput, KEY_B, listenersHeard, setup as setupWith, UNKNOWN_ID, WS_A, WS_A2 } from '../support/helpers.js'

// The outbox: every write emits its event(s) in its own transaction, with the resource as answered;
// refused, rolled-back and replayed requests emit nothing; the cursor pages in commit order.

/** Every stored event, oldest first, as `GET /events/list` answers them. */
async function allEvents(api: ReturnType<typeof setupWith>['api'], query: Record<string, unknown> = {}): Promise<AffiliateEvent[]> {
  const out: AffiliateEvent[] = []
  let after: string | undefined
  for (;;) {
    const page = await api.events.list({ ...query, limit: 100, ...(after ? { after } : {}) })
    out.push(...page.items)
    if (!page.hasMore) return out
    after = page.items[page.items.length - 1]!.id
  }
}

const eventCount = (storage: Storage) => storage.transaction((tx) => tx.count('events', {}))

for (const [kind, makeStorage] of storageKinds)
  describe(`events (${kind})`, () => {
    const setup = async () => setupWith({ storage: await makeStorage() })

    it('each write emits its type with the resource as answered, and previousStatus on status moves', async () => {
      const { api, clock } = await setup()
      const campaign = await api.campaigns.create(apiCampaignInput())
      const updated = await api.campaigns.update(campaign.id, { campaignName: 'Renamed' })
      const affiliate = await api.affiliates.create({
        email: 'ann@example.com',
        campaignId: campaign.id,
        payoutMethod: 'PAYPAL',
        payoutEmail: 'ann@example.com',
      })
      const affiliateUpdated = await api.affiliates.update(affiliate.id, { firstName: 'Ann' })
      const link = await api.links.create({ affiliateId: affiliate.id })
      await api.links.track({ referralCode: link.referralCode, event: 'click' })
      const sale = await api.commissions.create({
        campaignId: campaign.id,
        affiliateId: affiliate.id,
        referredUser: 'b@example.com',
        amount: 50,
      })
      const amended = await api.commissions.update(sale.commissionId, { remarks: 'checked' })
      const processing = await api.commissions.update(sale.commissionId, { status: 'processing' })
      const same = await api.commissions.update(sale.commissionId, { status: 'processing' })
      const refunded = await api.commissions.refund(sale.commissionId, { amount: '10.00' })
      const pendingAgain = await api.commissions.update(sale.commissionId, { status: 'pending' })
      const referred = await api.referredUsers.create({ referredTo: 'friend@example.com', affiliateId: affiliate.id })
      await api.referredUsers.delete(referred.commissionId)
      clock.advance(1000)
      const run = await api.payouts.run({ workspaceId: WS_A })
      const payout = run.payouts[0]!
      const sending = await api.payouts.update(payout.payoutId, { status: 'processing' })
      const paid = await api.payouts.update(payout.payoutId, { status: 'paid' })
      const paidSale = await api.commissions.get(sale.commissionId)
      const afterRefund = await api.commissions.refund(sale.commissionId, { amount: '5.00' })
      const other = await api.links.create({ affiliateId: affiliate.id })
      await api.links.delete(other.id)

      const events = await allEvents(api)
      const seen = events.map((e) => [e.type, e.data])
      const clawback = (await api.commissions.list({ affiliateId: affiliate.id, limit: 100 })).items.find((c) => c.kind === 'clawback')!
      expect(seen).toEqual([
        ['campaign.created', campaign],
        ['campaign.updated', updated],
        ['affiliate.created', affiliate],
        ['affiliate.updated', affiliateUpdated],
        ['link.created', link],
        ['commission.created', sale],
        ['commission.updated', amended],
        ['commission.status_changed', { ...processing, previousStatus: 'pending' }],
        // `same` was a no-op: no event; an unpaid partial refund lowers the amount and keeps the status.
        ['commission.refunded', refunded],
        ['commission.status_changed', { ...pendingAgain, previousStatus: 'processing' }],
        ['referred_user.created', referred],
        ['commission.deleted', referred],
        ['payout.created', payout],
        ['payout.status_changed', { ...sending, previousStatus: 'pending' }],
        ['payout.status_changed', { ...paid, previousStatus: 'processing' }],
        ['commission.clawback_created', clawback],
        ['commission.refunded', afterRefund],
        ['link.created', other],
        ['link.deleted', other],
      ])
      expect(same).toEqual(processing)
      expect(paidSale.status).toBe('paid')
      for (const event of events) {
        expect(event.workspaceId).toBe(WS_A)
        expect(await api.events.get(event.id)).toEqual(event)
      }
      const last = await allEvents(api, { type: 'link.deleted' })
      expect(last.map((e) => e.data)).toEqual([other])
    })

    it('a payout run emits payout.created per payout, in order, with consecutive sequences and a delivery per subscribed webhook', async () => {
      const { api, clock, storage } = await setup()
      const campaign = await api.campaigns.create(apiCampaignInput())
      const everything = await api.webhooks.create({ workspaceId: WS_A, url: 'https://example.com/all', events: ['*'] })
      const payoutsOnly = await api.webhooks.create({ workspaceId: WS_A, url: 'https://example.com/payouts', events: ['payout.created'] })
      await api.webhooks.create({ workspaceId: WS_A, url: 'https://example.com/sales', events: ['commission.created'] })
      await api.webhooks.create({ workspaceId: WS_A2, url: 'https://example.com/elsewhere', events: ['*'] })
      const off = await api.webhooks.create({ workspaceId: WS_A, url: 'https://example.com/off', events: ['*'] })
      await api.webhooks.update(off.webhookId, { enabled: false })
      for (const name of ['ann', 'bob', 'cat']) {
        const affiliate = await api.affiliates.create({
          email: `${name}@example.com`,
          campaignId: campaign.id,
          payoutMethod: 'PAYPAL',
          payoutEmail: `${name}@example.com`,
        })
        await api.commissions.create({
          campaignId: campaign.id,
          affiliateId: affiliate.id,
          referredUser: `${name}-buyer@example.com`,
          amount: 20,
        })
        await api.commissions.create({
          campaignId: campaign.id,
          affiliateId: affiliate.id,
          referredUser: `${name}-other@example.com`,
          amount: 5,
        })
      }
      clock.advance(1000)
      const before = await eventCount(storage)
      await api.payouts.run({ workspaceId: WS_A, dryRun: true })
      expect(await eventCount(storage)).toBe(before)
      const run = await api.payouts.run({ workspaceId: WS_A })
      expect(run.payouts).toHaveLength(3)
      const stored = await storage.transaction((tx) =>
        tx.find('events', { where: { type: 'payout.created' }, orderBy: { field: 'sequence', direction: 'ASC' } }),
      )
      expect(stored.map((e) => JSON.parse(e.data))).toEqual(run.payouts)
      expect(stored.map((e) => e.sequence)).toEqual([before + 1, before + 2, before + 3])
      expect((await allEvents(api)).slice(-3).map((e) => e.id)).toEqual(stored.map((e) => e.id))
      const deliveries = await storage.transaction((tx) => tx.find('webhookDeliveries', { where: { eventType: 'payout.created' } }))
      expect(deliveries).toHaveLength(6)
      for (const event of stored) {
        const mine = deliveries.filter((d) => d.eventId === event.id)
        expect(mine.map((d) => d.webhookId).sort()).toEqual([everything.webhookId, payoutsOnly.webhookId].sort())
        for (const delivery of mine) {
          expect(delivery).toMatchObject({
            workspaceId: WS_A,
            status: 'pending',
            attempts: 0,
            nextAttemptAt: event.createdAt,
            createdAt: event.createdAt,
            updatedAt: event.createdAt,
            claimToken: null,
          })
        }
      }
    })

    it('refused requests (validation, 404, 403, rules) emit nothing', async () => {
      const { api, call, storage } = await setup()
      const campaign = await api.campaigns.create(apiCampaignInput())
      const before = await eventCount(storage)
      const refused = [
        await call('POST', '/campaigns', { body: { campaignName: 'x' } }),
        await call('PUT', `/campaigns?campaignId=${UNKNOWN_ID}`, { body: { campaignName: 'x' } }),
        await call('POST', '/campaigns', { body: { ...apiCampaignInput(), workspaceId: WS_A }, key: KEY_B }),
        await call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId: campaign.id, workspaceId: WS_A2 } }),
        await call('POST', '/commissions/refund', { body: { commissionId: UNKNOWN_ID } }),
        await call('POST', '/webhooks/test', { body: { webhookId: UNKNOWN_ID } }),
      ]
      expect(refused.map((r) => r.status)).toEqual([400, 404, 403, 422, 404, 404])
      expect(await eventCount(storage)).toBe(before)
    })

    it('an idempotent replay emits nothing', async () => {
      const { call, storage } = await setup()
      const request = { body: apiCampaignInput(), headers: { 'idempotency-key': 'once' } }
      const first = await call('POST', '/campaigns', request)
      const replay = await call('POST', '/campaigns', request)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.body).toEqual(first.body)
      expect(await eventCount(storage)).toBe(1)
    })

    it('pages oldest first by `after`, filters by type, and answers 404 for an unknown `after`', async () => {
      const { api, call } = await setup()
      const made = []
      for (let i = 0; i < 23; i++)
        made.push(await api.campaigns.create(apiCampaignInput({ campaignName: `C${i}`, workspaceId: i % 2 ? WS_A2 : WS_A })))
      await api.campaigns.update(made[0]!.id, { campaignName: 'changed' })
      const first = await api.events.list({ limit: 10 })
      expect(first.hasMore).toBe(true)
      expect(first.items.map((e) => (e.data as { id: string }).id)).toEqual(made.slice(0, 10).map((c) => c.id))
      const all = await allEvents(api)
      expect(all.map((e) => e.type)).toEqual([...made.map(() => 'campaign.created'), 'campaign.updated'])
      expect((await api.events.list({ after: all[22]!.id })).items.map((e) => e.type)).toEqual(['campaign.updated'])
      expect(await api.events.list({ after: all[23]!.id })).toEqual({ items: [], hasMore: false })
      expect((await allEvents(api, { type: 'campaign.updated' })).length).toBe(1)
      expect((await allEvents(api, { workspaceId: WS_A2 })).map((e) => e.workspaceId)).toEqual(
        made.filter((_, i) => i % 2).map(() => WS_A2),
      )
      const unknown = await call('GET', `/events/list?after=${UNKNOWN_ID}`)
      expect(unknown.status).toBe(404)
      const badLimit = await call('GET', '/events/list?limit=101')
      expect(badLimit.status).toBe(400)
      const badType = await call('GET', '/events/list?type=campaign.exploded')
      expect(badType.status).toBe(400)
    })
  })

describe('a rolled-back write', () => {
  it('emits nothing and calls no listener', async () => {
    const inner = memoryStorage()
    let failCommit = false
    // The work runs (and writes its event), then the transaction fails: everything is rolled back.
    const storage: Storage = {
      transaction: (work, options) =>
        inner.transaction(async (tx) => {
          const result = await work(tx)
          if (failCommit) throw new Error('the commit failed')
          return result
        }, options),
    }
    const { api, service, errors, call } = setupWith({ storage })
    const heard: AffiliateEvent[] = []
    service.events.on('*', (event) => void heard.push(event))
    let next = listenersHeard(service)
    await api.campaigns.create(apiCampaignInput())
    await next
    expect(heard.map((e) => e.type)).toEqual(['campaign.created'])
    failCommit = true
    const failed = await call('POST', '/campaigns', { body: apiCampaignInput({ campaignName: 'Rolled back' }) })
    expect(failed.status).toBe(500)
    expect(errors).toHaveLength(1)
    failCommit = false
    // A write after it is heard; the rolled-back one, had it called anyone, would have been before.
    next = listenersHeard(service)
    await api.campaigns.create(apiCampaignInput({ campaignName: 'After' }))
    await next
    expect(heard.map((e) => (e.data as { campaignName: string }).campaignName)).toEqual(['Spring launch', 'After'])
    expect(await inner.transaction((tx) => tx.count('events', {}))).toBe(2)
    expect(await inner.transaction((tx) => tx.count('campaigns', {}))).toBe(2)
  })
})

describe('service.events.on', () => {
  it('calls listeners of the type and of "*" after commit; a throwing listener fails nothing and goes to onError; off removes', async () => {
    const { api, service, errors } = setupWith()
    const created: unknown[] = []
    const every: string[] = []
    const off = service.events.on('campaign.created', (event) => void created.push(event.data))
    service.events.on('*', (event) => void every.push(event.type))
    service.events.on('campaign.updated', () => {
      throw new Error('a listener that throws')
    })
    const both = listenersHeard(service, 2)
    const campaign = await api.campaigns.create(apiCampaignInput())
    const updated = await api.campaigns.update(campaign.id, { campaignName: 'x' })
    expect(updated.campaignName).toBe('x')
    await both
    expect(created).toEqual([campaign])
    expect(every).toEqual(['campaign.created', 'campaign.updated'])
    expect(errors).toEqual([new Error('a listener that throws')])
    off()
    const next = listenersHeard(service)
    await api.campaigns.create(apiCampaignInput())
    await next
    expect(created).toHaveLength(1)
    expect(every).toEqual(['campaign.created', 'campaign.updated', 'campaign.created'])
    expect(() => service.events.on('nothing.happened' as never, () => undefined)).toThrow(/Unknown event type/)
  })
})
