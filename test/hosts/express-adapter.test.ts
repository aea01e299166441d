import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express4 from 'express4'
import express5 from 'express5'
import { afterEach, describe, expect, it } from 'vitest'
import { expressAdapter, expressErrorHandler } from '../../adapters/express.js'
import { KEY_A, campaignInput, setup } from '../support/helpers.js'
import { checkedFetch } from '../support/openapi-check.js'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

type Express = typeof express5

const majors: [string, Express][] = [
  ['Express 4', express4 as unknown as Express],
  ['Express 5', express5],
]

describe.each(majors)('%s', (_name, express) => {
  /** An app with the service under /affiliates, a route of its own, and `express.json()` where asked. */
  async function app(options: { jsonBefore?: boolean; jsonLimit?: string; errors?: boolean } = {}) {
    const { service } = setup()
    const app = express()
    if (options.jsonBefore) app.use(express.json(options.jsonLimit ? { limit: options.jsonLimit } : {}))
    if (options.errors) app.use('/affiliates', expressAdapter(service), expressErrorHandler(service))
    else app.use('/affiliates', expressAdapter(service))
    app.get('/hello', (_req, res) => {
      res.json({ hello: 'world' })
    })
    app.post('/own', (req, res) => {
      res.json({ got: (req as { body?: unknown }).body })
    })
    const server = app.listen(0, '127.0.0.1')
    servers.push(server)
    await new Promise((resolve) => server.once('listening', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    // `byExpress`: an answer Express itself gives (its parser's errors), which the document does not describe.
    const call = (path: string, init: { method?: string; body?: string; headers?: Record<string, string>; byExpress?: boolean } = {}) =>
      (init.byExpress ? fetch : checkedFetch)(
        base + path,
        {
          ...init,
          headers: { 'x-auth-service': KEY_A, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
        },
        '/affiliates',
      )
    return { base, call }
  }

  it('serves under its mount path and leaves other paths to the app', async () => {
    const { call } = await app()
    const health = await call('/affiliates/api/v1/health')
    expect(health.status).toBe(200)
    expect(health.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await health.json()).toMatchObject({ status: 'ok', service: 'affiliate-service' })

    const own = await call('/hello')
    expect(await own.json()).toEqual({ hello: 'world' })

    // Outside /api/v1 the adapter calls next(): Express's own 404, not the service's envelope.
    const outside = await call('/affiliates/elsewhere')
    expect(outside.status).toBe(404)
    expect(outside.headers.get('content-type')).toContain('text/html')

    const unknown = await call('/affiliates/api/v1/nothing-here')
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ status: 404, code: 'endpoint_not_found', message: 'Endpoint not found' })
  })

  for (const jsonBefore of [false, true]) {
    describe(jsonBefore ? 'after express.json()' : 'without a body parser', () => {
      it('creates and reads, and answers validation errors in the envelope', async () => {
        const { call } = await app({ jsonBefore })
        const created = await call('/affiliates/api/v1/campaigns', { method: 'POST', body: JSON.stringify(campaignInput()) })
        expect(created.status).toBe(201)
        const { data } = (await created.json()) as { data: { id: string; campaignName: string } }
        expect(data.campaignName).toBe('Spring launch')

        const read = await call(`/affiliates/api/v1/campaigns?campaignId=${data.id}`)
        expect(((await read.json()) as { data: unknown }).data).toEqual(data)

        const invalid = await call('/affiliates/api/v1/affiliates', { method: 'POST', body: JSON.stringify({ email: 'x' }) })
        expect(invalid.status).toBe(400)
        expect(((await invalid.json()) as { message: string }).message).toBe('Validation error')

        const unauthorized = await call('/affiliates/api/v1/campaigns/list', { headers: { 'x-auth-service': 'wrong' } })
        expect(unauthorized.status).toBe(401)
      })

      it('answers 415 for a body that is not JSON', async () => {
        const { call } = await app({ jsonBefore })
        const answer = await call('/affiliates/api/v1/campaigns', {
          method: 'POST',
          body: 'campaignName=x',
          headers: { 'content-type': 'text/plain' },
        })
        expect(answer.status).toBe(415)
        expect(((await answer.json()) as { status: number }).status).toBe(415)
      })
    })
  }

  it('after express.json(), hands the service the parsed body re-serialized, with a matching Content-Length', async () => {
    const seen: { text: string; length: string | null; type: string | null }[] = []
    const app = express()
    app.use(express.json())
    app.use(
      expressAdapter({
        async fetch(request) {
          seen.push({
            text: await request.text(),
            length: request.headers.get('content-length'),
            type: request.headers.get('content-type'),
          })
          return new Response(null, { status: 204 })
        },
      }),
    )
    const server = app.listen(0, '127.0.0.1')
    servers.push(server)
    await new Promise((resolve) => server.once('listening', resolve))
    const sent = '{ "name" :  "Zoë",\n  "n": 1 }'
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sent,
    })
    expect(answer.status).toBe(204)
    const text = JSON.stringify({ name: 'Zoë', n: 1 })
    expect(seen).toEqual([{ text, length: String(Buffer.byteLength(text)), type: 'application/json' }])
  })

  it('without a parser, the service reads the stream: its own 400 and 413', async () => {
    const { call } = await app()
    const malformed = await call('/affiliates/api/v1/campaigns', { method: 'POST', body: '{"campaignName":' })
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toEqual({ status: 400, code: 'invalid_json', message: 'Invalid JSON body' })

    const huge = JSON.stringify(campaignInput({ campaignName: 'x'.repeat(200 * 1024) }))
    const tooLarge = await call('/affiliates/api/v1/campaigns', { method: 'POST', body: huge })
    expect(tooLarge.status).toBe(413)
    expect(((await tooLarge.json()) as { status: number }).status).toBe(413)
  })

  it("after express.json(), the parser's own limit comes first, then the service's on the re-serialized body", async () => {
    const huge = JSON.stringify(campaignInput({ campaignName: 'x'.repeat(200 * 1024) }))
    // express.json()'s default limit (100kb) refuses first, answered by Express, not in the envelope.
    const strict = await app({ jsonBefore: true })
    const byParser = await strict.call('/affiliates/api/v1/campaigns', { method: 'POST', body: huge, byExpress: true })
    expect(byParser.status).toBe(413)
    expect(byParser.headers.get('content-type')).toContain('text/html')

    // With a looser parser, the service still applies its own 100 KiB to what it is handed.
    const loose = await app({ jsonBefore: true, jsonLimit: '1mb' })
    const byService = await loose.call('/affiliates/api/v1/campaigns', { method: 'POST', body: huge })
    expect(byService.status).toBe(413)
    expect(((await byService.json()) as { status: number }).status).toBe(413)
  })

  it('after express.json(), answers its parse errors on the service paths as the service does, with expressErrorHandler', async () => {
    const { call } = await app({ jsonBefore: true, errors: true })
    const malformed = await call('/affiliates/api/v1/campaigns', { method: 'POST', body: '{"campaignName":' })
    expect(malformed.status).toBe(400)
    expect(malformed.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await malformed.json()).toEqual({ status: 400, code: 'invalid_json', message: 'Invalid JSON body' })
    // The key is checked first, as when the service reads the body itself.
    const wrongKey = await call('/affiliates/api/v1/campaigns', {
      method: 'POST',
      body: '{"campaignName":',
      headers: { 'x-auth-service': 'wrong' },
    })
    expect(wrongKey.status).toBe(401)
    // Over the parser's limit: 413 in the envelope, naming the parser's limit.
    const huge = JSON.stringify(campaignInput({ campaignName: 'x'.repeat(200 * 1024) }))
    const tooLarge = await call('/affiliates/api/v1/campaigns', { method: 'POST', body: huge })
    expect(tooLarge.status).toBe(413)
    expect(await tooLarge.json()).toEqual({
      status: 413,
      code: 'body_too_large',
      message: 'Request body is larger than the limit of 102400 bytes',
    })
    // The parsed body of a good request still reaches the service.
    const created = await call('/affiliates/api/v1/campaigns', { method: 'POST', body: JSON.stringify(campaignInput()) })
    expect(created.status).toBe(201)
    // The app's own routes keep Express's own error handling.
    const own = await call('/own', { method: 'POST', body: '{"x":', byExpress: true })
    expect(own.status).toBe(400)
    expect(own.headers.get('content-type')).toContain('text/html')
  })
})
