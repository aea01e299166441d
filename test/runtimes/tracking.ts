// The public redirect and beacon under Bun or Deno, served by that runtime's adapter: the client
// address comes from the socket, and from X-Forwarded-For only with TRUST_PROXY=1. Prints one
// JSON line of statuses and clickIds that test/programs/tracking-runtimes.test.ts checks.
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] ??
  (globalThis as { Deno?: { env: { get(n: string): string | undefined } } }).Deno?.env.get(name)

const runtime = env('RUNTIME_NAME')
const trustProxy = env('TRUST_PROXY') === '1'
const workspaceId = '11111111-1111-4111-8111-111111111111'
const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([
    { key: 'pk_runtime_test', userId: 'u', workspaceIds: [workspaceId], allowedOrigins: ['https://shop.example.com'] },
  ]),
  trackingLimit: { capacity: 2, refillPerSecond: 0.001 },
  clickDedupeSeconds: 3600,
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

const redirect = async (forwardedFor: string) => {
  const response = await fetch(`${running.url}/r/RUN-1`, {
    redirect: 'manual',
    headers: { 'x-forwarded-for': forwardedFor, 'user-agent': 'Mozilla/5.0 Firefox/140.0' },
  })
  await response.body?.cancel()
  return {
    status: response.status,
    clickId: response.status === 302 ? new URL(response.headers.get('location')!).searchParams.get('clickId') : null,
  }
}
const beacon = async (forwardedFor: string) => {
  const response = await fetch(`${running.url}/track`, {
    method: 'POST',
    headers: {
      'x-forwarded-for': forwardedFor,
      'user-agent': 'Mozilla/5.0 Firefox/140.0',
      'content-type': 'application/json',
      'x-publishable-key': 'pk_runtime_test',
      origin: 'https://shop.example.com',
    },
    body: JSON.stringify({ referralCode: 'RUN-1', event: 'click' }),
  })
  const body = (await response.json()) as { data?: { clickId: string } }
  return { status: response.status, clickId: body.data?.clickId ?? null, allowOrigin: response.headers.get('access-control-allow-origin') }
}

const results = [await redirect('1.1.1.1'), await beacon('2.2.2.2'), await redirect('3.3.3.3'), await beacon('4.4.4.4')]
// The redirect and the beacon answer before their clicks are written: store them, then read.
await service.flush()
const link = (await service.api.links.list({ affiliateId: affiliate.id })).items[0]!
console.log(`tracking ${JSON.stringify({ results, totalClicks: link.totalClicks })}`)
await running.close()
