// The service inside an Express app (Express 4 or 5). Run it with `npm run example:express`.
import express from 'express'
import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'
import { expressAdapter, expressErrorHandler } from 'affiliate-service/express'

const key = process.env.AFFILIATE_API_KEY ?? `demo_${crypto.randomUUID()}`
const workspaceId = process.env.AFFILIATE_WORKSPACE_ID ?? crypto.randomUUID()
if (!process.env.AFFILIATE_API_KEY) console.log(`demo API key: ${key}\nworkspace: ${workspaceId}`)

const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([{ key, userId: crypto.randomUUID(), workspaceIds: [workspaceId] }]),
})

const app = express()
// The app's own body parser may run first: the service uses what it parsed, and
// expressErrorHandler answers its errors (malformed JSON, too large) in the service's JSON envelope.
app.use(express.json())
// Mounted under /affiliates: the API answers at /affiliates/api/v1/...; the app keeps its other routes.
// Making the adapter starts the service's background work (webhook delivery, click pruning).
app.use('/affiliates', expressAdapter(service), expressErrorHandler(service))
app.get('/', (_req, res) => {
  res.send('The app itself; the affiliate API is under /affiliates/api/v1')
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  console.log(`affiliate-service (express) listening on http://127.0.0.1:${port}/affiliates/api/v1`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // Once the requests in flight are answered: the clicks waiting written, webhook attempts recorded.
    server.close(() => void service.close().then(() => process.exit(0)))
    server.closeIdleConnections()
  })
}
