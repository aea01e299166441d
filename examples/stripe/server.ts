// The service on node:http with Stripe connected: a paid invoice becomes a commission. Run it with
// `npm run example:stripe`, then forward Stripe's events to the printed URL with the Stripe CLI.
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

// The signing secret `stripe listen` prints (or the dashboard endpoint's); a placeholder until then.
const signingSecret = process.env.STRIPE_WEBHOOK_SECRET ?? 'whsec_replace_me'
const integration = await service.api.integrations.create({
  workspaceId,
  provider: 'stripe',
  signingSecret,
  livemode: false,
  description: 'Stripe (example)',
})

const running = await serve(service, { port: Number(process.env.PORT ?? 3000) })
console.log(`affiliate-service (node:http) listening on ${running.url}`)
const endpoint = new URL(integration.endpointPath, running.url).href
console.log(`Stripe events endpoint: ${endpoint}`)
console.log(`forward test events:    stripe listen --forward-to ${endpoint}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.close().then(() => process.exit(0)))
}
