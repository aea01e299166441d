// The names a deployment's parts go by when none is given: its PostgreSQL schema, and the Redis
// limiter prefix made from it. One place, so that instances set up from the README, the example
// and `npm start` count every key in the same buckets.

/** The PostgreSQL schema holding the tables. */
export const DEFAULT_SCHEMA = 'affiliate_service'

/**
 * The Redis limiter prefix of the deployment whose schema is `schema`: `<schema>:limit:`.
 * @default 'affiliate_service:limit:' (the default schema's)
 * @example redisLimiterStore({ url, prefix: limiterPrefix('shop_eu') }) // 'shop_eu:limit:'
 */
export const limiterPrefix = (schema: string = DEFAULT_SCHEMA): string => `${schema}:limit:`
