import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express4 from 'express4'
import express5 from 'express5'
import { Hono } from 'hono'
import { afterEach, describe, expect, it } from 'vitest'
import { expressAdapter } from '../../adapters/express.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { KEY_A, USER_A, WS_A } from '../support/helpers.js'
import { checkedFetch } from '../support/openapi-check.js'

const service = (basePath?: string) =>
  createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    rateLimit: false,
    ...(basePath === undefined ? {} : { basePath }),
  })

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

type Express = typeof express5
const majors: [string, Express, string][] = [
  // Express 4 names a wildcard `*`; Express 5 wants it named (`*splat`).
  ['Express 4', express4 as unknown as Express, '/prefix/*'],
  ['Express 5', express5, '/prefix/*splat'],
]

async function listen(app: ReturnType<Express>, mount = '') {
  const server = app.listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise((resolve) => server.once('listening', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return async (path: string) => {
    const response = await checkedFetch(base + path, { headers: { 'x-auth-service': KEY_A } }, mount)
    const text = await response.text()
    return { status: response.status, type: response.headers.get('content-type') ?? '', text }
  }
}

/** The host's own routes, registered after the adapter, so they only answer when it passes them on. */
function hostRoutes(app: ReturnType<Express>) {
  app.get('/hello', (_req, res) => void res.json({ own: 'hello' }))
  app.get('/api/v2/users', (_req, res) => void res.json({ own: 'v2' }))
  app.get('/api/v1x', (_req, res) => void res.json({ own: 'v1x' }))
}

describe.each(majors)('%s', (_name, express, wildcard) => {
  it('mounted at the root: answers under /api/v1 and passes every other path on', async () => {
    const app = express()
    app.use(expressAdapter(service()))
    hostRoutes(app)
    const call = await listen(app)
    expect(JSON.parse((await call('/api/v1/health')).text)).toMatchObject({ status: 'ok' })
    expect(JSON.parse((await call(`/api/v1/campaigns/list?workspaceId=${WS_A}`)).text).data.items).toEqual([])
    expect(JSON.parse((await call('/hello')).text)).toEqual({ own: 'hello' })
    expect(JSON.parse((await call('/api/v2/users')).text)).toEqual({ own: 'v2' })
    expect(JSON.parse((await call('/api/v1x')).text)).toEqual({ own: 'v1x' })
    // Nobody's path: Express's own 404, not the service's envelope.
    const nobody = await call('/nowhere')
    expect(nobody.status).toBe(404)
    expect(nobody.type).toContain('text/html')
  })

  it('mounted at a prefix: answers under /prefix/api/v1, the host answers around it', async () => {
    const app = express()
    app.use('/affiliates', expressAdapter(service()))
    hostRoutes(app)
    const call = await listen(app, '/affiliates')
    expect((await call('/affiliates/api/v1/health')).status).toBe(200)
    expect((await call('/api/v1/health')).status).toBe(404)
    expect(JSON.parse((await call('/hello')).text)).toEqual({ own: 'hello' })
    expect(JSON.parse((await call('/api/v2/users')).text)).toEqual({ own: 'v2' })
  })

  it(`behind app.all('${wildcard}') with basePath '/prefix/api/v1' (the path is not stripped)`, async () => {
    const app = express()
    app.all(wildcard, expressAdapter(service('/prefix/api/v1')))
    hostRoutes(app)
    const call = await listen(app, '/prefix')
    expect(JSON.parse((await call('/prefix/api/v1/health')).text)).toMatchObject({ status: 'ok' })
    const listed = await call(`/prefix/api/v1/campaigns/list?workspaceId=${WS_A}`)
    expect(listed.status).toBe(200)
    // Under the wildcard but outside basePath: passed on to Express.
    expect((await call('/prefix/other')).type).toContain('text/html')
    expect(JSON.parse((await call('/hello')).text)).toEqual({ own: 'hello' })
  })
})

describe('Hono', () => {
  it('app.mount strips the prefix: the default basePath answers, the host answers around it', async () => {
    const app = new Hono()
    app.mount('/affiliates', service().fetch)
    app.get('/hello', (c) => c.json({ own: 'hello' }))
    const health = await app.request('/affiliates/api/v1/health')
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })
    const listed = await app.request(`/affiliates/api/v1/campaigns/list?workspaceId=${WS_A}`, { headers: { 'x-auth-service': KEY_A } })
    expect((await listed.json()).data.items).toEqual([])
    expect(await (await app.request('/hello')).json()).toEqual({ own: 'hello' })
  })

  it("app.all('/affiliates/*') passes the full URL: basePath '/affiliates/api/v1'", async () => {
    const affiliates = service('/affiliates/api/v1')
    const app = new Hono()
    app.all('/affiliates/*', (c) => affiliates.fetch(c.req.raw))
    app.get('/hello', (c) => c.json({ own: 'hello' }))
    expect((await app.request('/affiliates/api/v1/health')).status).toBe(200)
    const listed = await app.request(`/affiliates/api/v1/campaigns/list?workspaceId=${WS_A}`, { headers: { 'x-auth-service': KEY_A } })
    expect(listed.status).toBe(200)
    expect((await app.request('/affiliates/api/v1/nope')).status).toBe(404)
    expect(await (await app.request('/hello')).json()).toEqual({ own: 'hello' })
  })
})

describe('a Next.js-style route handler (app/affiliates/[...path]/route.ts)', () => {
  it('receives the full URL and answers with basePath set to the route prefix', async () => {
    const affiliates = service('/affiliates/api/v1')
    // What such a file exports: one function per method, each handed the request as it came.
    const GET = (request: Request) => affiliates.fetch(request)
    const POST = (request: Request) => affiliates.fetch(request)
    const health = await GET(new Request('https://shop.example.com/affiliates/api/v1/health'))
    expect(await health.json()).toMatchObject({ status: 'ok' })
    const created = await POST(
      new Request('https://shop.example.com/affiliates/api/v1/campaigns', {
        method: 'POST',
        headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json' },
        body: JSON.stringify({
          campaignName: 'Spring',
          workspaceId: WS_A,
          commissionType: 'percentage',
          amount: 10,
          url: 'https://shop.example.com/',
        }),
      }),
    )
    expect(created.status).toBe(201)
    // Without basePath the prefix would make every path unknown.
    expect((await service().fetch(new Request('https://shop.example.com/affiliates/api/v1/health'))).status).toBe(404)
  })
})
