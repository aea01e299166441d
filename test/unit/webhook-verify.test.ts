// `affiliate-service/webhooks`: a receiver verifies what the service's own dispatcher sends, and
// nothing else (a changed body, another secret, an old timestamp), and gets the event typed.
import { describe, expect, expectTypeOf, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import type { WebhookRequest } from '../../src/webhooks/delivery.js'
import { generateWebhookSecret } from '../../src/webhooks/secrets.js'
import {
  verifyWebhook,
  WebhookVerificationError,
  type AffiliateEvent,
  type Campaign,
  type Commission,
  type CommissionStatus,
  type Payout,
  type PayoutStatus,
  type Webhook,
} from '../../src/webhook-receiver/index.js'
import { apiCampaignInput, manualClock, WS_A } from '../support/helpers.js'

const MINUTE = 60_000

/** A service whose clock starts at `start` (ms) and a webhook subscribed to every event; `deliver()` answers what its dispatcher sent. */
async function setupAt(start: number) {
  const clock = manualClock(start)
  const service = createAffiliateService({ storage: memoryStorage(), keyStore: memoryKeyStore([]), clock, rateLimit: false })
  const webhook = await service.api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/affiliates', events: ['*'] })
  // One sender for the service's life: its dispatcher keeps the first one it is given.
  const sent: WebhookRequest[] = []
  const send = async (request: WebhookRequest) => {
    sent.push(request)
    return { outcome: 'success', status: 204, durationMs: 1, responseBody: '' } as const
  }
  const deliver = async () => {
    const before = sent.length
    await service.events.deliverDue({ send })
    return sent.slice(before)
  }
  return { service, clock, webhook, deliver }
}

const refusal = (run: () => unknown): string => {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return (error as Error).message
  }
  throw new Error('verified, but should not have')
}

describe('verifyWebhook', () => {
  it('verifies a delivery of the service dispatcher and answers its event, typed', async () => {
    const { service, webhook, deliver } = await setupAt(Date.now())
    const campaign = await service.api.campaigns.create(apiCampaignInput())
    const [sent] = await deliver()
    const event = verifyWebhook(webhook.secret, sent!.body, new Headers({ ...sent!.headers }))
    expect(event.type).toBe('campaign.created')
    expect(event.id).toBe(sent!.headers['webhook-id'])
    if (event.type !== 'campaign.created') throw new Error('not narrowed')
    expect(event.data).toEqual(campaign)
    expect(event.data.campaignName).toBe('Spring launch')
    // As bytes, and with Node's header object (lower-case names) or any casing.
    expect(verifyWebhook([webhook.secret], new TextEncoder().encode(sent!.body), { ...sent!.headers })).toEqual(event)
    const shouted = Object.fromEntries(Object.entries(sent!.headers).map(([name, value]) => [name.toUpperCase(), value]))
    expect(verifyWebhook(webhook.secret, sent!.body, shouted)).toEqual(event)
  })

  it('accepts either secret during a rotation, and holding several', async () => {
    const { service, webhook, deliver } = await setupAt(Date.now())
    await deliver()
    const rotated = await service.api.webhooks.rotateSecret(webhook.webhookId, { overlapHours: 1 })
    await service.api.campaigns.create(apiCampaignInput())
    const [sent] = await deliver()
    const headers = new Headers({ ...sent!.headers })
    for (const secrets of [webhook.secret, rotated.secret, [generateWebhookSecret(), rotated.secret], [webhook.secret, rotated.secret]]) {
      expect(verifyWebhook(secrets, sent!.body, headers).type).toBe('campaign.created')
    }
  })

  it('refuses a changed body, a wrong secret, missing headers and a stale or future timestamp', async () => {
    const { service, webhook, deliver } = await setupAt(Date.now())
    await service.api.campaigns.create(apiCampaignInput())
    const [sent] = await deliver()
    const headers = new Headers({ ...sent!.headers })
    const tampered = sent!.body.replace('Spring launch', 'Spring launcH')
    expect(tampered).not.toBe(sent!.body)
    expect(refusal(() => verifyWebhook(webhook.secret, tampered, headers))).toBe('Webhook verification failed: no matching signature found')
    expect(refusal(() => verifyWebhook(generateWebhookSecret(), sent!.body, headers))).toBe(
      'Webhook verification failed: no matching signature found',
    )
    expect(refusal(() => verifyWebhook([generateWebhookSecret(), generateWebhookSecret()], sent!.body, headers))).toMatch(
      /no matching signature/,
    )
    expect(refusal(() => verifyWebhook(webhook.secret, sent!.body, { 'webhook-id': sent!.headers['webhook-id'] }))).toBe(
      'Webhook verification failed: missing required headers',
    )
    // Another id under the same signature: the signature covers the id too.
    expect(refusal(() => verifyWebhook(webhook.secret, sent!.body, { ...sent!.headers, 'webhook-id': 'evt_other' }))).toMatch(
      /no matching signature/,
    )

    const stale = await setupAt(Date.now() - 10 * MINUTE)
    await stale.service.api.campaigns.create(apiCampaignInput())
    const [old] = await stale.deliver()
    expect(refusal(() => verifyWebhook(stale.webhook.secret, old!.body, old!.headers))).toBe(
      'Webhook verification failed: message timestamp too old',
    )
    const early = await setupAt(Date.now() + 10 * MINUTE)
    await early.service.api.campaigns.create(apiCampaignInput())
    const [future] = await early.deliver()
    expect(refusal(() => verifyWebhook(early.webhook.secret, future!.body, future!.headers))).toBe(
      'Webhook verification failed: message timestamp too new',
    )
  })

  it('says what is wrong with its arguments', () => {
    const headers = { 'webhook-id': 'x', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }
    expect(() => verifyWebhook([], '{}', headers)).toThrow(TypeError)
    expect(() => verifyWebhook('whsec_', '{}', headers)).toThrow(/needs the webhook secret/)
    expect(() => verifyWebhook(generateWebhookSecret(), { id: 'x' } as unknown as string, headers)).toThrow(/raw body/)
    expect(refusal(() => verifyWebhook(generateWebhookSecret(), new Uint8Array([0xff, 0xfe]), headers))).toMatch(/not UTF-8/)
  })

  it('narrows data by type (checked by the type checker)', () => {
    expectTypeOf<Extract<AffiliateEvent, { type: 'campaign.created' }>['data']>().toEqualTypeOf<Campaign>()
    expectTypeOf<Extract<AffiliateEvent, { type: 'commission.created' }>['data']>().toEqualTypeOf<Commission>()
    expectTypeOf<
      Extract<AffiliateEvent, { type: 'commission.status_changed' }>['data']['previousStatus']
    >().toEqualTypeOf<CommissionStatus>()
    expectTypeOf<Extract<AffiliateEvent, { type: 'payout.status_changed' }>['data']>().toEqualTypeOf<
      Payout & { previousStatus: PayoutStatus }
    >()
    expectTypeOf<Extract<AffiliateEvent, { type: 'webhook.test' }>['data']>().toEqualTypeOf<{ webhook: Webhook }>()
    const dataOf = (event: AffiliateEvent): string => {
      switch (event.type) {
        case 'payout.created':
          expectTypeOf(event.data).toEqualTypeOf<Payout>()
          // @ts-expect-error a payout has no campaignName
          return event.data.campaignName
        case 'campaign.updated':
          expectTypeOf(event.data).toEqualTypeOf<Campaign>()
          return event.data.campaignName
        default:
          return event.type
      }
    }
    expect(dataOf).toBeTypeOf('function')
  })
})
