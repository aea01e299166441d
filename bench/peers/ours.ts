// Our whole service, as `npm start` runs it: memory storage, the memory key store, the per-key
// limiter on (at limits this load never reaches), served by the Node adapter's `serve()`.
import { serve } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore } from '../../src/index.js'
import { keyEntries, UNREACHED, type Running } from './common.js'
import type { Store } from './store.js'

export async function startOurs(store: Store): Promise<Running> {
  const service = createAffiliateService({ storage: store.storage, keyStore: memoryKeyStore(keyEntries), rateLimit: UNREACHED })
  const running = await serve(service, { port: 0 })
  return { server: running.server, origin: new URL(running.url).origin, note: 'served by serve() of adapters/node.ts', close: running.close }
}
