import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { serve } from '../../adapters/node.js'
import { createNodeWebhookSender } from '../../adapters/node/webhook-delivery.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, type Storage } from '../../src/index.js'
import type { WebhookOptions } from '../../src/events/service-events.js'
import { resultForStatus, type WebhookSender } from '../../src/webhooks/delivery.js'
import { DISABLED_DEAD, DISABLED_GONE } from '../../src/webhooks/schedule.js'
import { apiCampaignInput, KEY_A, manualClock, USER_A, WS_A, WS_A2 } from '../support/helpers.js'

// Deliveries end to end: the outbox, the dispatcher, the Node sender and a real receiver on
// 127.0.0.1 that verifies each request with standardwebhooks. Names resolve through an injected
// resolver; no traffic leaves the machine.

const local = { allowHttp: true, allowPrivateAddresses: true } as const

interface Received {
  headers: IncomingHttpHeaders
  body: string
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())))),
  )
})

/** A receiver on 127.0.0.1 answering `statuses` in turn (then the last one). */
async function receiver(statuses: number[] = [200]) {
  const received: Received[] = []
  let first!: () => void
  /** Resolves when the first request has come in. */
  const arrived = new Promise<void>((resolve) => (first = resolve))
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      res.writeHead(statuses[Math.min(received.length, statuses.length) - 1]!).end('answered')
      first()
    })
  })
  servers.push(server)
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))
  return { received, arrived, url: `http://127.0.0.1:${port}/hooks` }
}

/** What `new Webhook(secret).verify` says of a received request, at the time it was signed (the service's clock is not the wall clock). */
function verifies(secret: string, { headers, body }: Received): boolean {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(Number(headers['webhook-timestamp']) * 1000)
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>)
    return true
  } catch {
    return false
  } finally {
    vi.useRealTimers()
  }
}

function make(webhooks: WebhookOptions = local, storage: Storage = memoryStorage()) {
  const clock = manualClock()
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A, WS_A2] }]),
    clock,
    rateLimit: false,
    webhooks: { random: () => 0.5, ...webhooks },
  })
  const deliver = () => service.events.deliverDue({ sender: createNodeWebhookSender })
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await service.fetch(
      new Request(`http://test.local/api/v1${path}`, {
        method,
        headers: { 'x-auth-service': KEY_A, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    )
    return { status: response.status, body: (await response.json()) as any }
  }
  return { service, api: service.api, clock, deliver, call, storage }
}

describe('delivery to a real receiver', () => {
  it('sends every subscribed event once, signed so that standardwebhooks verifies it, the payload being the event', async () => {
    const { api, deliver } = make()
    const all = await receiver()
    const sales = await receiver()
    const everything = await api.webhooks.create({ workspaceId: WS_A, url: all.url, events: ['*'], description: 'all' })
    const salesOnly = await api.webhooks.create({ workspaceId: WS_A, url: sales.url, events: ['commission.created'] })
    const elsewhere = await api.webhooks.create({ workspaceId: WS_A2, url: all.url, events: ['*'] })
    const off = await api.webhooks.create({ workspaceId: WS_A, url: sales.url, events: ['*'] })
    await api.webhooks.update(off.webhookId, { enabled: false })
    expect(everything.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(await api.webhooks.get(everything.webhookId)).not.toHaveProperty('secret')

    const campaign = await api.campaigns.create(apiCampaignInput())
    const affiliate = await api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    await api.commissions.create({ campaignId: campaign.id, affiliateId: affiliate.id, referredUser: 'b@example.com', amount: 20 })
    expect(await deliver()).toBe(4)
    expect(await deliver()).toBe(0)

    const events = (await api.events.list({ workspaceId: WS_A })).items
    // Sent side by side, so they may arrive in any order.
    const inOrder = (received: Received[]) =>
      received
        .map((r) => JSON.parse(r.body))
        .sort((a, b) => events.findIndex((e) => e.id === a.id) - events.findIndex((e) => e.id === b.id))
    expect(inOrder(all.received)).toEqual(events)
    expect(inOrder(sales.received)).toEqual(events.filter((e) => e.type === 'commission.created'))
    for (const request of all.received) {
      expect(verifies(everything.secret, request)).toBe(true)
      expect(verifies(salesOnly.secret, request)).toBe(false)
      expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).id)
      expect(request.headers['content-type']).toBe('application/json')
    }
    for (const request of sales.received) expect(verifies(salesOnly.secret, request)).toBe(true)
    const log = await api.webhooks.deliveries({ webhookId: everything.webhookId })
    expect(log.pagination.total).toBe(3)
    for (const delivery of log.items) {
      expect(delivery).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 200,
        lastError: null,
        lastResponseBody: 'answered',
        nextAttemptAt: null,
      })
    }
    expect((await api.webhooks.deliveries({ webhookId: elsewhere.webhookId })).items).toEqual([])
    expect((await api.webhooks.deliveries({ webhookId: off.webhookId })).items).toEqual([])
  })

  it('500, 500, then 200: three attempts on the schedule (5 s, then 5 min), one webhook-id', async () => {
    const { api, clock, deliver } = make()
    const target = await receiver([500, 500, 200])
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: target.url, events: ['campaign.created'] })
    await api.campaigns.create(apiCampaignInput())
    const t0 = clock.now()
    const state = async () => (await api.webhooks.deliveries({ webhookId: webhook.webhookId })).items[0]!
    expect(await deliver()).toBe(1)
    expect(await state()).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastStatusCode: 500,
      nextAttemptAt: new Date(t0 + 5000).toISOString(),
    })
    expect((await state()).lastError).toMatch(/answered 500/)
    clock.advance(4999)
    expect(await deliver()).toBe(0)
    clock.advance(1)
    expect(await deliver()).toBe(1)
    expect(await state()).toMatchObject({ status: 'failed', attempts: 2, nextAttemptAt: new Date(t0 + 5000 + 300_000).toISOString() })
    clock.advance(299_999)
    expect(await deliver()).toBe(0)
    clock.advance(1)
    expect(await deliver()).toBe(1)
    expect(await state()).toMatchObject({ status: 'succeeded', attempts: 3, lastStatusCode: 200, nextAttemptAt: null, lastError: null })
    expect(target.received).toHaveLength(3)
    expect(new Set(target.received.map((r) => r.headers['webhook-id'])).size).toBe(1)
    expect(target.received.map((r) => Number(r.headers['webhook-timestamp']) * 1000)).toEqual([t0, t0 + 5000, t0 + 305_000])
    expect((await api.webhooks.get(webhook.webhookId)).enabled).toBe(true)
  })

  it('a 410 kills the delivery and disables the webhook; it then gets no deliveries, and enabling it again works', async () => {
    const { api, deliver, call } = make()
    const target = await receiver([410, 200])
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: target.url, events: ['*'] })
    await api.campaigns.create(apiCampaignInput())
    expect(await deliver()).toBe(1)
    expect((await api.webhooks.deliveries({ webhookId: webhook.webhookId })).items[0]).toMatchObject({
      status: 'dead',
      attempts: 1,
      lastStatusCode: 410,
    })
    expect(await api.webhooks.get(webhook.webhookId)).toMatchObject({
      enabled: false,
      disabledReason: DISABLED_GONE,
      consecutiveDeadDeliveries: 1,
    })
    await api.campaigns.create(apiCampaignInput())
    expect((await api.webhooks.deliveries({ webhookId: webhook.webhookId })).pagination.total).toBe(1)
    const refused = await call('POST', '/webhooks/test', { webhookId: webhook.webhookId })
    expect(refused.status).toBe(422)
    expect(await api.webhooks.update(webhook.webhookId, { enabled: true })).toMatchObject({
      enabled: true,
      disabledReason: null,
      consecutiveDeadDeliveries: 0,
    })
    const test = await api.webhooks.test(webhook.webhookId)
    expect(test).toMatchObject({ eventType: 'webhook.test', status: 'pending', attempts: 0 })
    expect(await deliver()).toBe(1)
    expect(JSON.parse(target.received[1]!.body)).toMatchObject({
      type: 'webhook.test',
      data: { webhook: { webhookId: webhook.webhookId } },
    })
  })

  it('a retried delivery is sent again with the same webhook-id', async () => {
    const { api, deliver } = make()
    const target = await receiver()
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: target.url, events: ['*'] })
    await api.campaigns.create(apiCampaignInput())
    await deliver()
    const [delivery] = (await api.webhooks.deliveries({ webhookId: webhook.webhookId, status: 'succeeded' })).items
    expect(await api.webhooks.retryDelivery(delivery!.deliveryId)).toMatchObject({ status: 'pending', attempts: 1 })
    expect(await deliver()).toBe(1)
    expect(target.received.map((r) => r.headers['webhook-id'])).toEqual([delivery!.eventId, delivery!.eventId])
    expect(await api.webhooks.deliveries({ webhookId: webhook.webhookId, status: 'pending' })).toMatchObject({ items: [] })
  })
})

describe('health and retention', () => {
  it('five dead deliveries in a row disable the webhook', async () => {
    let sent = 0
    const failing: WebhookSender = async () => (
      sent++, { outcome: 'retryable', status: 503, durationMs: 1, error: 'the endpoint answered 503', responseBody: '' }
    )
    const { api, service, clock } = make({ ...local, send: failing })
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/x', events: ['*'] })
    for (let i = 0; i < 5; i++) await api.campaigns.create(apiCampaignInput())
    for (let round = 0; round < 8; round++) {
      expect(await service.events.deliverDue()).toBe(5)
      if (round < 7) expect((await api.webhooks.get(webhook.webhookId)).enabled).toBe(true)
      clock.advance(11 * 3_600_000)
    }
    expect(sent).toBe(40)
    expect((await api.webhooks.deliveries({ webhookId: webhook.webhookId, status: 'dead' })).pagination.total).toBe(5)
    expect(await api.webhooks.get(webhook.webhookId)).toMatchObject({
      enabled: false,
      disabledReason: DISABLED_DEAD,
      consecutiveDeadDeliveries: 5,
    })
  })

  it('rotation: during the overlap both secrets verify, after it only the new one', async () => {
    const { api, clock, deliver } = make()
    const target = await receiver()
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: target.url, events: ['*'] })
    const rotated = await api.webhooks.rotateSecret(webhook.webhookId, { overlapHours: 2 })
    expect(rotated.secret).not.toBe(webhook.secret)
    expect(rotated.previousSecretExpiresAt).toBe(new Date(clock.now() + 2 * 3_600_000).toISOString())
    await api.campaigns.create(apiCampaignInput())
    await deliver()
    clock.advance(2 * 3_600_000)
    await api.campaigns.create(apiCampaignInput())
    await deliver()
    const [during, after] = target.received
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect([verifies(webhook.secret, during!), verifies(rotated.secret, during!)]).toEqual([true, true])
    expect([verifies(webhook.secret, after!), verifies(rotated.secret, after!)]).toEqual([false, true])
  })

  it('a second rotation within the overlap keeps the first secret until its own expiry; each expired secret stops verifying', async () => {
    const { api, clock, deliver } = make()
    const target = await receiver()
    const a = await api.webhooks.create({ workspaceId: WS_A, url: target.url, events: ['*'] })
    const b = await api.webhooks.rotateSecret(a.webhookId, { overlapHours: 3 }) // a signs 3 h more
    clock.advance(3_600_000)
    const c = await api.webhooks.rotateSecret(a.webhookId, { overlapHours: 1 }) // b signs 1 h more
    expect(c.previousSecretExpiresAt).toBe(new Date(clock.now() + 2 * 3_600_000).toISOString())
    const secrets = [a.secret, b.secret, c.secret]
    const verified: boolean[][] = []
    for (let hour = 0; hour < 3; hour++) {
      await api.campaigns.create(apiCampaignInput())
      await deliver()
      const received = target.received.at(-1)!
      verified.push(secrets.map((secret) => verifies(secret, received)))
      expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(verified.at(-1)!.filter(Boolean).length)
      clock.advance(3_600_000)
    }
    expect(verified).toEqual([
      [true, true, true], // 1 h after the first rotation: all three
      [true, false, true], // b's hour is over, a's three are not
      [false, false, true], // a's three hours are over
    ])
    // The payload carries the event's sequence, as GET /events answers it.
    const events = (await api.events.list({ limit: 100 })).items
    for (const received of target.received) {
      const payload = JSON.parse(received.body) as { id: string; sequence: number }
      expect(payload.sequence).toBe(events.find((event) => event.id === payload.id)!.sequence)
      expect(Number.isSafeInteger(payload.sequence) && payload.sequence > 0).toBe(true)
    }
  })

  it('events and deliveries are deleted after the retention (configurable)', async () => {
    const { api, service, clock } = make({
      ...local,
      retentionDays: 2,
      send: async () => ({ outcome: 'success', status: 200, durationMs: 1, responseBody: '' }),
    })
    await api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/x', events: ['*'] })
    await api.campaigns.create(apiCampaignInput())
    clock.advance(36 * 3_600_000)
    await api.campaigns.create(apiCampaignInput())
    await service.events.deliverDue()
    clock.advance(13 * 3_600_000)
    expect(await service.events.purge()).toEqual({ events: 1, deliveries: 1 })
    expect((await api.events.list()).items).toHaveLength(1)
    expect((await api.webhooks.deliveries()).pagination.total).toBe(1)
    expect(() => make({ retentionDays: 0 })).toThrow(/retentionDays/)
  })
})

describe('SSRF', () => {
  it('refuses loopback, private, link-local, metadata and IPv6 loopback URLs without the test flag, and http without allowHttp', async () => {
    const { call } = make({})
    for (const url of [
      'https://127.0.0.1/hook',
      'https://10.0.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      'http://hooks.example.com/',
    ]) {
      const answer = await call('POST', '/webhooks', { workspaceId: WS_A, url, events: ['*'] })
      expect(answer.status, url).toBe(400)
      expect(answer.body.errors).toEqual([
        expect.objectContaining({ path: 'url', location: 'body', msg: expect.stringMatching(/^url is refused: /) }),
      ])
    }
    const ok = await call('POST', '/webhooks', { workspaceId: WS_A, url: 'https://hooks.example.com/', events: ['*'] })
    expect(ok.status).toBe(201)
    const moved = await call('PUT', `/webhooks?webhookId=${ok.body.data.webhookId}`, { url: 'https://192.168.1.1/' })
    expect(moved.status).toBe(400)
  })

  it('a host name resolving to loopback is refused when delivering: nothing reaches the receiver', async () => {
    const { api, service } = make({ allowHttp: true })
    const target = await receiver()
    const port = new URL(target.url).port
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: `http://loopback.example.test:${port}/hooks`, events: ['*'] })
    await api.campaigns.create(apiCampaignInput())
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }]
    expect(await service.events.deliverDue({ sender: (policy) => createNodeWebhookSender({ ...policy, resolve }) })).toBe(1)
    const [delivery] = (await api.webhooks.deliveries({ webhookId: webhook.webhookId })).items
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: null })
    expect(delivery!.lastError).toMatch(/127\.0\.0\.1 is a loopback address.*loopback\.example\.test resolves to it/)
    expect(target.received).toEqual([])
  })
})

describe('the background dispatcher', () => {
  it('serve() delivers in the background soon after a write, and close() stops it', async () => {
    const target = await receiver()
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      rateLimit: false,
      webhooks: { ...local, pollMs: 60_000 },
    })
    const running = await serve(service, { port: 0 })
    try {
      expect(service.events.running).toBe(true)
      const headers = { 'x-auth-service': KEY_A, 'content-type': 'application/json' }
      const hook = await fetch(`${running.url}/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ workspaceId: WS_A, url: target.url, events: ['*'] }),
      })
      const { secret } = ((await hook.json()) as { data: { secret: string } }).data
      const created = await fetch(`${running.url}/campaigns`, { method: 'POST', headers, body: JSON.stringify(apiCampaignInput()) })
      expect(created.status).toBe(201)
      // The commit wakes the dispatcher: no waiting for the (one minute) poll (the test's timeout would end first).
      await target.arrived
      expect(target.received).toHaveLength(1)
      expect(new Webhook(secret).verify(target.received[0]!.body, target.received[0]!.headers as Record<string, string>)).toMatchObject({
        type: 'campaign.created',
      })
    } finally {
      await running.close()
    }
    expect(service.events.running).toBe(false)
  })

  it('a commit during a batch is not lost: the dispatcher looks again at once rather than at the next poll', async () => {
    const inner = memoryStorage()
    // The dispatcher's first look for due deliveries (finding none) is held at a gate once done.
    let looked!: () => void
    const lookedOnce = new Promise<void>((resolve) => (looked = resolve))
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let first = true
    const storage: Storage = {
      async transaction(work, options) {
        let claim = false
        const result = await inner.transaction((tx) => {
          const watched = Object.create(tx) as typeof tx
          watched.find = ((model: string, query: unknown) => {
            if (model === 'webhookDeliveries') claim = true
            return (tx.find as (model: string, query: unknown) => unknown)(model, query)
          }) as typeof tx.find
          return work(watched)
        }, options)
        if (claim && first) {
          first = false
          looked()
          await gate
        }
        return result
      },
    }
    let sent!: () => void
    const delivered = new Promise<void>((resolve) => (sent = resolve))
    const send: WebhookSender = async () => {
      sent()
      return resultForStatus(200, 1, '')
    }
    const { service, api } = make({ send, pollMs: 3_600_000 }, storage)
    await api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/in', events: ['*'] })
    service.events.start()
    try {
      await lookedOnce
      // Committed (and the dispatcher nudged) while its batch is still under way.
      await api.campaigns.create(apiCampaignInput())
      open()
      await delivered
    } finally {
      await service.events.stop()
    }
  })

  it('two dispatchers on one storage send each delivery once', async () => {
    const storage = memoryStorage()
    const target = await receiver()
    const one = make(local, storage)
    const two = make(local, storage)
    await one.api.webhooks.create({ workspaceId: WS_A, url: target.url, events: ['*'] })
    for (let i = 0; i < 30; i++) await one.api.campaigns.create(apiCampaignInput())
    const [a, b] = await Promise.all([one.deliver(), two.deliver()])
    expect(a + b).toBe(30)
    expect(new Set(target.received.map((r) => r.headers['webhook-id'])).size).toBe(30)
    expect(target.received).toHaveLength(30)
  })

  it('start() without any sender says what to pass', () => {
    const { service } = make()
    expect(() => service.events.start()).toThrow(/webhooks: \{ send \}/)
  })
})

describe('the webhook list', () => {
  it('takes the list query: contains, orderType, paging', async () => {
    const { api, call } = make()
    for (const name of ['b-orders', 'a-refunds', 'c-payouts'])
      await api.webhooks.create({ workspaceId: WS_A, url: `https://hooks.example.com/${name}`, events: ['*'], description: name })
    const page = await api.webhooks.list({ contains: 'REFUND' })
    expect(page.items.map((w) => w.description)).toEqual(['a-refunds'])
    const byUrl = await api.webhooks.list({ orderType: 'url', orderValue: 'ASC', limit: 2 })
    expect(byUrl.items.map((w) => w.description)).toEqual(['a-refunds', 'b-orders'])
    expect(byUrl.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 })
    expect((await call('GET', '/webhooks/list?orderType=secret')).status).toBe(400)
  })
})
