// One program's notifications, driven through the service on any storage: every kind is caused
// once, then the sender is flushed and the messages it sent are answered.
import { expect } from 'vitest'
import { createAffiliateService, memoryKeyStore, type NotificationMessage, type NotifyOptions, type Storage } from '../../src/index.js'
import { notificationPreferences } from '../../src/notifications/preferences.js'
import { apiCampaignInput, KEY_A, manualClock, USER_A, WS_A } from './helpers.js'

export const PORTAL_SECRET = 'portal-secret-portal-secret-portal-secret'
export const PUBLIC_URL = 'https://partners.example.com'
const DAY = 86_400_000

export function notifyService(storage: Storage, notify: Partial<NotifyOptions> = {}, clock = manualClock(Date.UTC(2026, 2, 10, 9))) {
  const sent: NotificationMessage[] = []
  const errors: unknown[] = []
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    clock,
    rateLimit: false,
    onError: (error) => errors.push(error),
    portal: { secret: PORTAL_SECRET, publicUrl: PUBLIC_URL, sendSignInLink: () => undefined, sendNotice: () => undefined },
    admin: { authorize: async () => null },
    notify: {
      send: (message) => void sent.push(message),
      owners: ['owner@example.com'],
      from: 'Partners <partners@example.com>',
      ...notify,
    },
  })
  return { service, sent, errors, clock, jobs: service.notifications!, prefs: notificationPreferences(storage, clock) }
}

/**
 * Causes each of the seven kinds once: an applicant (applied), approved; another declined (with
 * `affiliate.rejected` turned on for the campaign); a commission (earned), paid out (payout.paid),
 * refunded after payment (clawback.created); five bad signatures at a provider endpoint.
 */
export async function causeEveryKind(env: ReturnType<typeof notifyService>) {
  const { service, clock } = env
  const api = service.api
  await api.campaigns.create(
    apiCampaignInput({
      campaignName: 'Acme Partners',
      isDefault: true,
      commissionType: 'fixed',
      amount: 25,
      currency: 'EUR',
      payoutTerm: 0,
    }),
  )
  const campaign = await api.campaigns.create(
    apiCampaignInput({
      campaignName: '20% for 12 months',
      requiresApprovalToJoin: true,
      commissionType: 'percentage',
      amount: 20,
      currency: 'EUR',
      payoutTerm: 0,
      minimumPayoutAmount: 0,
    }),
  )
  await env.prefs.setCampaign({ id: campaign.id, workspaceId: WS_A }, [
    'affiliate.approved',
    'affiliate.rejected',
    'commission.earned',
    'payout.paid',
    'clawback.created',
    'affiliate.applied',
  ])
  const ann = await api.affiliates.create({
    email: 'ann@example.com',
    firstName: 'Ann',
    lastName: 'Lee',
    campaignId: campaign.id,
    payoutMethod: 'PAYPAL',
    payoutEmail: 'ann.pay@example.com',
  })
  const bob = await api.affiliates.create({ email: 'bob@example.com', firstName: 'Bob', campaignId: campaign.id })
  await api.affiliates.update(ann.id, { isActive: true })
  await api.affiliates.delete(bob.id)
  const commission = await api.commissions.create({
    campaignId: campaign.id,
    affiliateId: ann.id,
    referredUser: 'buyer@example.com',
    amount: '1234.50',
    commissionDate: new Date(clock.now() - DAY).toISOString(),
  })
  const { payouts } = await api.payouts.run({ workspaceId: WS_A })
  expect(payouts).toHaveLength(1)
  await api.payouts.update(payouts[0]!.payoutId, { status: 'processing' })
  await api.payouts.update(payouts[0]!.payoutId, { status: 'paid', externalReference: 'PP-7781' })
  await api.commissions.refund(commission.commissionId, { amount: '100.00' })
  const integration = await api.integrations.create({
    workspaceId: WS_A,
    provider: 'stripe',
    signingSecret: 'whsec_test_secret',
    description: 'Main shop',
  })
  for (let i = 0; i < 5; i++) {
    const answer = await service.fetch(
      new Request(`http://localhost/api/v1/integrations/${integration.integrationId}/events`, {
        method: 'POST',
        body: '{"id":"evt_1"}',
        headers: { 'stripe-signature': 't=1,v1=bad' },
      }),
    )
    expect(answer.status).toBe(400)
  }
  return { campaign, ann, bob, commission, payout: payouts[0]!, integration }
}
