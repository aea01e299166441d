// What the published package holds, read from the tarball `npm pack` makes of this checkout after the
// build (`npm test` builds before vitest runs): the licence, the README, every file the exports map
// and the bin name, no source map, and entries that import and work from the unpacked package. With
// no dist/ the tarball lacks the entries and this fails.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license: string
  files: string[]
  exports: Record<string, string | Record<string, Record<string, string>>>
  bin: Record<string, string>
}

/** Every file the exports map and `bin` name, without the leading `../`. */
const promised = (): string[] => {
  const out = new Set<string>()
  const walk = (value: unknown) => {
    if (typeof value === 'string') out.add(value.replace(/^\.\//, ''))
    else if (value && typeof value === 'object') Object.values(value).forEach(walk)
  }
  walk(pkg.exports)
  walk(pkg.bin)
  return [...out].sort()
}

// Inside the repository, so the unpacked package finds its dependencies in its node_modules.
mkdirSync(join(root, '.tmp'), { recursive: true })
const work = mkdtempSync(join(root, '.tmp', 'package-test-'))
const unpacked = join(work, 'node_modules', 'affiliate-service')
let files: string[] = []

beforeAll(() => {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
  ) as [{ filename: string; files: { path: string }[] }]
  files = packed.files.map((file) => file.path)
  mkdirSync(unpacked, { recursive: true })
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', unpacked, '--strip-components=1'])
}, 120_000)
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the package', () => {
  it('has an MIT LICENSE for the contributors, named in package.json', () => {
    const license = readFileSync(join(root, 'LICENSE'), 'utf8')
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 affiliate-service contributors\n/)
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND')
    expect(pkg.license).toBe('MIT')
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'LICENSE', 'README.md']))
  })

  it('packs LICENSE, README.md, package.json and every file the exports map and bin name, and no source map', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']))
    expect(promised().filter((path) => path !== 'package.json' && !files.includes(path))).toEqual([])
    expect(promised()).toEqual(expect.arrayContaining(['dist/webhooks/index.js', 'dist/webhooks/index.cjs', 'dist/client/index.js', 'dist/bin/cli.js']))
    expect(files.filter((path) => path.endsWith('.map'))).toEqual([])
    // Nothing but the build and the three files: no sources, tests or local state.
    expect(files.filter((path) => !path.startsWith('dist/') && !['LICENSE', 'README.md', 'package.json'].includes(path))).toEqual([])
  })

  it('imports and works from the unpacked tarball, as ESM and as CommonJS', () => {
    const check = `
      import { createRequire } from 'node:module'
      import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'
      import { createAffiliateClient } from 'affiliate-service/client'
      import { verifyWebhook, WebhookVerificationError } from 'affiliate-service/webhooks'
      import { toNodeListener } from 'affiliate-service/node'
      import { expressAdapter } from 'affiliate-service/express'
      import { defineStorage } from 'affiliate-service/storage'
      const require = createRequire(import.meta.url)
      const cjs = require('affiliate-service')
      const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([{ key: 'k_test', userId: 'u', workspaceIds: [crypto.randomUUID()] }]) })
      const health = await service.fetch(new Request('http://x/api/v1/health'))
      const list = await service.fetch(new Request('http://x/api/v1/campaigns/list', { headers: { authorization: 'Bearer k_test' } }))
      let refused = false
      try { verifyWebhook('whsec_' + Buffer.alloc(32, 1).toString('base64'), '{}', {}) } catch (error) { refused = error instanceof WebhookVerificationError }
      console.log(JSON.stringify({
        health: health.status, list: list.status, refused,
        from: import.meta.resolve('affiliate-service'),
        kinds: [typeof createAffiliateClient, typeof toNodeListener, typeof expressAdapter, typeof defineStorage, typeof cjs.createAffiliateService, typeof require('affiliate-service/webhooks').verifyWebhook],
      }))
    `
    // A package.json of its own: else Node resolves `affiliate-service` to this checkout (self-reference).
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'package-test', private: true, type: 'module' }))
    writeFileSync(join(work, 'check.mjs'), check)
    const out = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: work, encoding: 'utf8' }))
    expect(out).toEqual({
      health: 200,
      list: 200,
      refused: true,
      from: `file://${unpacked}/dist/index.js`,
      kinds: ['function', 'function', 'function', 'function', 'function', 'function'],
    })
  })

  it('builds without source maps (so none can embed the sources)', async () => {
    const { default: config } = (await import('../../tsup.config.js')) as { default: { sourcemap?: unknown } }
    expect(config.sourcemap).toBe(false)
  })
})
