import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { toNodeListener } from '../../adapters/node.js'
import { campaignInput, KEY_A, setup } from '../support/helpers.js'

// A body whose size is declared is read in one piece from the IncomingMessage: whatever chunks it
// arrives in, the service gets exactly its bytes.

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function listen(handler: Parameters<typeof toNodeListener>[0]) {
  const server = createServer(toNodeListener(handler))
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

/** A POST whose body goes out in pieces, `pauseMs` apart. */
function postInPieces(port: number, path: string, pieces: string[], pauseMs: number, headers: Record<string, string> = {}) {
  const length = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0)
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({
      hostname: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': length, ...headers },
    })
    req.once('response', (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => (body += chunk.toString()))
      res.once('end', () => resolve({ status: res.statusCode!, body }))
    })
    req.once('error', reject)
    req.flushHeaders()
    void (async () => {
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, pauseMs))
        if (i === pieces.length - 1) req.end(piece)
        else req.write(piece)
      }
    })()
  })
}

describe('a declared body through the Node adapter', () => {
  it('arrives whole, in an ArrayBuffer of its own size, however it was cut', async () => {
    const port = await listen({ fetch: async (r: Request) => new Response(new TextDecoder().decode(await r.arrayBuffer())) })
    const text = JSON.stringify({ hello: 'wörld', list: Array.from({ length: 50 }, (_, i) => i) })
    const cut = [text.slice(0, 7), text.slice(7, 100), text.slice(100)]
    expect((await postInPieces(port, '/', cut, 30)).body).toBe(text)
    expect((await postInPieces(port, '/', [text], 0)).body).toBe(text)
    const sized = await listen({ fetch: async (r: Request) => new Response(String((await r.arrayBuffer()).byteLength)) })
    expect((await postInPieces(sized, '/', cut, 10)).body).toBe(String(Buffer.byteLength(text)))
  })

  it('creates the record when its body comes in two pieces', async () => {
    const { service } = setup()
    const port = await listen(service)
    const text = JSON.stringify(campaignInput())
    const answer = await postInPieces(port, '/api/v1/campaigns', [text.slice(0, 20), text.slice(20)], 100, { 'x-auth-service': KEY_A })
    expect(answer.status, answer.body).toBe(201)
  })
})
