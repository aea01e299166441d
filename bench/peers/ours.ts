// Our whole service, as `npm start` runs it: memory storage, the memory key store, the per-key
// limiter on (at limits this load never reaches), served by the Node adapter's `serve()`.
import type { Server } from 'node:http'
import { createAdaptorServer } from '@hono/node-server'
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
    return listen(bridge(service), `NOT our Node adapter (it does not load: ${why}); bridged by @hono/node-server's listener (bench/peers/ours.ts)`)
  }
  const running = await adapter.serve(service, { port: 0 })
  return { server: running.server, origin: new URL(running.url).origin, note: 'served by serve() of adapters/node.ts', close: running.close }
}

/**
 * Stand-in for our Node adapter while it does not load in this tree: `service.fetch` behind
 * @hono/node-server's request listener (a lazy web Request over the IncomingMessage, which the
 * service reads the client address from), the closest published equivalent of what the adapter
 * does. Remove once adapters/node.ts loads again (the import above then never fails).
 */
const bridge = (service: AffiliateService) => createAdaptorServer({ fetch: (request, env) => service.fetch(request, env) }) as Server
