import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage, type Storage } from '../../src/index.js'
import { apiCampaignInput, campaignInput, KEY_A, KEY_B, setup, UNKNOWN_ID, USER_A, WS_A } from '../support/helpers.js'

// The request pipeline in front of every route: routing, keys, bodies, the error envelope.

const BASE = 'http://test.local/api/v1'
const JSON_TYPE = 'application/json; charset=utf-8'
const UNAUTHORIZED =
  '{"status":401,"code":"invalid_api_key","message":"Invalid API key. Please check your API key and try again. Send it in the x-auth-service header (or as Authorization: Bearer <key>)."}'
const NOT_FOUND = '{"status":404,"code":"endpoint_not_found","message":"Endpoint not found"}'

/** Every keyed route this suite covers, with a call that would succeed past the key check. */
const keyedRoutes = [
  ['GET', '/campaigns/list'],
  ['GET', `/campaigns?campaignId=${UNKNOWN_ID}`],
  ['POST', '/campaigns'],
  ['PUT', `/campaigns?campaignId=${UNKNOWN_ID}`],
  ['DELETE', `/campaigns?campaignId=${UNKNOWN_ID}`],
  ['GET', '/affiliates/list'],
  ['GET', `/affiliates?affiliateId=${UNKNOWN_ID}`],
  ['POST', '/affiliates'],
  ['PUT', `/affiliates?affiliateId=${UNKNOWN_ID}`],
  ['DELETE', `/affiliates?affiliateId=${UNKNOWN_ID}`],
] as const

/** A service whose storage fails every transaction with `error`. */
function brokenStorage(error: unknown): Storage {
  return {
    async transaction() {
      throw error
    },
  }
}

/** A body stream that sends `chunks` and declares no length. */
function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
      controller.close()
    },
  })
}

/** A POST /campaigns whose body is a stream without content-length. */
const streamedPost = (chunks: string[], key = KEY_A) =>
  new Request(`${BASE}/campaigns`, {
    method: 'POST',
    headers: { 'x-auth-service': key, 'content-type': 'application/json' },
    body: streamOf(chunks),
    duplex: 'half',
  } as RequestInit & { duplex: 'half' })

describe('GET /health', () => {
  it('answers ok with the service name and the clock time, without a key', async () => {
    const { call, clock } = setup()
    clock.advance(1234)
    const response = await call('GET', '/health', { key: null })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 'ok', service: 'affiliate-service', timestamp: '2026-01-01T00:00:01.234Z' })
  })

  it('ignores a wrong key', async () => {
    const { call } = setup()
    expect((await call('GET', '/health', { key: 'not-a-key' })).status).toBe(200)
  })

  it('answers 405 to another method', async () => {
    const { call } = setup()
    const response = await call('POST', '/health', { key: null, body: {} })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
  })

  it('answers HEAD like GET, without a body, so HEAD-based uptime checks work', async () => {
    const { service } = setup()
    const response = await service.fetch(new Request('http://test.local/api/v1/health', { method: 'HEAD' }))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(await response.text()).toBe('')
  })
})

describe('routing', () => {
  it.each([
    '/api/v1/nothing-here',
    '/api/v1/campaigns/unknown',
    '/api/v1/campaigns/list/more',
    '/api/v1',
    '/api/v1campaigns',
    '/api/v2/campaigns',
    '/campaigns',
    '/',
  ])('answers 404 Endpoint not found for %s, with or without a key', async (path) => {
    const { service } = setup()
    for (const headers of [{}, { 'x-auth-service': KEY_A }] as Record<string, string>[]) {
      const response = await service.fetch(new Request(`http://test.local${path}`, { headers }))
      expect(response.status).toBe(404)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(await response.text()).toBe(NOT_FOUND)
    }
  })

  it.each([
    ['PATCH', '/campaigns', 'GET, POST, PUT, DELETE'],
    ['POST', '/campaigns/list', 'GET'],
    ['DELETE', '/campaigns/list', 'GET'],
    ['PATCH', '/affiliates', 'GET, POST, PUT, DELETE'],
    ['PUT', '/affiliates/list', 'GET'],
    ['OPTIONS', '/affiliates', 'GET, POST, PUT, DELETE'],
  ])('answers 405 with Allow to %s %s, before any key check', async (method, path, allow) => {
    const { call } = setup()
    for (const key of [KEY_A, null]) {
      const response = await call(method, path, { key })
      expect(response.status).toBe(405)
      expect(response.headers.get('allow')).toBe(allow)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(response.body).toEqual({ status: 405, code: 'method_not_allowed', message: 'Method not allowed' })
    }
  })
})

describe('API key', () => {
  it.each(keyedRoutes)('%s %s answers 401 without a key, with an unknown key and with an empty one', async (method, path) => {
    const { call } = setup()
    for (const key of [null, 'wrong-key', '', KEY_A.toUpperCase(), `${KEY_A}x`]) {
      const response = await call(method, path, { key, body: method === 'POST' || method === 'PUT' ? {} : undefined })
      expect(response.status).toBe(401)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(response.text).toBe(UNAUTHORIZED)
    }
  })

  it('is checked before the body is read or validated', async () => {
    const { call } = setup()
    const badJson = await call('POST', '/campaigns', { key: 'wrong', body: '{not json' })
    expect(badJson.text).toBe(UNAUTHORIZED)
    const badType = await call('POST', '/campaigns', { key: null, body: 'x', headers: { 'content-type': 'text/plain' } })
    expect(badType.text).toBe(UNAUTHORIZED)
    const badQuery = await call('GET', '/campaigns', { key: 'wrong' })
    expect(badQuery.text).toBe(UNAUTHORIZED)
  })

  it('takes the key as Authorization: Bearer too, and refuses a bearer token that differs from x-auth-service', async () => {
    const { call } = setup()
    const list = (headers: Record<string, string>) => call('GET', '/campaigns/list', { key: null, headers })
    expect((await list({ authorization: `Bearer ${KEY_A}` })).status).toBe(200)
    expect((await list({ authorization: `bearer  ${KEY_B}` })).status).toBe(200)
    // The same key both ways is that key; two different keys are none.
    expect((await list({ authorization: `Bearer ${KEY_A}`, 'x-auth-service': KEY_A })).status).toBe(200)
    for (const headers of <Record<string, string>[]>[
      { authorization: `Bearer ${KEY_A}`, 'x-auth-service': KEY_B },
      { authorization: `Bearer ${KEY_A}`, 'x-auth-service': 'wrong' },
      { authorization: 'Bearer wrong', 'x-auth-service': KEY_A },
      { authorization: 'Bearer wrong' },
      { authorization: KEY_A },
      { authorization: `Basic ${KEY_A}` },
    ]) {
      const response = await list(headers)
      expect({ headers, status: response.status, text: response.text }).toEqual({ headers, status: 401, text: UNAUTHORIZED })
    }
    // Another scheme (a proxy's Basic credentials) is not a key: x-auth-service still decides.
    expect((await list({ authorization: 'Basic dXNlcjpwYXNz', 'x-auth-service': KEY_A })).status).toBe(200)
    // A bearer key is a key on the POST path too: the body is read after it.
    const created = await call('POST', '/campaigns', { key: null, headers: { authorization: `Bearer ${KEY_A}` }, body: campaignInput() })
    expect(created.status).toBe(201)
  })

  it('names the header in its 401 message', async () => {
    const { call } = setup()
    const response = await call('GET', '/campaigns/list', { key: null })
    expect(response.body.message).toMatch(/^Invalid API key\. Please check your API key and try again\. /)
    expect(response.body.message).toContain('x-auth-service')
    expect(response.body.message).toContain('Authorization: Bearer')
  })

  it('lets each registered key through as its own principal', async () => {
    const { call } = setup()
    expect((await call('GET', '/campaigns/list', { key: KEY_A })).status).toBe(200)
    expect((await call('GET', '/campaigns/list', { key: KEY_B })).status).toBe(200)
  })
})

describe('request body', () => {
  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'application/jsonx',
  ])('answers 415 to content type %s', async (type) => {
    const { call } = setup()
    const response = await call('POST', '/campaigns', { body: campaignInput(), headers: { 'content-type': type } })
    expect(response.status).toBe(415)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 415, code: 'unsupported_media_type', message: 'Content-Type must be application/json' })
  })

  it('answers 415 to a body without a content type', async () => {
    const { service } = setup()
    const request = new Request(`${BASE}/campaigns`, {
      method: 'POST',
      headers: { 'x-auth-service': KEY_A },
      body: new Uint8Array([123, 125]),
    })
    expect(request.headers.get('content-type')).toBeNull()
    const response = await service.fetch(request)
    expect(response.status).toBe(415)
  })

  it('answers 415 on PUT too', async () => {
    const { call } = setup()
    const response = await call('PUT', `/campaigns?campaignId=${UNKNOWN_ID}`, {
      body: { campaignName: 'x' },
      headers: { 'content-type': 'text/plain' },
    })
    expect(response.status).toBe(415)
  })

  it.each(['application/json; charset=UTF-8', 'Application/JSON', 'application/json;charset="utf-8"', 'application/merge-patch+json'])(
    'accepts content type %s',
    async (type) => {
      const { call } = setup()
      const response = await call('POST', '/campaigns', { body: campaignInput(), headers: { 'content-type': type } })
      expect(response.status).toBe(201)
    },
  )

  it.each([
    ['malformed JSON', '{"campaignName": '],
    ['an empty body', ''],
    ['a trailing comma', '{"campaignName": "x",}'],
    ['two values', '{} {}'],
  ])('answers 400 Invalid JSON body to %s', async (_, text) => {
    const { service } = setup()
    const response = await service.fetch(
      new Request(`${BASE}/campaigns`, {
        method: 'POST',
        headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json' },
        body: text,
      }),
    )
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(await response.text()).toBe('{"status":400,"code":"invalid_json","message":"Invalid JSON body"}')
  })

  it('answers 400 Invalid JSON body to a body that is not UTF-8', async () => {
    const { service } = setup()
    const bytes = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) // {"a":"\xff\xfe"}
    const response = await service.fetch(
      new Request(`${BASE}/campaigns`, {
        method: 'POST',
        headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json' },
        body: bytes,
      }),
    )
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ status: 400, code: 'invalid_json', message: 'Invalid JSON body' })
  })

  it('answers 400 to a POST without any body', async () => {
    const { service } = setup()
    const response = await service.fetch(
      new Request(`${BASE}/campaigns`, { method: 'POST', headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json' } }),
    )
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ status: 400, code: 'invalid_json', message: 'Invalid JSON body' })
  })

  it.each([
    ['an array', [campaignInput()]],
    ['null', null],
    ['a string', 'text'],
    ['a number', 42],
    ['true', true],
  ])('answers 400 to a JSON body that is %s', async (_, value) => {
    const { call } = setup()
    const response = await call('POST', '/campaigns', { body: JSON.stringify(value) })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({ status: 400, code: 'invalid_body', message: 'Request body must be a JSON object' })
  })

  it('answers 413 to a declared length over the default limit of 100 KiB', async () => {
    const { call } = setup()
    const big = JSON.stringify(campaignInput({ affiliateDashboardText: 'x'.repeat(100 * 1024) }))
    const response = await call('POST', '/campaigns', { body: big })
    expect(response.status).toBe(413)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 413, code: 'body_too_large', message: 'Request body is larger than the limit of 102400 bytes' })
  })

  it('reads a body of exactly the limit', async () => {
    const { call } = setup()
    // Padded with spaces to exactly 100 KiB: it is read, parsed and then validated.
    const text = JSON.stringify(campaignInput())
    const padded = `${text.slice(0, -1) + ' '.repeat(100 * 1024 - text.length)}}`
    expect(new TextEncoder().encode(padded).byteLength).toBe(100 * 1024)
    const response = await call('POST', '/campaigns', { body: padded })
    expect(response.status).toBe(201)
    const over = `${text.slice(0, -1) + ' '.repeat(100 * 1024 - text.length + 1)}}`
    expect((await call('POST', '/campaigns', { body: over })).status).toBe(413)
  })

  it('answers 413 to a streamed body without content-length once it passes the limit', async () => {
    const { service, call } = setup()
    const chunks = ['{"campaignName":"', ...Array.from({ length: 30 }, () => 'y'.repeat(4096)), '"}']
    const request = streamedPost(chunks)
    expect(request.headers.get('content-length')).toBeNull()
    const response = await service.fetch(request)
    expect(response.status).toBe(413)
    expect((await call('GET', '/campaigns/list')).body.data.pagination.total).toBe(0)
  })

  it('reads a streamed body under the limit in several chunks', async () => {
    const { service } = setup()
    const text = JSON.stringify(campaignInput({ campaignName: 'Streamed' }))
    const response = await service.fetch(streamedPost([text.slice(0, 10), text.slice(10, 20), text.slice(20)]))
    expect(response.status).toBe(201)
    expect((await response.json()).data.campaignName).toBe('Streamed')
  })

  it('honours a configured maxBodyBytes', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      maxBodyBytes: 64,
      onError: () => undefined,
    })
    const post = (body: string) =>
      service.fetch(
        new Request(`${BASE}/campaigns`, {
          method: 'POST',
          headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json' },
          body,
        }),
      )
    const small = JSON.stringify({ campaignName: 'x' })
    expect((await post(small)).status).toBe(400)
    const response = await post(JSON.stringify(campaignInput()))
    expect(response.status).toBe(413)
    expect(await response.json()).toEqual({
      status: 413,
      code: 'body_too_large',
      message: 'Request body is larger than the limit of 64 bytes',
    })
  })

  it('ignores a body sent with GET or DELETE', async () => {
    const { call, api } = setup()
    const campaign = await api.campaigns.create(apiCampaignInput())
    const response = await call('DELETE', `/campaigns?campaignId=${campaign.id}`, {
      body: '{broken',
      headers: { 'content-type': 'text/plain' },
    })
    expect(response.status).toBe(200)
  })
})

describe('query string', () => {
  it.each([
    ['the same value twice', (id: string) => `campaignId=${id}&campaignId=${id}`],
    ['an empty value first', (id: string) => `campaignId=&campaignId=${id}`],
    ['an empty value last', (id: string) => `campaignId=${id}&campaignId=`],
  ])('refuses a parameter given more than once: %s', async (_, query) => {
    const { call, api } = setup()
    const campaign = await api.campaigns.create(apiCampaignInput())
    const response = await call('GET', `/campaigns?${query(campaign.id)}`)
    expect(response.status).toBe(400)
    expect(response.body).toEqual({
      status: 400,
      code: 'validation_error',
      message: 'Validation error',
      errors: [{ type: 'field', msg: 'campaignId must be given once', path: 'campaignId', location: 'query' }],
    })
  })

  it('decodes percent-encoded values', async () => {
    const { call, api } = setup()
    await api.campaigns.create(apiCampaignInput({ campaignName: 'Black & White' }))
    const response = await call('GET', `/campaigns/list?contains=${encodeURIComponent('k & w')}`)
    expect(response.body.data.items.map((item: { campaignName: string }) => item.campaignName)).toEqual(['Black & White'])
  })
})

describe('unexpected errors', () => {
  it('answers 500 with no message or stack of its own and hands the error to onError', async () => {
    const secret = new Error('connection to db-internal.example:5432 refused')
    const { call, errors } = setup({ storage: brokenStorage(secret) })
    const response = await call('GET', '/campaigns/list')
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.text).toBe('{"status":500,"code":"internal_error","message":"Internal server error"}')
    expect(errors).toEqual([secret])
  })

  it('answers 500 on every route that reaches the storage, and onError sees each', async () => {
    const { call, errors } = setup({ storage: brokenStorage(new TypeError('boom')) })
    const statuses = [
      (await call('POST', '/campaigns', { body: campaignInput() })).status,
      (await call('GET', `/affiliates?affiliateId=${UNKNOWN_ID}`)).status,
      (await call('DELETE', `/campaigns?campaignId=${UNKNOWN_ID}`)).status,
    ]
    expect(statuses).toEqual([500, 500, 500])
    expect(errors).toHaveLength(3)
  })

  it('answers 500 when a thrown value is not an Error at all', async () => {
    const { call, errors } = setup({ storage: brokenStorage('a string') })
    const response = await call('GET', '/affiliates/list')
    expect(response.body).toEqual({ status: 500, code: 'internal_error', message: 'Internal server error' })
    expect(errors).toEqual(['a string'])
  })

  it('answers 500 when the key store fails', async () => {
    const seen: unknown[] = []
    const failure = new Error('key store down')
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: {
        async resolve() {
          throw failure
        },
      },
      onError: (error) => seen.push(error),
    })
    const response = await service.fetch(new Request(`${BASE}/campaigns/list`, { headers: { 'x-auth-service': 'k' } }))
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ status: 500, code: 'internal_error', message: 'Internal server error' })
    expect(seen).toEqual([failure])
  })

  it('does not call onError for the errors it answers on purpose', async () => {
    const { call, errors } = setup()
    await call('GET', '/campaigns/list', { key: null })
    await call('GET', `/campaigns?campaignId=${UNKNOWN_ID}`)
    await call('GET', '/campaigns')
    await call('POST', '/campaigns', { body: '{' })
    await call('GET', '/nowhere')
    await call('PATCH', '/campaigns')
    expect(errors).toEqual([])
  })
})
