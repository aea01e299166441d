// The service on PostgreSQL and Redis: records in one database, rate limits in one Redis, so any
// number of these processes can serve the same API behind a load balancer.
// Run it with `npm run example:postgres-redis` (see README.md beside this file).
import { createAffiliateService, memoryKeyStore, nameUuid, storageKeyStore, type KeyStore } from 'affiliate-service'
import { serve } from 'affiliate-service/node'
import { DEFAULT_SCHEMA, postgresStorage } from 'affiliate-service/postgres'
import { limiterPrefix, redisLimiterStore } from 'affiliate-service/redis'

const env = process.env
const schema = env.AFFILIATE_SCHEMA || DEFAULT_SCHEMA
const storage = postgresStorage({ connectionString: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', schema })
// One prefix per deployment (`<schema>:limit:`, as `npm start` makes it): instances sharing it share every key's bucket and in-flight cap.
const limiter = redisLimiterStore({ url: env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: limiterPrefix(schema) })
// Instances starting together take turns migrating (an advisory lock); both fail fast if a service is down.
await Promise.all([storage.ready(), limiter.ready()])

// The environment key's user id, derived from the key: every instance gives it the same one. The
// namespace is the one `npm start` uses, so a key keeps its user id whichever of them serves it.
const ENV_KEY_NAMESPACE = '73a74ff6-9c63-4a16-a1b0-ad25c284060c'

// Keys live in the database, so every instance knows every key and a revocation reaches them all.
// AFFILIATE_API_KEY with AFFILIATE_WORKSPACE_ID adds one from the environment (kept in memory only).
const stored = storageKeyStore(storage)
let keyStore: KeyStore = stored
if (env.AFFILIATE_API_KEY && env.AFFILIATE_WORKSPACE_ID) {
  const key = env.AFFILIATE_API_KEY
  const fromEnv = memoryKeyStore([{ key, userId: nameUuid(ENV_KEY_NAMESPACE, key), workspaceIds: [env.AFFILIATE_WORKSPACE_ID] }])
  keyStore = { resolve: async (presented) => (await fromEnv.resolve(presented)) ?? stored.resolve(presented) }
} else if ((await stored.list()).length === 0) {
  const { key, info } = await stored.create({ workspaceIds: [crypto.randomUUID()], label: 'made by examples/postgres-redis' })
  console.log(`Made an API key for workspace ${info.workspaceIds[0]}; it is shown once: ${key}`)
}

const service = createAffiliateService({ storage, keyStore, rateLimit: { store: limiter } })
const running = await serve(service, { port: Number(env.PORT ?? 3000) })
console.log(`affiliate-service (PostgreSQL ${schema}, Redis) listening on ${running.url}`)

// Graceful shutdown: stop accepting, let requests in flight finish, then close the pool and Redis.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void (async () => {
      await running.close()
      await Promise.all([storage.close(), limiter.close()])
      process.exit(0)
    })()
  })
}
