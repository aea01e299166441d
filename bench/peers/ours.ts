// Our whole service, as `npm start` runs it: memory storage, the memory key store, the per-key
// limiter on (at limits this load never reaches), served by the Node adapter's `serve()`.
import { createServer, type IncomingMessage } from 'node:http'
import { createAffiliateService, memoryKeyStore, type AffiliateService } from '../../src/index.js'
import { keyEntries, listen, UNREACHED, type Running } from './common.js'
import type { Store } from './store.js'

export async function startOurs(store: Store): Promise<Running> {
  const service = createAffiliateService({ storage: store.storage, keyStore: memoryKeyStore(keyEntries), rateLimit: UNREACHED })
  let adapter: typeof import('../../adapters/node.js')
  try {
    adapter = await import('../../adapters/node.js')
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error)
    return listen(bridge(service), `NOT the Node adapter (it does not load: ${why}); a node:http bridge in bench/peers/ours.ts`)
  }
  const running = await adapter.serve(service, { port: 0 })
  return { server: running.server, origin: new URL(running.url).origin, note: 'served by serve() of adapters/node.ts', close: running.close }
}

/**
 * Stand-in for the Node adapter while it does not load in this tree: the request as a web Request
 * (body read first), `service.fetch`, the Response written with one `end()`. Remove once
 * adapters/node.ts loads again (the try above then never falls back).
 */
function bridge(service: AffiliateService) {
  const bodyOf = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => resolve(Buffer.concat(chunks)))
      req.on('error', reject)
    })
  return createServer(async (req, res) => {
    const method = req.method ?? 'GET'
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value)
    const body = method === 'GET' || method === 'HEAD' ? undefined : new Uint8Array(await bodyOf(req))
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method, headers, body })
    const response = await service.fetch(request, { clientAddress: req.socket.remoteAddress })
    const bytes = Buffer.from(await response.arrayBuffer())
    res.writeHead(response.status, { ...Object.fromEntries(response.headers), 'content-length': bytes.length })
    res.end(bytes)
  })
}
