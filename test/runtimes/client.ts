// The typed HTTP client under another runtime: creates and reads a campaign on the server at
// AFFILIATE_URL, pays a due commission through a payout run and reads the PayPal export (a
// streamed file), then prints one line the test reads.
import { AffiliateError, createAffiliateClient } from 'affiliate-service/client'

const env = (name: string) =>
  (globalThis as { process?: { env: Record<string, string> } }).process?.env[name] ??
  (globalThis as { Deno?: { env: { get(n: string): string } } }).Deno!.env.get(name)

const client = createAffiliateClient({ baseUrl: env('AFFILIATE_URL'), apiKey: env('AFFILIATE_API_KEY') })
const campaign = await client.campaigns.create({
  campaignName: 'From another runtime',
  workspaceId: env('AFFILIATE_WORKSPACE_ID'),
  commissionType: 'fixed',
  amount: 5,
  url: 'https://shop.example.com/',
})
const read = await client.campaigns.get(campaign.id)
let missing = 0
try {
  await client.campaigns.get('99999999-9999-4999-8999-999999999999')
} catch (error) {
  if (error instanceof AffiliateError) missing = error.status
}
const affiliate = await client.affiliates.create({
  email: 'runtime@example.com',
  campaignId: campaign.id,
  payoutMethod: 'PAYPAL',
  payoutEmail: 'pay@example.com',
})
await client.commissions.create({
  campaignId: campaign.id,
  affiliateId: affiliate.id,
  referredUser: 'buyer@example.com',
  amount: '7.25',
  commissionDate: '2026-01-01T00:00:00Z',
})
const run = await client.payouts.run({ workspaceId: env('AFFILIATE_WORKSPACE_ID') })
const file = await client.payouts.export({ format: 'paypal' })
const text = await new Response(file.body).text()
const paid = run.payouts.length === 1 && text.startsWith(`pay@example.com,7.25,USD,${run.payouts[0]!.payoutId},`)
console.log(`client ok ${read.id} ${read.campaignName === campaign.campaignName} ${missing} payouts ${paid} ${file.contentType}`)
