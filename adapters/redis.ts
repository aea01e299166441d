// `affiliate-service/redis`: the LimiterStore contract on Redis (one Lua script per decision),
// through `redis` (node-redis, an optional peer) or any client that can send a command.
export { DEFAULT_LEASE_MS, DEFAULT_PREFIX, redisLimiterStore } from './redis/store.js'
export type { RedisCommandClient, RedisLimiterStore, RedisLimiterStoreOptions } from './redis/store.js'
