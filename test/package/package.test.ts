// What the published package holds and does, from the tarball `npm pack` makes in a clean copy of
// this checkout (the files git would commit: no dist/, no node_modules of its own, which is linked
// for the build tools): `prepack` builds it. Then the tarball is installed into an empty project, as
// a user installs it, without `stripe` (an optional peer): everything works but a Stripe event,
// which says what to install. Slow (a build and an install): `npm run test:all` runs it.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license: string
  files: string[]
  exports: Record<string, string | Record<string, Record<string, string>>>
  bin: Record<string, string>
  repository: { url: string }
  homepage: string
  bugs: { url: string }
  scripts: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
  dependencies: Record<string, string>
}
const REPOSITORY = 'https://github.com/affiliate-service/affiliate-service'

/** Every file the exports map and `bin` name, without the leading `./`. */
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

// Outside the repository, so nothing the installed package looks up can reach its node_modules.
const work = mkdtempSync(join(tmpdir(), 'affiliate-package-test-'))
const clone = join(work, 'clone')
const app = join(work, 'app')
let files: string[] = []
let tarball = ''

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' },
  })

beforeAll(() => {
  // The files git would commit, as they are in the working tree: a clone with the changes not yet committed.
  const tracked = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root).split('\0').filter(Boolean)
  for (const file of tracked) {
    if (!existsSync(join(root, file))) continue // deleted, not yet committed
    mkdirSync(dirname(join(clone, file)), { recursive: true })
    copyFileSync(join(root, file), join(clone, file))
  }
  expect(existsSync(join(clone, 'dist'))).toBe(false)
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
  // `npm pack` runs `prepack`, which builds dist/ (its output comes first, then npm's JSON).
  const output = run('npm', ['pack', '--json', '--pack-destination', work], clone)
  expect(output).toContain('Build success')
  const [packed] = JSON.parse(output.slice(output.lastIndexOf('[\n  {'))) as [{ filename: string; files: { path: string }[] }]
  files = packed.files.map((file) => file.path)
  tarball = join(work, packed.filename)
  // An empty project installs it as a user does: its dependencies, and none of its optional peers.
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'package-test', private: true, type: 'module' }))
  run('npm', ['install', '--prefer-offline', '--no-package-lock', tarball], app)
}, 600_000)
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('the package', () => {
  it('has an MIT LICENSE for the contributors, named in package.json', () => {
    const license = readFileSync(join(root, 'LICENSE'), 'utf8')
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 affiliate-service contributors\n/)
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND')
    expect(pkg.license).toBe('MIT')
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'LICENSE', 'README.md']))
  })

  it('names its repository, home page and issue tracker, and builds before it is packed', () => {
    expect(pkg.repository.url).toBe(`git+${REPOSITORY}.git`)
    expect(pkg.homepage).toBe(`${REPOSITORY}#readme`)
    expect(pkg.bugs.url).toBe(`${REPOSITORY}/issues`)
    expect(pkg.scripts.prepack).toBe('npm run build')
  })

  it('packs LICENSE, README.md, package.json and every file the exports map and bin name, with their types, and no source map', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']))
    expect(promised().filter((path) => path !== 'package.json' && !files.includes(path))).toEqual([])
    expect(promised()).toEqual(
      expect.arrayContaining(['dist/index.d.ts', 'dist/index.d.cts', 'dist/webhooks/index.js', 'dist/client/index.js', 'dist/bin/cli.js']),
    )
    expect(promised().filter((path) => /\.d\.c?ts$/.test(path))).toHaveLength(2 * (Object.keys(pkg.exports).length - 1))
    expect(files.filter((path) => path.endsWith('.map'))).toEqual([])
    // Nothing but the build and the three files: no sources, tests or local state.
    expect(files.filter((path) => !path.startsWith('dist/') && !['LICENSE', 'README.md', 'package.json'].includes(path))).toEqual([])
  })

  it("README's links name files the package holds, or this repository's main branch, where each file exists", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!.replace(/#.*$/, ''))
    const absolute = targets.filter((target) => /^https?:/.test(target))
    const relative = targets.filter((target) => target !== '' && !/^https?:/.test(target))
    expect(relative.filter((target) => !files.includes(target))).toEqual([])
    const ours = absolute.filter((target) => target.startsWith(`${REPOSITORY}/blob/main/`))
    expect(ours.length).toBeGreaterThan(20)
    expect(ours.map((target) => target.slice(`${REPOSITORY}/blob/main/`.length)).filter((path) => !existsSync(join(root, path)))).toEqual(
      [],
    )
  })

  it('installs without any optional peer: stripe, pg, redis, nodemailer and vitest stay out', () => {
    for (const peer of Object.keys(pkg.peerDependencies)) expect(pkg.peerDependenciesMeta[peer]?.optional, peer).toBe(true)
    expect(pkg.dependencies.stripe).toBeUndefined()
    const installed = readdirSync(join(app, 'node_modules'))
    expect(installed).toContain('affiliate-service')
    expect(installed.filter((name) => name in pkg.peerDependencies)).toEqual([])
  })

  it('imports and works from the install, as ESM and as CommonJS; a Stripe event says what to install', () => {
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
      const workspaceId = crypto.randomUUID()
      const errors = []
      const service = createAffiliateService({
        storage: memoryStorage(),
        keyStore: memoryKeyStore([{ key: 'k_test', userId: 'u', workspaceIds: [workspaceId] }]),
        onError: (error) => errors.push(error.message),
      })
      const health = await service.fetch(new Request('http://x/api/v1/health'))
      const list = await service.fetch(new Request('http://x/api/v1/campaigns/list', { headers: { authorization: 'Bearer k_test' } }))
      let refused = false
      try { verifyWebhook('whsec_' + Buffer.alloc(32, 1).toString('base64'), '{}', {}) } catch (error) { refused = error instanceof WebhookVerificationError }
      const integration = await service.api.integrations.create({ workspaceId, provider: 'stripe', signingSecret: 'whsec_test' })
      const stripe = await service.fetch(new Request('http://x' + integration.endpointPath, { method: 'POST', headers: { 'stripe-signature': 't=1,v1=00' }, body: '{}' }))
      console.log(JSON.stringify({
        health: health.status, list: list.status, refused,
        stripe: { status: stripe.status, ...(await stripe.json()) }, errors,
        from: import.meta.resolve('affiliate-service'),
        kinds: [typeof createAffiliateClient, typeof toNodeListener, typeof expressAdapter, typeof defineStorage, typeof cjs.createAffiliateService, typeof require('affiliate-service/webhooks').verifyWebhook],
      }))
    `
    writeFileSync(join(app, 'check.mjs'), check)
    const out = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8' }))
    const missing = expect.stringContaining('run `npm install stripe`')
    expect(out).toEqual({
      health: 200,
      list: 200,
      refused: true,
      stripe: { status: 503, code: 'provider_unavailable', message: missing },
      errors: [missing],
      from: `file://${join(app, 'node_modules', 'affiliate-service', 'dist', 'index.js')}`,
      kinds: ['function', 'function', 'function', 'function', 'function', 'function'],
    })
  })

  it("as an ES module, loads no CommonJS module to answer its first /health (a cold start would start Node's CommonJS lexer)", () => {
    const hook = `export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); if (resolved.format === 'commonjs') process.stdout.write('commonjs ' + resolved.url + '\\n'); return resolved }`
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`
    const program = `const { createAffiliateService, memoryKeyStore, memoryStorage } = await import('affiliate-service')
      const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]) })
      console.log('health', (await service.fetch(new Request('http://x/api/v1/health'))).status)`
    const out = execFileSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', program],
      { cwd: app, encoding: 'utf8' },
    )
    expect(out.trim().split('\n')).toEqual(['health 200'])
  })

  it('type-checks programs of the installed package under node16 resolution, ESM and CommonJS', () => {
    writeFileSync(
      join(app, 'program.mts'),
      `import { createAffiliateService, memoryKeyStore, memoryStorage, type AffiliateService, type Campaign } from 'affiliate-service'
import { serve, nodeRuntime } from 'affiliate-service/node'
import { createAffiliateClient } from 'affiliate-service/client'
const service: AffiliateService = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]) })
const campaign: Promise<Campaign> = service.api.campaigns.create({ campaignName: 'C', workspaceId: 'w', commissionType: 'percentage', amount: 10, url: 'https://x.example' })
// @ts-expect-error: the typed API's input types are real, not any
void service.api.campaigns.create({ campaignName: 1 })
void [campaign, serve, nodeRuntime, createAffiliateClient]
`,
    )
    writeFileSync(
      join(app, 'program.cts'),
      `import affiliate = require('affiliate-service')
const service = affiliate.createAffiliateService({ storage: affiliate.memoryStorage(), keyStore: affiliate.memoryKeyStore([]) })
// @ts-expect-error: the typed API's input types are real, not any
void service.api.campaigns.create({ campaignName: 1 })
`,
    )
    const tsc = (name: string, files: string[], skipLibCheck: boolean) => {
      const config = join(app, `tsconfig.${name}.json`)
      const compilerOptions = {
        module: 'node16',
        moduleResolution: 'node16',
        strict: true,
        noEmit: true,
        skipLibCheck,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
      }
      writeFileSync(config, JSON.stringify({ compilerOptions, files }))
      // The repository's TypeScript: the project installed nothing but the package.
      const result = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], {
        cwd: app,
        encoding: 'utf8',
      })
      return { status: result.status, output: result.stdout + result.stderr }
    }
    expect(tsc('esm', ['program.mts'], false)).toEqual({ status: 0, output: '' })
    // The CommonJS declarations import superstruct's types, an ES module package: TypeScript checks
    // them only without skipLibCheck (true in \`tsc --init\`'s tsconfig) and then says so (TS1479).
    expect(tsc('cjs', ['program.cts'], true)).toEqual({ status: 0, output: '' })
  })

  it('builds without source maps (so none can embed the sources)', async () => {
    const { default: config } = (await import('../../tsup.config.js')) as { default: { sourcemap?: unknown } }
    expect(config.sourcemap).toBe(false)
  })
})
