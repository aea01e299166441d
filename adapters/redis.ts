// `affiliate-service/redis`: the LimiterStore contract on Redis (one Lua script per decision),
// through a client of yours (node-redis or ioredis), or one made from a url by `redis` (node-redis,
// an optional peer, loaded only then).
export { DEFAULT_LEASE_MS, DEFAULT_PREFIX, redisLimiterStore } from './redis/store.js'
export { limiterPrefix } from './deployment.js'
export type { RedisCallClient, RedisCommandClient, RedisLimiterStore, RedisLimiterStoreOptions } from './redis/store.js'
