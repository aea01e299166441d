// One Redis limiter prefix per deployment, the same however it was set up: the README's
// documented default, the store's own default, `npm start` (bin/env.ts) with or without
// AFFILIATE_SCHEMA naming the default schema, and the PostgreSQL + Redis example. Instances set up
// from any two of them must count each key in one bucket.
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_SCHEMA } from '../../adapters/postgres.js'
import { DEFAULT_PREFIX, limiterPrefix, redisLimiterStore } from '../../adapters/redis.js'
import { limiterFromEnv } from '../../bin/env.js'
import { deleteKeys, needs, REDIS_VAR, redisUrl, testRedis } from '../support/services.js'

// The variables' table is docs/configuration.md; prefixes are spelled out in the README and the guides.
const configuration = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
const readme = [
  '../../README.md',
  '../../docs/operations.md',
  '../../docs/limits.md',
  '../../docs/embedding.md',
  '../../docs/configuration.md',
]
  .map((path) => readFileSync(new URL(path, import.meta.url), 'utf8'))
  .join('\n')
const rule = { capacity: 5, refillPerSecond: 5, maxInFlight: 5 }

/** The default the README documents: the `AFFILIATE_SCHEMA` row's default, in its `<schema>:limit:` prefix. */
function documentedPrefix(): string {
  const row = configuration.split('\n').find((line) => line.startsWith('| `AFFILIATE_SCHEMA` |'))
  expect(row, 'docs/configuration.md has an AFFILIATE_SCHEMA row').toBeDefined()
  const cells = row!.split('|').map((cell) => cell.trim())
  expect(cells[2]).toContain('Redis prefix `<schema>:limit:`')
  const schema = /^`([^`]+)`$/.exec(cells[3]!)?.[1]
  expect(schema, 'the row names a default schema').toBeDefined()
  return `${schema}:limit:`
}

describe('the Redis limiter prefix', () => {
  it('the README documents the default the store and the PostgreSQL schema use', () => {
    const documented = documentedPrefix()
    expect(DEFAULT_PREFIX).toBe(documented)
    expect(limiterPrefix()).toBe(documented)
    expect(limiterPrefix(DEFAULT_SCHEMA)).toBe(documented)
    // Every prefix the README spells out is the default (its examples set up the default deployment).
    const spelled = [...readme.matchAll(/prefix: '([^']+)'/g)].map((match) => match[1])
    expect(spelled.length).toBeGreaterThan(0)
    for (const prefix of spelled) expect(prefix).toBe(documented)
    // So does the store's JSDoc.
    const store = readFileSync(new URL('../../adapters/redis/store.ts', import.meta.url), 'utf8')
    expect(store).toContain(`@default '${documented}'`)
  })

  describe.skipIf(!redisUrl)(needs('npm start and the adapter write under it', REDIS_VAR), () => {
    const keys: string[] = []
    afterAll(async () => {
      const client = await testRedis()
      for (const key of keys) await deleteKeys(client, `${DEFAULT_PREFIX}{${key}}`)
      await client.close()
    })

    /** The prefixes under which a consume of a fresh key through `store` wrote. */
    async function prefixesOf(store: { consume: (key: string, r: typeof rule, now: number) => Promise<unknown>; close(): Promise<void> }) {
      const key = `prefix-check-${crypto.randomUUID()}`
      keys.push(key)
      try {
        await store.consume(key, rule, Date.now())
      } finally {
        await store.close()
      }
      const client = await testRedis()
      try {
        const found = await client.keys(`*{${key}}*`)
        expect(found.length).toBeGreaterThan(0)
        return [...new Set(found.map((name) => name.slice(0, name.indexOf(`{${key}}`))))]
      } finally {
        await client.close()
      }
    }

    it('npm start (REDIS_URL alone, or with AFFILIATE_SCHEMA naming the default) and redisLimiterStore({ url }) agree with the README', async () => {
      const documented = documentedPrefix()
      const started = await limiterFromEnv({ REDIS_URL: redisUrl })
      expect(await prefixesOf(started!.store)).toEqual([documented])
      const named = await limiterFromEnv({ REDIS_URL: redisUrl, AFFILIATE_SCHEMA: DEFAULT_SCHEMA })
      expect(await prefixesOf(named!.store)).toEqual([documented])
      expect(await prefixesOf(redisLimiterStore({ url: redisUrl! }))).toEqual([documented])
    })
  })
})
