import { bytesToHex } from '@noble/hashes/utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { lightResponse, untouchedParts } from '../../adapters/node/light-response.js'
import { nodeRuntime } from '../../adapters/node/runtime.js'
import { memoryKeyStore, memoryStorage, storageKeyStore } from '../../src/index.js'
import { portableRuntime } from '../../src/runtime.js'
import { setup } from '../support/helpers.js'

// What the Node adapter hands the service (adapters/node/runtime.ts): the same bytes as the
// portable runtime, and light Responses that behave as real ones to whoever reads them.

describe('nodeRuntime', () => {
  it('hashes exactly as the portable runtime, for any key and text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.string({ unit: 'binary' }), (key, text) => {
        expect(bytesToHex(nodeRuntime.hmacSha256(key, text))).toBe(bytesToHex(portableRuntime.hmacSha256(key, text)))
        expect(bytesToHex(nodeRuntime.sha256(text))).toBe(bytesToHex(portableRuntime.sha256(text)))
        expect(nodeRuntime.sha256Hex(text)).toBe(portableRuntime.sha256Hex(text))
      }),
      { numRuns: 300 },
    )
  })

  it('encodes base64url exactly as the portable runtime, subarrays included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(8), (bytes, skip) => {
        const part = bytes.subarray(Math.min(skip, bytes.length))
        expect(nodeRuntime.base64url(part)).toBe(portableRuntime.base64url(part))
      }),
      { numRuns: 500 },
    )
  })

  it("resolves keys in the key stores as the portable hash does (a key made by one is found with the other's)", async () => {
    const keys = memoryKeyStore([{ key: 'sk_test_same', userId: 'u', workspaceIds: ['11111111-1111-4111-8111-111111111111'], keyId: 'k' }])
    expect((await keys.resolve('sk_test_same', nodeRuntime))?.keyId).toBe('k')
    expect((await keys.resolve('sk_test_same'))?.keyId).toBe('k')
    const stored = storageKeyStore(memoryStorage())
    const { key } = await stored.create({ workspaceIds: ['11111111-1111-4111-8111-111111111111'] })
    expect((await stored.resolve(key, nodeRuntime))?.workspaceIds).toEqual(['11111111-1111-4111-8111-111111111111'])
    expect(await stored.resolve(`${key}x`, nodeRuntime)).toBeNull()
  })

  it('is what the service answers with when the caller passes it; without it, a real Response (Bun, Deno and workers read theirs natively)', async () => {
    const { service } = setup()
    const light = await service.fetch(new Request('http://test.local/api/v1/health'), { runtime: nodeRuntime })
    expect(untouchedParts(light)?.status).toBe(200)
    const real = await service.fetch(new Request('http://test.local/api/v1/health'))
    expect(untouchedParts(real)).toBeUndefined()
    expect(Object.getPrototypeOf(real)).toBe(Response.prototype)
    expect((await real.json()).status).toBe('ok')
  })
})

const make = () =>
  lightResponse({ status: 201, headers: { 'content-type': 'application/json; charset=utf-8', 'x-a': '1' }, body: '{"ok":true}' })

describe('lightResponse', () => {
  it('is a Response to anyone who checks, with its status and headers', () => {
    const response = make()
    expect(response).toBeInstanceOf(Response)
    expect([response.status, response.ok]).toEqual([201, true])
    expect(response.headers.get('x-a')).toBe('1')
    expect([...response.headers.keys()]).toEqual(['content-type', 'x-a'])
    expect(response.statusText).toBe('')
    expect(response.type).toBe('default')
  })

  it('gives its text once, like a real body', async () => {
    const response = make()
    expect(response.bodyUsed).toBe(false)
    expect(await response.text()).toBe('{"ok":true}')
    expect(response.bodyUsed).toBe(true)
    await expect(response.text()).rejects.toThrow(TypeError)
    await expect(response.arrayBuffer()).rejects.toThrow(TypeError)
    expect(await make().json()).toEqual({ ok: true })
  })

  it('becomes a real Response for anything else, keeping headers set before', async () => {
    const response = make()
    response.headers.set('x-b', '2')
    const copy = response.clone()
    expect(copy.headers.get('x-b')).toBe('2')
    expect(await new Response(response.body).text()).toBe('{"ok":true}')
    expect(await copy.text()).toBe('{"ok":true}')
    expect(new Uint8Array(await make().arrayBuffer())).toEqual(new TextEncoder().encode('{"ok":true}'))
  })

  it('hands its parts to a server only while untouched', async () => {
    expect(untouchedParts(make())).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-a': '1' },
      body: '{"ok":true}',
    })
    const read = make()
    await read.text()
    expect(untouchedParts(read)).toBeUndefined()
    const changed = make()
    changed.headers.set('x-b', '2')
    expect(untouchedParts(changed)).toBeUndefined()
    const streamed = make()
    void streamed.body
    expect(untouchedParts(streamed)).toBeUndefined()
    expect(untouchedParts(new Response('x'))).toBeUndefined()
  })

  it('answers a HEAD without a body', async () => {
    const head = lightResponse({ status: 200, headers: {}, body: null })
    expect(head.body).toBeNull()
    expect(await lightResponse({ status: 200, headers: {}, body: null }).text()).toBe('')
  })
})

describe('the Node adapter and a host that changes the answer', () => {
  it('writes what the host changed, not the parts it started from', async () => {
    const { createServer } = await import('node:http')
    const { toNodeListener } = await import('../../adapters/node.js')
    const { setup } = await import('../support/helpers.js')
    const { service } = setup()
    const server = createServer(
      toNodeListener({
        fetch: async (request: Request) => {
          const response = await service.fetch(request)
          response.headers.set('x-host', 'was-here')
          return response
        },
      }),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as { port: number }
      const answer = await fetch(`http://127.0.0.1:${port}/api/v1/health`)
      expect(answer.headers.get('x-host')).toBe('was-here')
      expect((await answer.json()).status).toBe('ok')
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
