// `affiliate-service/redis` without node-redis: a host passing its own client (node-redis's
// `sendCommand`, or ioredis's `call`) needs no `redis` package; `redis` is loaded only for a `url`,
// and a `url` that does not answer fails at once, saying where (without the password).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RedisClientType } from 'redis'
import { build } from 'tsup'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisLimiterStore, type RedisCallClient } from '../../adapters/redis.js'
import { CONSUME_SHA } from '../../adapters/redis/scripts.js'
import type { RateLimitRule } from '../../src/index.js'
import { deleteKeys, needs, REDIS_VAR, redisUrl, testRedis, uniqueName } from '../support/services.js'

const T0 = 1_767_225_600_000
const root = join(import.meta.dirname, '..', '..')

describe('the built adapter, where no `redis` package can be found', () => {
  // A directory of its own under the system's temp dir: no node_modules above it holds `redis`.
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-redis-build-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  beforeAll(async () => {
    // Built as the package builds it (bundled, `redis` external), from this entry alone.
    await build({
      config: false,
      entry: { redis: join(root, 'adapters/redis.ts') },
      outDir: dir,
      format: ['esm', 'cjs'],
      target: 'node20',
      external: ['redis'],
      dts: false,
      sourcemap: false,
      splitting: true,
      silent: true,
    })
    // ESM output is read as ESM whatever package.json is (not) above it.
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  }, 60_000)

  const run = (script: string): string =>
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    })

  // The host's client, in the child: answers PING and one consume (the script's reply: allowed, tokens, at).
  const host = (load: string) => `
    const { redisLimiterStore } = ${load}
    const sent = []
    const client = { call: async (command, ...args) => (sent.push(command), command === 'PING' ? 'PONG' : command === 'EVALSHA' ? [1, '4000', String(args[4])] : 1) }
    const store = redisLimiterStore({ client })
    await store.ready()
    const decision = await store.consume('k', { capacity: 5, refillPerSecond: 5, maxInFlight: 5 }, ${T0})
    await store.release('k', decision.lease)
    const failed = await redisLimiterStore({ url: 'redis://:hunter2@127.0.0.1:6379' }).ready().then(() => 'connected', (error) => error.message)
    console.log(JSON.stringify({ sent, allowed: decision.allowed, failed }))`

  it('really cannot find `redis` from there', () => {
    expect(() => createRequire(join(dir, 'x.js')).resolve('redis')).toThrow()
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['redis.js', 'redis.cjs']))
  })

  it.each([
    ['ESM', `await import('./redis.js')`],
    ['CommonJS', `(await import('node:module')).createRequire(import.meta.url)('./redis.cjs')`],
  ])('%s: loads, serves a host client with `call`, and says to install redis only when a url is given', (_, load) => {
    const out = JSON.parse(run(host(load))) as { sent: string[]; allowed: boolean; failed: string }
    expect(out.sent).toEqual(['PING', 'EVALSHA', 'ZREM'])
    expect(out.allowed).toBe(true)
    expect(out.failed).toMatch(/needs the `redis` package/)
    expect(out.failed).toMatch(/npm i(nstall)? redis/)
    expect(out.failed).not.toContain('hunter2')
  })
})

describe('a url that does not answer', () => {
  it('fails ready() at once, naming the url without its password', async () => {
    const started = Date.now()
    const store = redisLimiterStore({ url: 'redis://:hunter2@127.0.0.1:1' })
    const error = await store.ready().then(
      () => null,
      (caught: unknown) => caught as Error,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error!.message).toMatch(/Redis at redis:\/\/:\*+@127\.0\.0\.1:1 does not answer/)
    expect(error!.message).not.toContain('hunter2')
    expect(Date.now() - started).toBeLessThan(3_000)
    // A later call tries again (and fails the same way) instead of waiting forever.
    await expect(store.consume('k', { capacity: 1, refillPerSecond: 1, maxInFlight: 1 }, T0)).rejects.toThrow(/does not answer/)
    await store.close()
  })
})

describe.skipIf(!redisUrl)(needs('Redis limiter store through an ioredis-shaped client', REDIS_VAR), () => {
  const prefix = `${uniqueName('limit_call')}:`
  let client: RedisClientType
  let sendCommands = 0
  /** What ioredis offers (`call(command, ...args)`), and nothing node-redis-shaped, over a node-redis client. */
  let ioredisLike: RedisCallClient

  beforeAll(async () => {
    client = await testRedis()
    ioredisLike = {
      call: (command: string, ...args: (string | number)[]) => {
        sendCommands++
        return client.sendCommand([command, ...args.map(String)])
      },
    }
  })
  afterAll(async () => {
    await deleteKeys(client, prefix)
    await client.close()
  })

  it('decides, releases its own slot, and falls back to EVAL after SCRIPT FLUSH, all through `call`', async () => {
    const store = redisLimiterStore({ client: ioredisLike, prefix })
    await store.ready()
    const rule: RateLimitRule = { capacity: 3, refillPerSecond: 0.001, maxInFlight: 2 }
    await client.scriptFlush()
    const first = await store.consume('key', rule, T0)
    expect(await client.scriptExists(CONSUME_SHA)).toEqual([1])
    const second = await store.consume('key', rule, T0 + 1)
    expect([first.allowed, second.allowed]).toEqual([true, true])
    expect((await store.consume('key', rule, T0 + 2)).allowed).toBe(false) // the in-flight cap
    await store.release('key', first.lease)
    expect(await client.zRange(`${prefix}{key}:leases`, 0, -1)).toEqual([second.lease])
    const third = await store.consume('key', rule, T0 + 3)
    expect(third.allowed).toBe(true)
    expect((await store.consume('key', rule, T0 + 4)).remaining).toBe(0)
    expect(sendCommands).toBeGreaterThan(6)
    await store.close() // never closes a client it was given
    expect(await client.ping()).toBe('PONG')
  })

  it('made from a url and closed while it connects: nothing is left open, and later calls are refused', async () => {
    const store = redisLimiterStore({ url: redisUrl!, prefix })
    const ready = store.ready()
    await store.close()
    await expect(ready).rejects.toThrow(/closed/)
    await expect(store.consume('late', { capacity: 1, refillPerSecond: 1, maxInFlight: 1 }, T0)).rejects.toThrow(/closed/)
    const connected = redisLimiterStore({ url: redisUrl!, prefix })
    await connected.ready()
    await connected.close()
    await expect(connected.release('late')).rejects.toThrow(/closed/)
  })

  it('prefers `call` on a client that has both (ioredis has a `sendCommand` taking another shape)', async () => {
    const both = { call: ioredisLike.call, sendCommand: () => Promise.reject(new Error('not this one')) }
    const store = redisLimiterStore({ client: both, prefix })
    await store.ready()
    expect((await store.consume('both', { capacity: 1, refillPerSecond: 1, maxInFlight: 1 }, T0)).allowed).toBe(true)
  })
})
