import { serve, type RunningServer } from '../../adapters/node.js'
import type { TrustProxy } from '../../adapters/forwarded.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, type AffiliateServiceOptions, type Storage } from '../../src/index.js'
import { checkedFetch } from './openapi-check.js'
import { apiCampaignInput, KEY_A, KEY_B, manualClock, USER_A, USER_B, WS_A, WS_B } from './helpers.js'

/** A publishable key of workspace A for https://shop.example.com, and one of workspace B for any origin. */
export const PK_A = 'pk_test_workspace_a'
export const PK_B = 'pk_test_workspace_b'
export const SHOP = 'https://shop.example.com'
export const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36'
export const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

export interface TrackingSetupOptions
  extends Partial<Pick<AffiliateServiceOptions, 'trackingLimit' | 'clickDedupeSeconds' | 'trackingSecret'>> {
  storage?: Storage
  trustProxy?: TrustProxy
  clock?: ReturnType<typeof manualClock>
}

/** A service over the Node adapter with one campaign, affiliate and link in workspace A. */
export async function trackingSetup(options: TrackingSetupOptions = {}) {
  const clock = options.clock ?? manualClock()
  const storage = options.storage ?? memoryStorage()
  const errors: unknown[] = []
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([
      { key: KEY_A, userId: USER_A, workspaceIds: [WS_A] },
      { key: KEY_B, userId: USER_B, workspaceIds: [WS_B] },
      { key: PK_A, userId: USER_A, workspaceIds: [WS_A], allowedOrigins: [SHOP] },
      { key: PK_B, userId: USER_A, workspaceIds: [WS_B], allowedOrigins: ['*'] },
    ]),
    clock,
    rateLimit: false,
    onError: (error) => errors.push(error),
    ...(options.trackingLimit !== undefined ? { trackingLimit: options.trackingLimit } : { trackingLimit: false }),
    ...(options.clickDedupeSeconds !== undefined ? { clickDedupeSeconds: options.clickDedupeSeconds } : {}),
    ...(options.trackingSecret !== undefined ? { trackingSecret: options.trackingSecret } : {}),
  })
  const campaign = await service.api.campaigns.create(apiCampaignInput({ url: 'https://shop.example.com/landing?utm=x#top' }))
  const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const link = await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
  const running: RunningServer = await serve(service, {
    port: 0,
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
  })

  /** GET /r/<code>, not followed. */
  const redirect = (code: string, headers: Record<string, string> = {}) =>
    checkedFetch(`${running.url}/r/${code}`, { redirect: 'manual', headers: { 'user-agent': BROWSER, ...headers } })

  /** POST /track with a publishable key (none when null). */
  const beacon = (body: unknown, headers: Record<string, string> = {}, key: string | null = PK_A) =>
    checkedFetch(`${running.url}/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': BROWSER, ...(key ? { 'x-publishable-key': key } : {}), ...headers },
      body: JSON.stringify(body),
    })

  const clickIdOf = (response: Response) => new URL(response.headers.get('location')!).searchParams.get('clickId')
  // The redirect answers before its click is written: read after the batch is.
  const counts = async () => {
    await service.flush()
    const [l] = (await service.api.links.list({ affiliateId: affiliate.id })).items
    const a = await service.api.affiliates.get(affiliate.id)
    return { linkClicks: l!.totalClicks, linkOpens: l!.totalOpens, affiliateClicks: a.totalClicks, affiliateOpens: a.totalOpens }
  }
  const clicks = async () => {
    await service.flush()
    return storage.transaction((tx) => tx.find('clicks', { orderBy: { field: 'createdAt', direction: 'ASC' } }))
  }

  return {
    service,
    storage,
    clock,
    errors,
    campaign,
    affiliate,
    link,
    running,
    redirect,
    beacon,
    clickIdOf,
    counts,
    clicks,
    close: () => running.close(),
  }
}
