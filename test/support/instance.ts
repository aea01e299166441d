// One instance of the service for the multi-instance test: the API over node:http on a shared
// PostgreSQL schema and a shared Redis limiter. Run with `node --import tsx test/support/instance.ts`.
//
// Environment: AFFILIATE_TEST_POSTGRES_URL, AFFILIATE_TEST_REDIS_URL, INSTANCE_SCHEMA,
// INSTANCE_PREFIX (Redis key prefix), INSTANCE_KEYS (JSON [{ key, userId, workspaceIds }]),
// INSTANCE_RATE_LIMIT (JSON { capacity, refillPerSecond, maxInFlight }), INSTANCE_WEBHOOKS (optional
// JSON `webhooks` options, e.g. { allowHttp: true, allowPrivateAddresses: true } for a local receiver).
// Prints `instance listening on <url>` when ready; SIGTERM closes everything and exits 0.
import { serve } from '../../adapters/node.js'
import { postgresStorage } from '../../adapters/postgres.js'
import { redisLimiterStore } from '../../adapters/redis.js'
import { createAffiliateService, memoryKeyStore, type MemoryKeyEntry } from '../../src/index.js'

const need = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`instance: ${name} is not set`)
  return value
}

const storage = postgresStorage({ connectionString: need('AFFILIATE_TEST_POSTGRES_URL'), schema: need('INSTANCE_SCHEMA') })
const limiter = redisLimiterStore({ url: need('AFFILIATE_TEST_REDIS_URL'), prefix: need('INSTANCE_PREFIX') })
// Both instances migrate at once on purpose: the advisory lock must make that safe.
await Promise.all([storage.ready(), limiter.ready()])

const service = createAffiliateService({
  storage,
  // The same keys in both instances hash to the same key ids, so they share buckets and retries.
  keyStore: memoryKeyStore(JSON.parse(need('INSTANCE_KEYS')) as MemoryKeyEntry[]),
  rateLimit: { ...(JSON.parse(need('INSTANCE_RATE_LIMIT')) as object), store: limiter },
  onError: (error) => console.error('instance: unexpected error', error),
  ...(process.env.INSTANCE_WEBHOOKS ? { webhooks: JSON.parse(process.env.INSTANCE_WEBHOOKS) as object } : {}),
})
const running = await serve(service, { port: 0 })
console.log(`instance listening on ${running.url}`)

process.once('SIGTERM', () => {
  void (async () => {
    await running.close()
    await Promise.all([storage.close(), limiter.close()])
    process.exit(0)
  })()
})
