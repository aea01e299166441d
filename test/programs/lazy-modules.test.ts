import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// What a cold start loads (BENCHMARKS.md row 15): importing the main entry and answering /health
// loads none of the modules that only some requests need; each loads with its first use. A resolve
// hook reports every package and source module the program asks for.
const hook = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  process.stdout.write('loaded ' + resolved.url + '\\n')
  return resolved
}`
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`
const root = join(import.meta.dirname, '..', '..')

/** The program's output, and the packages (by name) and source files (under src/) it loaded. */
function run(program: string) {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', program],
    {
      encoding: 'utf8',
      cwd: root,
    },
  )
  expect(result.status, result.stderr).toBe(0)
  const urls = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('loaded '))
    .map((line) => line.slice('loaded '.length))
  const packages = new Set(urls.flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? []))
  const sources = new Set(urls.flatMap((url) => /\/src\/(.+)\.ts$/.exec(url)?.[1] ?? []))
  return { output: result.stdout, packages, sources }
}

const entry = JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)
const LATER = ['isbot', 'uuid', 'csv-stringify', 'standardwebhooks', 'ipaddr.js', 'stripe', 'sql.js']

const start = `
  const { createAffiliateService, memoryKeyStore, memoryStorage } = await import(${entry})
  const workspaceId = '11111111-1111-4111-8111-111111111111'
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    portal: { secret: 'a-portal-secret-of-32-characters!!', publicUrl: 'https://partners.example.com', sendSignInLink() {}, sendNotice() {} },
    admin: { authorize: async () => null },
  })
  const health = await service.fetch(new Request('http://localhost/api/v1/health'))
  console.log('health', health.status)
`

it('importing the main entry and answering /health loads no module that only some requests need', () => {
  const { output, packages, sources } = run(start)
  expect(output).toContain('health 200')
  expect(LATER.filter((name) => packages.has(name))).toEqual([])
  const pages = [...sources].filter((path) =>
    /^(portal|admin)\/(?!options$)|^tracking\/(tracker|click-ids|visitor)$|^http\/openapi$|^webhooks\/(address|signing|delivery)$/.test(
      path,
    ),
  )
  expect(pages).toEqual([])
})

it('each loads with its first use: the tracker with a click, the portal and the admin with their first page', () => {
  const { output, packages, sources } = run(`${start}
    const campaign = await service.api.campaigns.create({ campaignName: 'C', workspaceId, commissionType: 'percentage', amount: 10, url: 'https://shop.example.com/' })
    const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-1' })
    const click = await service.fetch(new Request('http://localhost/api/v1/r/ANN-1', { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' } }))
    const portal = await service.fetch(new Request('http://localhost/portal/sign-in'))
    const admin = await service.fetch(new Request('http://localhost/admin'))
    console.log('answers', click.status, portal.status, admin.status)
    await service.close()
  `)
  expect(output).toContain('answers 302 200')
  expect(['isbot', 'uuid'].filter((name) => !packages.has(name))).toEqual([])
  expect(['tracking/tracker', 'portal/index', 'admin/index'].filter((path) => !sources.has(path))).toEqual([])
})
