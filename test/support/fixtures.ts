import { memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { models, type ModelName } from '../../src/storage/index.js'
import { campaignInput, KEY_A, KEY_B, WS_A, WS_B, type setup } from './helpers.js'

/** Every record of every model, in a stable order: compare two to prove nothing changed. */
export async function snapshot(storage: Storage): Promise<string> {
  return storage.transaction(async (tx) => {
    const out: Record<string, unknown[]> = {}
    for (const model of Object.keys(models) as ModelName[]) {
      out[model] = await tx.find(model, { orderBy: { field: 'id', direction: 'ASC' } as never })
    }
    return JSON.stringify(out)
  })
}

type Call = ReturnType<typeof setup>['call']

/** One of each resource in a workspace, made over HTTP with `key`. */
export async function populate(call: Call, key: string, workspaceId: string, tag: string) {
  const ok = <T>(response: { status: number; body: { data: T } }): T => {
    if (response.status >= 300) throw new Error(`populate failed: ${JSON.stringify(response.body)}`)
    return response.body.data
  }
  const campaign = ok<{ id: string }>(
    await call('POST', '/campaigns', { key, body: campaignInput({ workspaceId, campaignName: `Campaign ${tag}` }) }),
  )
  const affiliate = ok<{ id: string; email: string }>(
    await call('POST', '/affiliates', {
      key,
      body: { email: `affiliate-${tag}@example.com`, campaignId: campaign.id, firstName: `First${tag}` },
    }),
  )
  const link = ok<{ id: string; referralCode: string }>(
    await call('POST', '/links', { key, body: { affiliateId: affiliate.id, referralCode: `CODE-${tag}` } }),
  )
  const commission = ok<{ commissionId: string }>(
    await call('POST', '/commissions', {
      key,
      body: { campaignId: campaign.id, affiliateId: affiliate.id, referredUser: `buyer-${tag}@example.com`, amount: '10.00' },
    }),
  )
  const referred = ok<{ commissionId: string; referredUser: string }>(
    await call('POST', '/referred-users', {
      key,
      body: { referredTo: `signup-${tag}@example.com`, affiliateId: affiliate.id, invoiceId: `INV-${tag}`, chargeId: `CH-${tag}` },
    }),
  )
  // An affiliate ready to be paid, its commission (due at once: the campaign's payoutTerm is 0) and the payout a run made of it.
  const payee = ok<{ id: string; email: string }>(
    await call('POST', '/affiliates', {
      key,
      body: { email: `payee-${tag}@example.com`, campaignId: campaign.id, payoutMethod: 'PAYPAL', payoutEmail: `paid-${tag}@example.com` },
    }),
  )
  ok(
    await call('POST', '/commissions', {
      key,
      body: { campaignId: campaign.id, affiliateId: payee.id, referredUser: `customer-${tag}@example.com`, amount: '25.00' },
    }),
  )
  const run = ok<{ payouts: { payoutId: string }[] }>(await call('POST', '/payouts/run', { key, body: { workspaceId } }))
  const payout = run.payouts[0]!
  // A webhook (no DNS at creation: the name is resolved only when delivering), a queued test delivery, and the events so far.
  const webhook = ok<{ webhookId: string; secret: string }>(
    await call('POST', '/webhooks', { key, body: { workspaceId, url: `https://hooks.example.com/${tag}`, events: ['*'] } }),
  )
  const delivery = ok<{ deliveryId: string; eventId: string }>(
    await call('POST', '/webhooks/test', { key, body: { webhookId: webhook.webhookId } }),
  )
  const events = ok<{ items: { id: string }[] }>(await call('GET', `/events/list?workspaceId=${workspaceId}&limit=100`, { key }))
  return {
    campaign,
    affiliate,
    link,
    commission,
    referred,
    payee,
    payout,
    webhook,
    delivery,
    event: events.items[0]!,
    workspaceId,
    key,
    tag,
  }
}

export type Population = Awaited<ReturnType<typeof populate>>

/** Workspace A through key A and workspace B through key B. */
export const populateBoth = async (call: Call) => ({
  a: await populate(call, KEY_A, WS_A, 'a'),
  b: await populate(call, KEY_B, WS_B, 'b'),
})

/** The storages the generated suites run on; each call makes a fresh, empty one. */
export const storageKinds: [string, () => Promise<Storage> | Storage][] = [
  ['memory', () => memoryStorage()],
  ['sql.js', () => sqlJsStorage()],
]
