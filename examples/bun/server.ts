// The service on Bun. Run it with `npm run example:bun` (uses the bun binary from node_modules).
import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'
import { serve } from 'affiliate-service/bun'

const key = process.env.AFFILIATE_API_KEY ?? `demo_${crypto.randomUUID()}`
const workspaceId = process.env.AFFILIATE_WORKSPACE_ID ?? crypto.randomUUID()
if (!process.env.AFFILIATE_API_KEY) console.log(`demo API key: ${key}\nworkspace: ${workspaceId}`)

const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([{ key, userId: crypto.randomUUID(), workspaceIds: [workspaceId] }]),
})

const running = serve(service, { port: Number(process.env.PORT ?? 3000) })
console.log(`affiliate-service (bun) listening on ${running.url}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.close().then(() => process.exit(0)))
}
