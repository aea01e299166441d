import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import {
  createAffiliateService,
  memoryKeyStore,
  memoryStorage,
  sqlJsStorage,
  storageKeyStore,
  type KeyManagement,
  type KeyStore,
} from '../../src/index.js'
import { manualClock, WS_A, WS_B } from '../support/helpers.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

// The key store contract's management half (create, list, revoke, lastUsedAt) on every key store
// of the package; a revoked key is refused by the very next request, on every instance.

type Managed = KeyStore & KeyManagement
const stores: [string, (clock: ReturnType<typeof manualClock>) => Managed][] = [
  ['memoryKeyStore', (clock) => memoryKeyStore([], { clock })],
  ['storageKeyStore on memory', (clock) => storageKeyStore(memoryStorage(), { clock })],
  ['storageKeyStore on sql.js', (clock) => storageKeyStore(sqlJsStorage(), { clock })],
]

const health = (service: { fetch(r: Request): Promise<Response> }, key: string) =>
  service
    .fetch(new Request(`http://x/api/v1/campaigns/list?workspaceId=${WS_A}`, { headers: { 'x-auth-service': key } }))
    .then((r) => r.status)

describe.each(stores)('%s manages keys', (_, make) => {
  it('creates secret and publishable keys with label, prefix, kind, createdAt, lastUsedAt; lists them; revokes one', async () => {
    const clock = manualClock()
    const keys = make(clock)
    const secret = await keys.create({ workspaceIds: [WS_A], label: 'billing' })
    clock.advance(1_000)
    const publishable = await keys.create({
      workspaceIds: [WS_B],
      label: 'shop',
      kind: 'publishable',
      allowedOrigins: ['https://shop.example.com'],
    })
    expect(secret.key).toMatch(/^aff_live_[A-Za-z0-9]{32}$/)
    expect(publishable.key).toMatch(/^pk_live_[A-Za-z0-9]{32}$/)
    expect(secret.info).toMatchObject({
      label: 'billing',
      prefix: secret.key.slice(0, 8),
      kind: 'secret',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUsedAt: null,
      revokedAt: null,
    })
    expect(publishable.info).toMatchObject({ kind: 'publishable', allowedOrigins: ['https://shop.example.com'] })
    expect((await keys.list()).map((info) => info.keyId)).toEqual([secret.info.keyId, publishable.info.keyId])
    expect((await keys.list({ workspaceId: WS_B })).map((info) => info.keyId)).toEqual([publishable.info.keyId])
    expect(JSON.stringify(await keys.list())).not.toContain(secret.key.slice(8))

    const service = createAffiliateService({ storage: memoryStorage(), keyStore: keys, clock })
    clock.advance(4_000)
    expect(await health(service, secret.key)).toBe(200)
    expect(await keys.lastUsedAt(secret.info.keyId)).toBe('2026-01-01T00:00:05.000Z')
    expect(await keys.lastUsedAt(publishable.info.keyId)).toBeNull()

    expect(await keys.revoke(secret.info.keyId)).toBe(true)
    expect(await keys.revoke(secret.info.keyId)).toBe(false)
    expect(await health(service, secret.key)).toBe(401)
    expect((await keys.list())[0]).toMatchObject({ keyId: secret.info.keyId, revokedAt: '2026-01-01T00:00:05.000Z' })
  })
})

describe.skipIf(!postgresUrl)(needs('PostgreSQL key store', POSTGRES_VAR), () => {
  const schema = uniqueName('keys')
  let pool: Awaited<ReturnType<typeof testPool>>
  beforeAll(async () => {
    pool = await testPool()
  })
  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
  })

  it('revokes a key on one instance and the other refuses it on its next request; lastUsedAt is shared', async () => {
    const clock = manualClock()
    const [one, two] = [0, 1].map(() => {
      const storage = postgresStorage({ pool, schema })
      const keyStore = storageKeyStore(storage, { clock })
      return { keyStore, service: createAffiliateService({ storage, keyStore, clock }) }
    })
    await one!.keyStore.list()
    const { key, info } = await one!.keyStore.create({ workspaceIds: [WS_A], label: 'shared' })
    expect(await health(two!.service, key)).toBe(200)
    expect(await one!.keyStore.lastUsedAt(info.keyId)).toBe('2026-01-01T00:00:00.000Z')
    expect(await health(one!.service, key)).toBe(200)
    expect(await two!.keyStore.revoke(info.keyId)).toBe(true)
    expect(await health(one!.service, key)).toBe(401)
    expect(await health(two!.service, key)).toBe(401)
    expect((await one!.keyStore.list())[0]).toMatchObject({
      keyId: info.keyId,
      label: 'shared',
      prefix: 'aff_live',
      kind: 'secret',
      revokedAt: '2026-01-01T00:00:00.000Z',
    })
  })
})
