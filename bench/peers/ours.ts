// Our whole service, as `npm start` runs it: memory storage, the memory key store, the per-key
// limiter on (at limits this load never reaches), served by the Node adapter's `serve()`.
import { keyEntries, UNREACHED, type Running } from './common.js'
import { library } from './library.js'
import type { Store } from './store.js'

export async function startOurs(store: Store): Promise<Running> {
  const { core, node, from } = await library()
  const service = core.createAffiliateService({ storage: store.storage, keyStore: core.memoryKeyStore(keyEntries), rateLimit: UNREACHED })
  const running = await node.serve(service, { port: 0 })
  return {
    server: running.server,
    origin: new URL(running.url).origin,
    note: `served by serve() of affiliate-service/node, from ${from}`,
    close: running.close,
  }
}
