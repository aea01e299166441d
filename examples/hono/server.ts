// The service inside a Hono app on Node (@hono/node-server). Run it with `npm run example:hono`.
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'

const key = process.env.AFFILIATE_API_KEY ?? `demo_${crypto.randomUUID()}`
const workspaceId = process.env.AFFILIATE_WORKSPACE_ID ?? crypto.randomUUID()
if (!process.env.AFFILIATE_API_KEY) console.log(`demo API key: ${key}\nworkspace: ${workspaceId}`)

// Hono hands the request on with its prefix: the service answers under /affiliates/api/v1.
const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([{ key, userId: crypto.randomUUID(), workspaceIds: [workspaceId] }]),
  basePath: '/affiliates/api/v1',
})

const app = new Hono()
// Pass `c.env` on: under @hono/node-server it holds the Node request, whose socket gives the client
// address the per-address limits (wrong keys, tracking) count by. Without it they cannot apply.
app.all('/affiliates/*', (c) => service.fetch(c.req.raw, c.env))
app.get('/', (c) => c.text('The app itself; the affiliate API is under /affiliates/api/v1'))

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`affiliate-service (hono) listening on http://127.0.0.1:${info.port}/affiliates/api/v1`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => server.close(() => process.exit(0)))
}
