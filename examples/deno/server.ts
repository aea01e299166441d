// The service on Deno. Run it with `npm run example:deno` (uses the deno binary from node_modules;
// the repository's deno.json maps `affiliate-service` to the sources and reads npm packages from node_modules).
import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'
import { serve } from 'affiliate-service/deno'

const key = Deno.env.get('AFFILIATE_API_KEY') ?? `demo_${crypto.randomUUID()}`
const workspaceId = Deno.env.get('AFFILIATE_WORKSPACE_ID') ?? crypto.randomUUID()
if (!Deno.env.get('AFFILIATE_API_KEY')) console.log(`demo API key: ${key}\nworkspace: ${workspaceId}`)

const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([{ key, userId: crypto.randomUUID(), workspaceIds: [workspaceId] }]),
})

const running = serve(service, { port: Number(Deno.env.get('PORT') ?? 3000) })
console.log(`affiliate-service (deno) listening on ${running.url}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  Deno.addSignalListener(signal, () => void running.close().then(() => Deno.exit(0)))
}
