import { describe, expect, it } from 'vitest'
import { createAffiliateClient } from '../../src/client/index.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, type Storage } from '../../src/index.js'
import type { WebhookOptions } from '../../src/events/service-events.js'
import type { AffiliateEvent } from '../../src/events/types.js'
import type { StorageTransaction } from '../../src/storage/index.js'
import { resultForStatus, type WebhookRequest, type WebhookSender } from '../../src/webhooks/delivery.js'
import { snapshot } from '../support/fixtures.js'
import { apiCampaignInput, campaignInput, KEY_A, KEY_B, setup, UNKNOWN_ID, USER_A, WS_A, WS_B } from '../support/helpers.js'

const post = (key: string, body: unknown = campaignInput()) => ({ body, headers: { 'idempotency-key': key } })

const countCampaigns = (storage: Storage) => storage.transaction((tx) => tx.count('campaigns', {}))

/**
 * A storage whose second write transaction (the first request's own work, after the transaction
 * that marks its key running) waits at a gate before it starts, so the key is seen running.
 * `held` settles when that transaction reaches the gate: the key is marked running by then.
 */
function gatedStorage() {
  const inner = memoryStorage()
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  let reached!: () => void
  const held = new Promise<void>((resolve) => (reached = resolve))
  let writes = 0
  const storage: Storage = {
    async transaction(work, options) {
      if (!options?.readOnly && writes++ === 1) {
        reached()
        await gate
      }
      return inner.transaction(work, options)
    },
  }
  return { storage, open, held }
}

describe('Idempotency-Key', () => {
  it('a retry answers the first answer, marked replayed, and changes nothing', async () => {
    const { call, storage } = setup()
    const first = await call('POST', '/campaigns', post('retry-1'))
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const before = await snapshot(storage)
    const again = await call('POST', '/campaigns', post('retry-1'))
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await snapshot(storage)).toBe(before)
    expect(await countCampaigns(storage)).toBe(1)
  })

  it('the same key with another body or another route is 422 and changes nothing', async () => {
    const { call, storage } = setup()
    await call('POST', '/campaigns', post('k'))
    const before = await snapshot(storage)
    const otherBody = await call('POST', '/campaigns', post('k', campaignInput({ campaignName: 'Other' })))
    expect(otherBody.status).toBe(422)
    expect(otherBody.body).toEqual({
      status: 422,
      code: 'idempotency_key_reused',
      message: 'This Idempotency-Key was already used with a different request',
    })
    const otherRoute = await call('POST', '/affiliates', post('k', { email: 'a@example.com', campaignId: UNKNOWN_ID }))
    expect(otherRoute.status).toBe(422)
    expect(await snapshot(storage)).toBe(before)
  })

  it('is scoped per API key', async () => {
    const { call, storage } = setup()
    await call('POST', '/campaigns', post('shared'))
    const other = await call('POST', '/campaigns', { ...post('shared', campaignInput({ workspaceId: WS_B })), key: KEY_B })
    expect(other.status).toBe(201)
    expect(other.headers.get('idempotent-replayed')).toBeNull()
    expect(await countCampaigns(storage)).toBe(2)
  })

  it('a repeat while the first is still running is 409; the first then completes once', async () => {
    const { storage, open, held } = gatedStorage()
    const { call } = setup({ storage })
    const first = call('POST', '/campaigns', post('slow'))
    await held
    const second = await call('POST', '/campaigns', post('slow'))
    expect(second.status).toBe(409)
    expect(second.body).toEqual({
      status: 409,
      code: 'idempotency_in_progress',
      message: 'A request with this Idempotency-Key is still being processed',
    })
    open()
    expect((await first).status).toBe(201)
    const third = await call('POST', '/campaigns', post('slow'))
    expect(third.headers.get('idempotent-replayed')).toBe('true')
    expect(await countCampaigns(storage)).toBe(1)
  })

  it('parallel retries make exactly one record', async () => {
    const { call, storage } = setup()
    const responses = await Promise.all(Array.from({ length: 10 }, () => call('POST', '/campaigns', post('burst'))))
    const created = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null)
    expect(created).toHaveLength(1)
    for (const r of responses) expect([201, 409]).toContain(r.status)
    for (const r of responses.filter((r) => r.status === 201)) expect(r.text).toBe(created[0]!.text)
    expect(await countCampaigns(storage)).toBe(1)
  })

  it('the header must be 1 to 255 characters', async () => {
    const { call, storage } = setup()
    for (const key of ['', 'x'.repeat(256)]) {
      const response = await call('POST', '/campaigns', post(key))
      expect(response.status).toBe(400)
      expect(response.body).toEqual({
        status: 400,
        code: 'invalid_idempotency_key',
        message: 'Idempotency-Key must be 1 to 255 characters',
      })
    }
    expect(await countCampaigns(storage)).toBe(0)
    expect((await call('POST', '/campaigns', post('x'.repeat(255)))).status).toBe(201)
  })

  it('answers are kept in the storage: a new service over the same storage replays', async () => {
    const storage = memoryStorage()
    const first = await setup({ storage }).call('POST', '/campaigns', post('restart'))
    const again = await setup({ storage }).call('POST', '/campaigns', post('restart'))
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await countCampaigns(storage)).toBe(1)
  })

  it('is forgotten after the configured time', async () => {
    const { call, clock, storage } = setup()
    await call('POST', '/campaigns', post('ttl'))
    clock.advance(24 * 60 * 60 * 1000 - 1)
    expect((await call('POST', '/campaigns', post('ttl'))).headers.get('idempotent-replayed')).toBe('true')
    clock.advance(1)
    const fresh = await call('POST', '/campaigns', post('ttl'))
    expect(fresh.status).toBe(201)
    expect(fresh.headers.get('idempotent-replayed')).toBeNull()
    expect(await countCampaigns(storage)).toBe(2)
    // The expired record was replaced, not kept beside the new one.
    expect(await storage.transaction((tx) => tx.count('idempotency', {}))).toBe(1)
  })

  it('a refusal earned during the request is replayed; a malformed request frees the key', async () => {
    const { call } = setup()
    const body = { email: 'a@example.com', campaignId: UNKNOWN_ID }
    const notFound = await call('POST', '/affiliates', post('refused', body))
    expect(notFound.status).toBe(404)
    const replayed = await call('POST', '/affiliates', post('refused', body))
    expect(replayed.status).toBe(404)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')

    const invalid = await call('POST', '/campaigns', post('fix-me', campaignInput({ amount: -1 })))
    expect(invalid.status).toBe(400)
    const fixed = await call('POST', '/campaigns', post('fix-me'))
    expect(fixed.status).toBe(201)
  })

  it('the writes and the stored answer commit together: when storing the answer fails, neither stays', async () => {
    const inner = memoryStorage()
    let failOnce = true
    const storage: Storage = {
      transaction: (work, options) =>
        inner.transaction((tx) => {
          const guarded: StorageTransaction = Object.create(tx)
          guarded.update = async (model, id, patch) => {
            if (model === 'idempotency' && failOnce) {
              failOnce = false
              throw new Error('disk full')
            }
            return tx.update(model, id, patch)
          }
          return work(guarded)
        }, options),
    }
    const { call, errors } = setup({ storage })
    const failed = await call('POST', '/campaigns', post('atomic'))
    expect(failed.status).toBe(500)
    expect(errors).toHaveLength(1)
    expect(await countCampaigns(storage)).toBe(0)
    const retried = await call('POST', '/campaigns', post('atomic'))
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    expect(await countCampaigns(storage)).toBe(1)
  })

  it('a key held by a request that never finished is free again after the lease', async () => {
    // The first request never gets to run its work, as if its process had died: its key stays held.
    const { storage, held } = gatedStorage()
    const { call, clock } = setup({ storage })
    void call('POST', '/campaigns', post('orphan'))
    await held
    expect((await call('POST', '/campaigns', post('orphan'))).status).toBe(409)
    clock.advance(60_000 - 1)
    expect((await call('POST', '/campaigns', post('orphan'))).status).toBe(409)
    clock.advance(1)
    const retry = await call('POST', '/campaigns', post('orphan'))
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    expect(await countCampaigns(storage)).toBe(1)
  })

  it('only POST looks at the header', async () => {
    const { call } = setup()
    const created = await call('POST', '/campaigns', { body: campaignInput() })
    const id = created.body.data.id
    const put1 = await call('PUT', `/campaigns?campaignId=${id}`, post('put', { campaignName: 'A' }))
    const put2 = await call('PUT', `/campaigns?campaignId=${id}`, post('put', { campaignName: 'B' }))
    expect([put1.status, put2.status]).toEqual([200, 200])
    expect(put2.headers.get('idempotent-replayed')).toBeNull()
    expect(put2.body.data.campaignName).toBe('B')
  })
})

// The typed client sends an Idempotency-Key on every POST, so these paths must be the service's
// own: the same operations, with the same commit hook (listeners, dispatcher) and webhook policy.
describe('Idempotency-Key keeps the service wiring', () => {
  const keyed = (key: string) => ({ 'x-auth-service': KEY_A, 'content-type': 'application/json', 'idempotency-key': key })

  function service(webhooks: WebhookOptions = {}) {
    return createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      rateLimit: false,
      webhooks,
    })
  }

  const post = (target: ReturnType<typeof service>, path: string, body: unknown, key: string) =>
    target.fetch(new Request(`http://test.local/api/v1${path}`, { method: 'POST', headers: keyed(key), body: JSON.stringify(body) }))

  it('calls events.on listeners once, and not on a replay', async () => {
    const target = service()
    const heard: string[] = []
    let next: (() => void) | undefined
    target.events.on('campaign.created', (event) => {
      heard.push((event.data as { campaignName: string }).campaignName)
      next?.()
    })
    const heardOne = () => new Promise<void>((resolve) => (next = resolve))

    let signal = heardOne()
    expect((await post(target, '/campaigns', campaignInput({ campaignName: 'first' }), 'once')).status).toBe(201)
    await signal
    const replay = await post(target, '/campaigns', campaignInput({ campaignName: 'first' }), 'once')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    // A later write's event is heard next: the replay in between was heard as nothing.
    signal = heardOne()
    expect((await post(target, '/campaigns', campaignInput({ campaignName: 'second' }), 'other')).status).toBe(201)
    await signal
    expect(heard).toEqual(['first', 'second'])
  })

  it('the typed client (a key on every POST) reaches the listeners', async () => {
    const target = service()
    const heard = new Promise<AffiliateEvent>((resolve) => target.events.on('campaign.created', resolve))
    const client = createAffiliateClient({ baseUrl: 'http://test.local/api/v1', apiKey: KEY_A, fetch: (request) => target.fetch(request) })
    const campaign = await client.campaigns.create(apiCampaignInput())
    expect((await heard).data).toEqual(campaign)
  })

  it('wakes the dispatcher: the delivery goes out without waiting for the next poll', async () => {
    let sent!: (request: WebhookRequest) => void
    const delivered = new Promise<WebhookRequest>((resolve) => (sent = resolve))
    const send: WebhookSender = async (request) => {
      sent(request)
      return resultForStatus(200, 1, '')
    }
    // An hour between polls: only the commit's nudge can send it within the test.
    const target = service({ send, pollMs: 3_600_000 })
    await target.api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/in', events: ['campaign.created'] })
    target.events.start()
    try {
      expect((await post(target, '/campaigns', campaignInput(), 'wake')).status).toBe(201)
      const request = await delivered
      expect(JSON.parse(request.body)).toMatchObject({ type: 'campaign.created' })
    } finally {
      await target.events.stop()
    }
  })

  it('honours webhooks.allowHttp and allowPrivateAddresses', async () => {
    const target = service({ allowHttp: true, allowPrivateAddresses: true })
    const body = { workspaceId: WS_A, url: 'http://127.0.0.1:8080/hooks', events: ['*'] }
    const created = await post(target, '/webhooks', body, 'hook')
    expect(created.status).toBe(201)
    expect(((await created.json()) as { data: { url: string } }).data.url).toBe('http://127.0.0.1:8080/hooks')
  })
})
