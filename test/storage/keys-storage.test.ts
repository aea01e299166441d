import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/crypto.js'
import { createAffiliateService, memoryStorage, sqlJsStorage, storageKeyStore, type Storage } from '../../src/index.js'
import { campaignInput, manualClock, WS_A, WS_B } from '../support/helpers.js'

const storages: [string, () => Storage][] = [
  ['memory', () => memoryStorage()],
  ['sql.js', () => sqlJsStorage()],
]

describe.each(storages)('storageKeyStore on %s storage', (_, makeStorage) => {
  it('makes aff_live_ keys with 32 random characters, each resolving to its principal', async () => {
    const keys = storageKeyStore(makeStorage())
    const made = await Promise.all(Array.from({ length: 50 }, () => keys.create({ workspaceIds: [WS_A.toUpperCase()], label: 'x' })))
    for (const { key } of made) expect(key).toMatch(/^aff_live_[A-Za-z0-9]{32}$/)
    expect(new Set(made.map(({ key }) => key)).size).toBe(50)
    const { key, info } = made[7]!
    expect(await keys.resolve(key)).toEqual({ keyId: info.id, userId: info.userId, workspaceIds: [WS_A] })
    expect(info.prefix).toBe(key.slice(0, 8))
  })

  it('keeps only the hash: neither the stored record nor list holds the key', async () => {
    const storage = makeStorage()
    const keys = storageKeyStore(storage, { clock: manualClock() })
    const { key, info } = await keys.create({ workspaceIds: [WS_A], userId: '44444444-4444-4444-8444-444444444444' })
    const record = await storage.transaction((tx) => tx.get('apiKeys', info.id))
    const hash = await sha256Hex(key)
    expect(record).toMatchObject({ hash, lookup: hash.slice(0, 16), prefix: key.slice(0, 13), revokedAt: null })
    expect(JSON.stringify(record)).not.toContain(key.slice(13))
    const listed = await keys.list()
    expect(listed).toEqual([
      {
        id: info.id,
        keyId: info.id,
        prefix: key.slice(0, 8),
        lastUsedAt: null,
        userId: '44444444-4444-4444-8444-444444444444',
        workspaceIds: [WS_A],
        label: '',
        createdAt: '2026-01-01T00:00:00.000Z',
        revokedAt: null,
        kind: 'secret',
        allowedOrigins: [],
      },
    ])
    expect(JSON.stringify(listed)).not.toContain(key.slice(13))
    expect(JSON.stringify(listed)).not.toContain(hash)
  })

  it('refuses unknown, empty and overlong keys, and a record that shares only the look-up prefix', async () => {
    const storage = makeStorage()
    const keys = storageKeyStore(storage)
    const { key } = await keys.create({ workspaceIds: [WS_A] })
    expect(await keys.resolve(`${key}x`)).toBeNull()
    expect(await keys.resolve('')).toBeNull()
    expect(await keys.resolve('a'.repeat(10_000))).toBeNull()
    const guess = 'aff_live_guess'
    const lookup = (await sha256Hex(guess)).slice(0, 16)
    await storage.transaction((tx) =>
      tx.insert('apiKeys', {
        id: 'planted',
        hash: `${lookup}${'0'.repeat(48)}`,
        lookup,
        prefix: 'aff_live_gues',
        userId: 'u',
        workspaceIds: [WS_B],
        label: '',
        revokedAt: null,
        kind: 'secret',
        allowedOrigins: [],
        lastUsedAt: null,
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      }),
    )
    expect(await keys.resolve(guess)).toBeNull()
  })

  it('refuses a revoked key at once, through any store on the same storage', async () => {
    const storage = makeStorage()
    const keys = storageKeyStore(storage)
    const other = storageKeyStore(storage)
    const [a, b] = [await keys.create({ workspaceIds: [WS_A] }), await keys.create({ workspaceIds: [WS_B] })]
    expect(await other.resolve(a.key)).not.toBeNull()
    expect(await other.revoke(a.info.id)).toBe(true)
    expect(await keys.resolve(a.key)).toBeNull()
    expect(await other.resolve(a.key)).toBeNull()
    expect(await keys.resolve(b.key)).not.toBeNull()
    expect(await keys.revoke(a.info.id)).toBe(false)
    expect(await keys.revoke('no-such-key')).toBe(false)
    const states = Object.fromEntries((await keys.list()).map((key) => [key.id, key.revokedAt !== null]))
    expect(states).toEqual({ [a.info.id]: true, [b.info.id]: false })
  })

  it('stores a given key once: the same key twice is a unique violation', async () => {
    const keys = storageKeyStore(makeStorage())
    await keys.add('aff_live_from_the_environment_1234', { workspaceIds: [WS_A] })
    await expect(keys.add('aff_live_from_the_environment_1234', { workspaceIds: [WS_B] })).rejects.toThrow(/api_keys_hash/)
    await expect(keys.create({ workspaceIds: [] })).rejects.toThrow(/at least one workspace/)
  })

  it('serves HTTP: the key works until revoked, then answers 401', async () => {
    const storage = makeStorage()
    const keyStore = storageKeyStore(storage)
    const service = createAffiliateService({ storage, keyStore })
    const { key, info } = await keyStore.create({ workspaceIds: [WS_A] })
    const post = () =>
      service.fetch(
        new Request('http://test.local/api/v1/campaigns', {
          method: 'POST',
          headers: { 'x-auth-service': key, 'content-type': 'application/json' },
          body: JSON.stringify(campaignInput()),
        }),
      )
    expect((await post()).status).toBe(201)
    await keyStore.revoke(info.id)
    expect((await post()).status).toBe(401)
  })
})
