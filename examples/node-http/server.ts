// The service on node:http. Run it with `npm run example:node` (PORT=0 picks a free port).
import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'
import { serve } from 'affiliate-service/node'

// A demo key for one workspace: from the environment, or made up and printed.
const key = process.env.AFFILIATE_API_KEY ?? `demo_${crypto.randomUUID()}`
const workspaceId = process.env.AFFILIATE_WORKSPACE_ID ?? crypto.randomUUID()
if (!process.env.AFFILIATE_API_KEY) console.log(`demo API key: ${key}\nworkspace: ${workspaceId}`)

const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([{ key, userId: crypto.randomUUID(), workspaceIds: [workspaceId] }]),
})

const running = await serve(service, { port: Number(process.env.PORT ?? 3000) })
console.log(`affiliate-service (node:http) listening on ${running.url}`)

// Graceful shutdown: stop accepting, let requests in flight finish, then exit.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.close().then(() => process.exit(0)))
}
