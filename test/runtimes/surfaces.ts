// Every surface of the service (the API, the redirect, the portal, the admin) under Bun or Deno,
// served by that runtime's adapter, and the scheme a proxy sends (X-Forwarded-Proto): believed
// with TRUST_PROXY=1 (Secure cookies), ignored otherwise. Prints one JSON line that
// test/programs/surfaces-runtimes.test.ts checks.
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] ??
  (globalThis as { Deno?: { env: { get(n: string): string | undefined } } }).Deno?.env.get(name)

const runtime = env('RUNTIME_NAME')
const trustProxy = env('TRUST_PROXY') === '1'
const TOKEN = 'the-admin-token-of-this-test-0123456789'
const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('')
const workspaceId = '11111111-1111-4111-8111-111111111111'
const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([]),
  portal: {
    secret: 'p'.repeat(32),
    publicUrl: 'https://partners.example.com',
    sendSignInLink: () => undefined,
    sendNotice: () => undefined,
  },
  admin: { tokenHash: hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(TOKEN))), secret: 'a'.repeat(32) },
})
const campaign = await service.api.campaigns.create({
  campaignName: 'R',
  workspaceId,
  commissionType: 'fixed',
  amount: 1,
  url: 'https://shop.example.com/',
})
const affiliate = await service.api.affiliates.create({ email: 'r@example.com', campaignId: campaign.id })
await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'RUN-1' })

const adapter = runtime === 'bun' ? await import('../../adapters/bun.js') : await import('../../adapters/deno.js')
const running = adapter.serve(service, { port: 0, trustProxy })
const origin = new URL(running.url).origin

const status = async (path: string) => {
  const response = await fetch(origin + path, { redirect: 'manual' })
  await response.body?.cancel()
  return response.status
}
const statuses = {
  health: await status('/api/v1/health'),
  redirect: await status('/api/v1/r/RUN-1'),
  portal: await status('/portal/sign-in'),
  admin: await status('/admin/sign-in'),
}

// The admin's sign-in as a browser behind a proxy that says https.
const proxied = { 'x-forwarded-proto': 'https' }
const page = await fetch(`${origin}/admin/sign-in`, { headers: proxied })
const text = await page.text()
const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? ''
const seed = page.headers.getSetCookie()[0]?.split(';')[0] ?? ''
const signedIn = await fetch(`${origin}/admin/sign-in`, {
  method: 'POST',
  redirect: 'manual',
  headers: { ...proxied, cookie: seed, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ csrf, token: TOKEN }),
})
await signedIn.body?.cancel()
const cookies = [...page.headers.getSetCookie(), ...signedIn.headers.getSetCookie()]
console.log(
  `surfaces ${JSON.stringify({
    statuses,
    signIn: signedIn.status,
    location: signedIn.headers.get('location'),
    cookies: cookies.map((line) => ({ name: line.split('=')[0], secure: /;\s*Secure/i.test(line) })),
  })}`,
)
await running.close()
