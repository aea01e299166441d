import { Validator } from '@seriousme/openapi-schema-validator'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/error-codes.js'
import { routes } from '../../src/http/routes.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { KEY_A, USER_A, WS_A, campaignInput, setup } from '../support/helpers.js'
import { mismatch } from '../support/openapi-check.js'

const json = { 'content-type': 'application/json; charset=utf-8' }

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document that passes a validator, served without a key', async () => {
    const { service } = setup()
    const response = await service.fetch(new Request('http://test.local/api/v1/openapi.json'))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const document = await response.json()
    expect(document.openapi).toBe('3.1.0')
    const result = await new Validator().validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('documents every route of the table under its operation, once', async () => {
    const { service } = setup()
    const document = await (await service.fetch(new Request('http://test.local/api/v1/openapi.json'))).json()
    const ids: string[] = []
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()]
      expect(operation, `${route.method} ${route.path}`).toBeDefined()
      ids.push(operation.operationId)
      expect(operation.security).toEqual([{ apiKey: [] }, { bearerKey: [] }])
    }
    expect(new Set(ids).size).toBe(routes.length)
    // Every method of the typed API is an operation of the document, and the other way round.
    const api = Object.entries(service.api).flatMap(([namespace, methods]) =>
      typeof methods === 'function' ? [] : Object.keys(methods).map((name) => `${namespace}.${name}`),
    )
    expect(api.sort()).toEqual(routes.map((r) => r.operation.join('.')).sort())
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-auth-service' })
    expect(document.components.securitySchemes.bearerKey).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it('is not limited, and names the basePath the service answers under', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      rateLimit: { capacity: 1, refillPerSecond: 0.001 },
      basePath: '/affiliates/v2',
    })
    for (let i = 0; i < 5; i++) {
      const response = await service.fetch(new Request('http://test.local/affiliates/v2/openapi.json'))
      expect(response.status).toBe(200)
      expect(response.headers.get('ratelimit-limit')).toBeNull()
      if (i === 4) expect((await response.json()).servers).toEqual([{ url: '/affiliates/v2' }])
    }
    const wrongMethod = await service.fetch(new Request('http://test.local/affiliates/v2/openapi.json', { method: 'POST' }))
    expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'GET'])
  })

  it("names '/' as the server of a service at the root", async () => {
    const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), basePath: '/' })
    const document = await (await service.fetch(new Request('http://test.local/openapi.json'))).json()
    expect(document.servers).toEqual([{ url: '/' }])
    expect(Object.keys(document.paths)).toContain('/r/{referralCode}')
  })

  it('asks the API key by default and says `security: []` on every public route', async () => {
    const { service } = setup()
    const document = await (await service.fetch(new Request('http://test.local/api/v1/openapi.json'))).json()
    expect(document.security).toEqual([{ apiKey: [] }])
    const security = (path: string, method: string) => document.paths[path][method].security
    expect(security('/health', 'get')).toEqual([])
    expect(security('/openapi.json', 'get')).toEqual([])
    expect(security('/r/{referralCode}', 'get')).toEqual([])
    expect(security('/track', 'options')).toEqual([])
    // The beacon takes a publishable key, never the API key.
    expect(security('/track', 'post')).toEqual([{ publishableKey: [] }])
    // Every operation says what it needs: none inherits the default by leaving it out.
    const operations = Object.entries(document.paths as Record<string, Record<string, { security?: unknown }>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => [`${method} ${path}`, operation.security !== undefined]),
    )
    expect(operations.filter(([, said]) => !said)).toEqual([])
  })
})

describe('the answer checker the HTTP suites run every answer through', () => {
  it('passes a real answer', async () => {
    const { service } = setup()
    const response = await service.fetch(
      new Request('http://test.local/api/v1/campaigns', {
        method: 'POST',
        headers: { 'x-auth-service': KEY_A, ...json },
        body: JSON.stringify(campaignInput()),
      }),
    )
    const text = await response.text()
    expect(
      mismatch({ method: 'POST', path: '/api/v1/campaigns', status: response.status, headers: response.headers, text }),
    ).toBeUndefined()
  })

  it('fails a deliberately wrong answer: a missing field, a wrong type, an undocumented status, a wrong content type, a missing header', async () => {
    const { api } = setup()
    const campaign = await api.campaigns.create({ ...campaignInput(), commissionType: 'percentage' } as never)
    const good = { status: 200, message: 'Campaign retrieved successfully', data: campaign }
    const answer = (status: number, body: unknown, headers: Record<string, string> = json) => ({
      method: 'GET',
      path: `/api/v1/campaigns?campaignId=${campaign.id}`,
      status,
      headers: new Headers(headers),
      text: JSON.stringify(body),
    })
    expect(mismatch(answer(200, good))).toBeUndefined()
    const { url: _dropped, ...withoutUrl } = campaign
    expect(mismatch(answer(200, { ...good, data: withoutUrl }))).toMatch(/url/)
    expect(mismatch(answer(200, { ...good, data: { ...campaign, amount: '20' } }))).toMatch(/amount/)
    expect(mismatch(answer(200, { ...good, data: { ...campaign, extra: 1 } }))).toMatch(/additional/)
    expect(mismatch(answer(200, { ...good, message: 'Campaign created successfully' }))).toMatch(/message/)
    expect(mismatch(answer(418, { status: 418, message: 'teapot' }))).toMatch(/does not document/)
    expect(mismatch(answer(200, good, { 'content-type': 'text/plain' }))).toMatch(/content-type/)
    expect(mismatch(answer(429, { status: 429, code: 'rate_limited', message: 'Too many requests' }))).toMatch(/Retry-After/)
    expect(
      mismatch(answer(400, { status: 400, code: 'validation_error', message: 'Validation error', errors: [{ type: 'field', msg: 'x' }] })),
    ).toMatch(/path|location/)
    expect(mismatch(answer(404, { status: 400, code: 'not_found', message: 'Not found' }))).toMatch(/status/)
    expect(mismatch(answer(404, { status: 404, message: 'Campaign not found' }))).toMatch(/code/)
    // A code of another status, or none the service has, is refused.
    expect(mismatch(answer(404, { status: 404, code: 'forbidden', message: 'Campaign not found' }))).toMatch(/allowed values/)
    expect(mismatch(answer(404, { status: 404, code: 'no_such_code', message: 'Campaign not found' }))).toMatch(/allowed values/)
  })
})

describe('error codes in the document', () => {
  it('lists every code of ERROR_CODES with its status and meaning, and each status answers exactly its own codes', async () => {
    const { service } = setup()
    const document = await (await service.fetch(new Request('http://test.local/api/v1/openapi.json'))).json()
    const error = document.components.schemas.Error
    expect(error.required).toEqual(['status', 'code', 'message'])
    expect(error.properties.code.enum).toEqual(Object.keys(ERROR_CODES))
    const listed = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, [status, description]]) => [code, { status, description }]))
    expect(error['x-error-codes']).toEqual(listed)
    for (const [code, [status, meaning]] of Object.entries(ERROR_CODES)) {
      expect(error.properties.code.description).toContain(`- \`${code}\` (${status}): ${meaning}`)
      const response = document.components.responses[String(status)]
      expect(response, `${code}: no shared response for ${status}`).toBeDefined()
      expect(response.description).toContain(`\`${code}\``)
    }
    const statuses = [...new Set(Object.values(ERROR_CODES).map(([status]) => status))]
    for (const status of statuses) {
      const own = Object.entries(ERROR_CODES)
        .filter(([, [s]]) => s === status)
        .map(([code]) => code)
      expect(document.components.responses[String(status)].content['application/json'].schema.allOf[1].properties.code).toEqual({
        enum: own,
      })
    }
  })

  it("an error the service answers carries a documented code and passes the document's schema", async () => {
    const { service, call } = setup()
    const cases = [
      {
        request: new Request('http://test.local/api/v1/campaigns?campaignId=00000000-0000-4000-8000-000000000000', {
          headers: { 'x-auth-service': KEY_A },
        }),
        path: '/api/v1/campaigns?campaignId=00000000-0000-4000-8000-000000000000',
        status: 404,
        code: 'not_found',
      },
      {
        request: new Request('http://test.local/api/v1/campaigns?campaignId=nope', { headers: { 'x-auth-service': KEY_A } }),
        path: '/api/v1/campaigns?campaignId=nope',
        status: 400,
        code: 'validation_error',
      },
      {
        request: new Request('http://test.local/api/v1/campaigns', { headers: { 'x-auth-service': 'wrong' } }),
        path: '/api/v1/campaigns',
        status: 401,
        code: 'invalid_api_key',
      },
    ]
    for (const { request, path, status, code } of cases) {
      const response = await service.fetch(request)
      const text = await response.text()
      expect({ status: response.status, code: JSON.parse(text).code }).toEqual({ status, code })
      expect(mismatch({ method: 'GET', path, status: response.status, headers: response.headers, text })).toBeUndefined()
    }
    // setup().call runs the same check on every answer of the HTTP suites.
    expect((await call('POST', '/campaigns', { body: '{' })).body.code).toBe('invalid_json')
  })
})

describe('the examples in the document', () => {
  it('are bodies the service accepts (with real ids in place of the placeholders)', async () => {
    const { api, call } = setup()
    const campaign = await api.campaigns.create({
      campaignName: 'C',
      workspaceId: WS_A,
      commissionType: 'percentage',
      amount: 10,
      url: 'https://shop.example.com/',
    })
    const affiliate = await api.affiliates.create({ email: 'x@example.com', campaignId: campaign.id })
    const sale = await api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'b@example.com',
      amount: 50,
    })
    const webhook = await api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/a', events: ['*'] })
    const delivery = await api.webhooks.test(webhook.webhookId)
    const ids: Record<string, string> = {
      workspaceId: WS_A,
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      commissionId: sale.commissionId,
      webhookId: webhook.webhookId,
      deliveryId: delivery.deliveryId,
    }
    for (const route of routes.filter((r) => r.example)) {
      const body = Object.fromEntries(Object.entries(route.example!).map(([k, v]) => [k, ids[k] ?? v]))
      if (route.operation[1] === 'track') body.referralCode = (await api.links.create({ affiliateId: affiliate.id })).referralCode
      // Review takes a held commission: a sale the fraud rules flag (a disposable e-mail).
      if (route.operation[1] === 'release' || route.operation[1] === 'void') {
        const { referralCode } = await api.links.create({ affiliateId: affiliate.id })
        const held = await api.conversions.sale({
          workspaceId: WS_A,
          referralCode,
          email: `${route.operation[1]}@mailinator.com`,
          amount: '10.00',
          currency: 'USD',
          invoiceId: `in_${route.operation[1]}`,
        })
        body.commissionIds = [held.commission!.commissionId]
      }
      const answer = await call(route.method, route.path, { body })
      expect(answer.status, `${route.method} ${route.path}: ${answer.text}`).toBeLessThan(300)
    }
  })
})
