import { request as httpRequest, type IncomingMessage } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../adapters/node.js'
import { REPLY } from '../src/http/incoming.js'
import { createAffiliateService, memoryKeyStore, type AffiliateService, memoryLimiterStore, memoryStorage, type LimiterStore, type Storage } from '../src/index.js'
import { KEY_A, KEY_B, UNKNOWN_ID, USER_A, WS_A, setup } from './helpers.js'

// `serve()` answers the service through its Reply path (no web Request or Response). These tests
// hold it to the Response path, `service.fetch` written out by the same adapter: the same status,
// headers and body on the wire, and the in-flight slot released exactly once on every path.

const running: RunningServer[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()))
})

function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

interface Exchange {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string
}

/** One request; answers the status, the raw header lines in order (framing and date left out) and the body. */
function exchange(port: number, { method = 'GET', path, headers = {}, body }: Exchange) {
  return new Promise<{ status: number; head: string[]; body: string }>((resolve, reject) => {
    const client = httpRequest({ port, host: '127.0.0.1', method, path: `/api/v1${path}`, headers }, (res: IncomingMessage) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        const head: string[] = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!
          if (!/^(date|connection|keep-alive|content-length|transfer-encoding)$/i.test(name)) head.push(`${name}: ${res.rawHeaders[i + 1]}`)
        }
        resolve({ status: res.statusCode!, head, body: text })
      })
    })
    client.on('error', reject)
    client.end(body)
  })
}

const json = { 'content-type': 'application/json' }
const exchanges: Exchange[] = [
  { path: '/health' },
  { path: '/campaigns/list', headers: { 'x-auth-service': KEY_A } },
  { path: '/campaigns/list?page=0&limit=x', headers: { 'x-auth-service': KEY_A } },
  { path: `/campaigns?campaignId=${UNKNOWN_ID}`, headers: { 'x-auth-service': KEY_A } },
  { path: '/campaigns/list/', headers: { 'x-auth-service': KEY_B } },
  { path: '/campaigns/list', headers: { 'x-auth-service': 'wrong' } },
  { path: '/nothing-here', headers: { 'x-auth-service': KEY_A } },
  { method: 'PATCH', path: '/campaigns', headers: { 'x-auth-service': KEY_A } },
  { method: 'POST', path: '/campaigns', headers: { 'x-auth-service': KEY_A, ...json }, body: '{"a":' },
  { method: 'POST', path: '/campaigns', headers: { 'x-auth-service': KEY_A, 'content-type': 'text/plain' }, body: 'x' },
  { method: 'POST', path: '/campaigns', headers: { 'x-auth-service': KEY_A, ...json }, body: JSON.stringify({ campaignName: '' }) },
  { method: 'POST', path: '/campaigns', headers: { 'x-auth-service': KEY_A, ...json, 'idempotency-key': '' }, body: '{}' },
  { method: 'POST', path: '/links/track', headers: { 'x-auth-service': KEY_A, ...json }, body: JSON.stringify({ referralCode: 'REF-NONE0000', event: 'click' }) },
  // The bucket holds 3: the fourth keyed request of key A and on are refused with Retry-After.
  { path: '/campaigns/list', headers: { 'x-auth-service': KEY_A } },
]

/** A memory limiter store that counts its calls and announces each release. */
function countingStore() {
  const inner = memoryLimiterStore()
  const counts = { consumed: 0, released: 0 }
  let onRelease = () => {}
  const store: LimiterStore = {
    async consume(key, rule, now) {
      const decision = await inner.consume(key, rule, now)
      if (decision.allowed) counts.consumed++
      return decision
    },
    async release(key, lease) {
      counts.released++
      onRelease()
      return inner.release(key, lease)
    },
  }
  const released = () => {
    const next = deferred()
    onRelease = next.resolve
    return next.promise
  }
  return { store, counts, released }
}

describe('node adapter: the Reply path', () => {
  it('is no part of the public shape of the service', () => {
    const { service } = setup()
    expect(Object.keys(service)).toEqual(['fetch', 'api'])
    expect(Object.getOwnPropertySymbols({ ...service })).toEqual([])
    expect(typeof (service as unknown as Record<symbol, unknown>)[REPLY]).toBe('function')
  })

  it('writes what the Response path writes: statuses, headers in order, bodies', async () => {
    const limits = { capacity: 3, refillPerSecond: 1 }
    const viaReply = setup({ rateLimit: limits }).service
    const viaResponse = setup({ rateLimit: limits }).service
    const reply = await serve(viaReply, { port: 0 })
    const response = await serve({ fetch: (request) => viaResponse.fetch(request) }, { port: 0 })
    running.push(reply, response)
    for (const sent of exchanges) {
      const [a, b] = [await exchange(Number(new URL(reply.url).port), sent), await exchange(Number(new URL(response.url).port), sent)]
      expect(a, `${sent.method ?? 'GET'} ${sent.path}`).toEqual(b)
    }
  })

  it('sends a Content-Length with every reply, rate limited or not', async () => {
    const { service } = setup({ rateLimit: { capacity: 10, refillPerSecond: 1 } })
    const server = await serve(service, { port: 0 })
    running.push(server)
    const answer = await fetch(`${server.url}/campaigns/list`, { headers: { 'x-auth-service': KEY_A } })
    const text = await answer.text()
    expect(answer.headers.get('ratelimit-limit')).toBe('10')
    expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(text)))
  })

  it('releases each admitted request once the reply is written', async () => {
    const { store, counts, released } = countingStore()
    const { service } = setup({ rateLimit: { capacity: 100, refillPerSecond: 1, maxInFlight: 1, store } })
    const server = await serve(service, { port: 0 })
    running.push(server)
    for (let i = 0; i < 3; i++) {
      const done = released()
      const answer = await fetch(`${server.url}/campaigns/list`, { headers: { 'x-auth-service': KEY_A } })
      expect(answer.status).toBe(200)
      await answer.text()
      await done
    }
    // An error answer (404 from the route) holds and frees its slot the same way.
    const done = released()
    expect((await fetch(`${server.url}/campaigns?campaignId=${UNKNOWN_ID}`, { headers: { 'x-auth-service': KEY_A } })).status).toBe(404)
    await done
    expect(counts).toEqual({ consumed: 4, released: 4 })
  })

  it('releases the slot of a client that left before its answer, once the work is done', async () => {
    const inner = memoryStorage()
    const gate = deferred()
    const reached = deferred()
    const gated: Storage = {
      async transaction(work, options) {
        reached.resolve()
        await gate.promise
        return inner.transaction(work, options)
      },
    }
    const { store, counts, released } = countingStore()
    const { service } = setup({ storage: gated, rateLimit: { capacity: 100, refillPerSecond: 1, maxInFlight: 1, store } })
    const server = await serve(service, { port: 0 })
    running.push(server)
    const client = httpRequest({ port: Number(new URL(server.url).port), host: '127.0.0.1', path: '/api/v1/campaigns/list', headers: { 'x-auth-service': KEY_A } })
    client.on('error', () => undefined)
    const closed = new Promise((resolve) => client.on('close', resolve))
    client.end()
    await reached.promise
    client.destroy()
    await closed
    // Still working: the slot is held, so a second request of the key is refused.
    expect((await fetch(`${server.url}/campaigns/list`, { headers: { 'x-auth-service': KEY_A } })).status).toBe(429)
    const done = released()
    gate.resolve()
    await done
    expect(counts).toEqual({ consumed: 1, released: 1 })
    expect((await fetch(`${server.url}/campaigns/list`, { headers: { 'x-auth-service': KEY_A } })).status).toBe(200)
  })

  it('reports a client that leaves mid-upload to onError, and frees its slot', async () => {
    const { store, counts, released } = countingStore()
    const { service, errors } = setup({ rateLimit: { capacity: 100, refillPerSecond: 1, maxInFlight: 1, store } })
    const server = await serve(service, { port: 0 })
    running.push(server)
    const done = released()
    const client = httpRequest({
      port: Number(new URL(server.url).port),
      host: '127.0.0.1',
      method: 'POST',
      path: '/api/v1/campaigns',
      headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json', 'content-length': '1000' },
    })
    client.on('error', () => undefined)
    client.write('{"campaignName":')
    client.on('socket', (socket) => socket.on('data', () => undefined))
    // The first bytes reach the service's read before the client goes.
    await new Promise((resolve) => client.on('socket', (socket) => socket.once('connect', resolve)))
    client.destroy()
    await done
    expect(counts).toEqual({ consumed: 1, released: 1 })
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toContain('The client closed the request before its body ended')
  })

  it.each([
    ['the Reply path', (service: AffiliateService) => service],
    ['the Response path', (service: AffiliateService) => ({ fetch: (request: Request) => service.fetch(request) })],
  ])('%s reports a client that left before its upload was asked for, and frees its slot', async (_path, served) => {
    const { store, counts, released } = countingStore()
    const gate = deferred()
    const inner = memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }])
    const errors: unknown[] = []
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: { resolve: async (key) => (await gate.promise, inner.resolve(key)) },
      rateLimit: { capacity: 100, refillPerSecond: 1, maxInFlight: 1, store },
      onError: (error) => errors.push(error),
    })
    const server = await serve(served(service), { port: 0 })
    running.push(server)
    const requestClosed = deferred()
    server.server.once('request', (req: IncomingMessage) => req.once('close', () => requestClosed.resolve()))
    const client = httpRequest({
      port: Number(new URL(server.url).port),
      host: '127.0.0.1',
      method: 'POST',
      path: '/api/v1/campaigns',
      headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json', 'content-length': '1000' },
    })
    client.on('error', () => undefined)
    client.write('{"campaignName":')
    client.once('socket', (socket) => socket.once('connect', () => setImmediate(() => client.destroy())))
    await requestClosed.promise
    const done = released()
    gate.resolve()
    await done
    expect(counts).toEqual({ consumed: 1, released: 1 })
    expect(String(errors[0])).toContain('The client closed the request before its body ended')
  })
})
