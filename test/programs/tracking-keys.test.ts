import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, storageKeyStore, type Storage } from '../../src/index.js'
import { campaignInput, USER_A, WS_A, WS_B } from '../support/helpers.js'

// Publishable keys (pk_…): scoped to workspaces and to tracking only, with allowedOrigins.

const PK = 'pk_test_shop'
const storages: [string, () => Storage][] = [
  ['memory', () => memoryStorage()],
  ['sql.js', () => sqlJsStorage()],
]

describe('memoryKeyStore publishable keys', () => {
  it('marks pk_ keys publishable with their normalized origins; other keys stay secret', async () => {
    const keys = memoryKeyStore([
      { key: PK, userId: USER_A, workspaceIds: [WS_A], allowedOrigins: ['https://Shop.Example.com', 'http://localhost:5173'] },
      { key: 'secret-a', userId: USER_A, workspaceIds: [WS_A] },
    ])
    expect((await keys.resolve(PK))?.publishable).toEqual({ allowedOrigins: ['https://shop.example.com', 'http://localhost:5173'] })
    expect((await keys.resolve('secret-a'))?.publishable).toBeUndefined()
  })

  it('refuses origins that are not origins, and allowedOrigins on a secret key, naming the entry', () => {
    for (const origin of [
      'https://shop.example.com/path',
      'ftp://shop.example.com',
      'shop.example.com',
      'https://shop.example.com/?a=1',
      '',
    ]) {
      expect(() => memoryKeyStore([{ key: PK, userId: USER_A, workspaceIds: [WS_A], allowedOrigins: [origin] }])).toThrow(
        /entry 0.*not an origin|not an origin/,
      )
    }
    expect(() => memoryKeyStore([{ key: 'secret', userId: USER_A, workspaceIds: [WS_A], allowedOrigins: ['*'] }])).toThrow(
      'memoryKeyStore: entry 0: allowedOrigins is for publishable keys (pk_…) only',
    )
  })
})

describe.each(storages)('storageKeyStore publishable keys on %s storage', (_, makeStorage) => {
  it('makes pk_live_ keys resolving to a publishable principal; list shows kind and origins, never the key', async () => {
    const keys = storageKeyStore(makeStorage())
    const { key, info } = await keys.createPublishable({
      workspaceIds: [WS_A],
      allowedOrigins: ['https://shop.example.com/', '*'],
      label: 'site',
    })
    expect(key).toMatch(/^pk_live_[A-Za-z0-9]{32}$/)
    expect(info).toMatchObject({ kind: 'publishable', allowedOrigins: ['https://shop.example.com', '*'], workspaceIds: [WS_A] })
    expect(await keys.resolve(key)).toEqual({
      keyId: info.id,
      userId: info.userId,
      workspaceIds: [WS_A],
      publishable: { allowedOrigins: ['https://shop.example.com', '*'] },
    })
    const secret = await keys.create({ workspaceIds: [WS_A] })
    expect((await keys.resolve(secret.key))?.publishable).toBeUndefined()
    const listed = await keys.list()
    expect(listed.map((k) => k.kind)).toEqual(['publishable', 'secret'])
    expect(JSON.stringify(listed)).not.toContain(key.slice(12))
  })

  it('refuses a bad origin and changes nothing; add() keeps a given pk_ key publishable', async () => {
    const keys = storageKeyStore(makeStorage())
    await expect(keys.createPublishable({ workspaceIds: [WS_A], allowedOrigins: ['https://a.example/x'] })).rejects.toThrow(/not an origin/)
    await expect(keys.add('aff_live_x', { workspaceIds: [WS_A], allowedOrigins: [] })).rejects.toThrow(/publishable keys/)
    expect(await keys.list()).toEqual([])
    await keys.add('pk_given_key', { workspaceIds: [WS_B] })
    expect((await keys.resolve('pk_given_key'))?.publishable).toEqual({ allowedOrigins: [] })
  })

  it('a revoked publishable key resolves to nothing', async () => {
    const keys = storageKeyStore(makeStorage())
    const { key, info } = await keys.createPublishable({ workspaceIds: [WS_A] })
    expect(await keys.revoke(info.id)).toBe(true)
    expect(await keys.resolve(key)).toBeNull()
  })
})

describe('a publishable key on a keyed route', () => {
  it('is refused exactly like a wrong key (401, same body) and counted as one per client address', async () => {
    const keyStore = memoryKeyStore([
      { key: PK, userId: USER_A, workspaceIds: [WS_A], allowedOrigins: ['*'] },
      { key: 'secret-a', userId: USER_A, workspaceIds: [WS_A] },
    ])
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore,
      rateLimit: false,
      failedKeyLimit: { capacity: 2, refillPerSecond: 0.001 },
    })
    const post = (key: string) =>
      service.fetch(
        new Request('http://x/api/v1/campaigns', {
          method: 'POST',
          headers: { 'x-auth-service': key, 'content-type': 'application/json' },
          body: JSON.stringify(campaignInput()),
        }),
        { clientAddress: '203.0.113.9' },
      )
    const wrong = await post('nope')
    const publishable = await post(PK)
    expect(publishable.status).toBe(401)
    expect(await publishable.text()).toBe(await wrong.text())
    // Two failures spent the address's two tokens: even the right key now waits.
    expect((await post('secret-a')).status).toBe(429)
    expect(await service.api.campaigns.list({ workspaceId: WS_A })).toMatchObject({ pagination: { total: 0 } })
  })
})

describe('keys CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'affiliate-pk-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const cli = async (args: string[]) => {
    const bin = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', bin, ...args], {
      env: { ...process.env, AFFILIATE_DB: join(dir, 'db.sqlite'), DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()))
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    return { code, stdout, stderr }
  }

  it('creates a publishable key with origins, lists it as publishable, and refuses bad flags', { timeout: 60_000 }, async () => {
    const made = await cli([
      'keys',
      'create',
      '--publishable',
      '--workspace',
      WS_A,
      '--origin',
      'https://shop.example.com',
      '--label',
      'site',
    ])
    expect(made.code).toBe(0)
    const key = /pk_live_[A-Za-z0-9]{32}/.exec(made.stdout)?.[0]
    expect(key).toBeDefined()
    expect(made.stdout).toContain('origins    https://shop.example.com')
    const listed = await cli(['keys', 'list'])
    expect(listed.stdout).toContain('publishable https://shop.example.com')
    expect(listed.stdout).not.toContain(key!.slice(12))
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, 'db.sqlite')) })
    expect((await storageKeyStore(storage).resolve(key!))?.publishable).toEqual({ allowedOrigins: ['https://shop.example.com'] })
    await storage.close()

    const noWorkspace = await cli(['keys', 'create', '--publishable'])
    expect(noWorkspace.code).toBe(1)
    expect(noWorkspace.stderr).toContain('needs --workspace')
    const badOrigin = await cli(['keys', 'create', '--publishable', '--workspace', WS_A, '--origin', 'https://a.example/path'])
    expect(badOrigin.stderr).toContain('not an origin')
    const originOnSecret = await cli(['keys', 'create', '--workspace', WS_A, '--origin', 'https://a.example'])
    expect(originOnSecret.stderr).toContain('add --publishable')
  })
})
