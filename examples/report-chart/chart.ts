// Draws a report time series as an SVG chart (docs/report-chart.svg by default).
//
//   npm run example:report-chart                       an in-process service with a made-up history
//   AFFILIATE_URL=http://127.0.0.1:3000/api/v1 AFFILIATE_API_KEY=... AFFILIATE_WORKSPACE_ID=... \
//     npm run example:report-chart -- out.svg          the last 60 days of a running service
//
// Optional: AFFILIATE_TIMEZONE (default Europe/Berlin), AFFILIATE_INTERVAL (default day).
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createAffiliateService, memoryKeyStore, memoryStorage, type ReportTimeseries } from 'affiliate-service'
import { createAffiliateClient } from 'affiliate-service/client'
import { seriesSvg } from './svg.js'

const DAY = 86_400_000
const WORKSPACE = '5a1d7c3e-9b2f-4e6a-8c0d-1f2e3a4b5c6d'
/** The demo's clock: the series ends here (midnight of July 1st in Berlin), so the picture is the same on every run. */
const DEMO_NOW = Date.UTC(2026, 5, 30, 22)

/** A small deterministic random source (mulberry32), so the demo history is the same every time. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A service in this process with 60 days of made-up traffic, written through the typed API as a host
 * would: clicks on three affiliates' links, sales dated through each day, a refund. Weekends are quieter.
 */
export async function demoSeries(
  timezone = 'Europe/Berlin',
  interval: 'hour' | 'day' | 'week' | 'month' = 'day',
): Promise<ReportTimeseries> {
  let now = DEMO_NOW - 60 * DAY
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([{ key: 'demo-key', userId: WORKSPACE, workspaceIds: [WORKSPACE] }]),
    clock: { now: () => now },
    rateLimit: false,
  })
  const { api } = service
  const next = random(18)
  const campaign = await api.campaigns.create({
    campaignName: 'Spring launch',
    workspaceId: WORKSPACE,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com/',
  })
  const codes: string[] = []
  const affiliates: string[] = []
  for (const name of ['ann', 'bob', 'cleo']) {
    const affiliate = await api.affiliates.create({ email: `${name}@example.com`, firstName: name, campaignId: campaign.id })
    affiliates.push(affiliate.id)
    codes.push((await api.links.create({ affiliateId: affiliate.id, referralCode: `DEMO-${name.toUpperCase()}` })).referralCode)
  }
  let sale = 0
  for (let day = 0; day < 60; day++) {
    const start = DEMO_NOW - (60 - day) * DAY
    const weekday = new Date(start).getUTCDay()
    const busy = (weekday === 0 || weekday === 6 ? 0.5 : 1) * (1 + day / 40)
    const clicks = Math.round((20 + next() * 25) * busy)
    for (let i = 0; i < clicks; i++) {
      now = start + Math.floor(next() * DAY)
      await api.links.track({ referralCode: codes[Math.floor(next() * codes.length)]!, event: 'click' })
    }
    const sales = Math.round(clicks * (0.04 + next() * 0.06))
    for (let i = 0; i < sales; i++) {
      const affiliateId = affiliates[Math.floor(next() * affiliates.length)]!
      await api.commissions.create({
        campaignId: campaign.id,
        affiliateId,
        referredUser: `customer-${sale++}@example.org`,
        amount: (10 + Math.floor(next() * 60)).toFixed(2),
        commissionDate: new Date(start + Math.floor(next() * DAY)).toISOString(),
      })
    }
  }
  now = DEMO_NOW
  return api.reports.timeseries({
    workspaceId: WORKSPACE,
    from: new Date(DEMO_NOW - 60 * DAY).toISOString(),
    to: new Date(DEMO_NOW).toISOString(),
    interval,
    timezone,
  })
}

/** The series of a running service, through the HTTP client: the 60 days up to now. */
async function remoteSeries(
  baseUrl: string,
  apiKey: string,
  workspaceId: string,
  timezone: string,
  interval: 'hour' | 'day' | 'week' | 'month',
) {
  const client = createAffiliateClient({ baseUrl, apiKey })
  const to = new Date()
  return client.reports.timeseries({
    workspaceId,
    from: new Date(to.getTime() - 60 * DAY).toISOString(),
    to: to.toISOString(),
    interval,
    timezone,
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? fileURLToPath(new URL('../../docs/report-chart.svg', import.meta.url))
  const timezone = process.env.AFFILIATE_TIMEZONE ?? 'Europe/Berlin'
  const interval = (process.env.AFFILIATE_INTERVAL ?? 'day') as 'hour' | 'day' | 'week' | 'month'
  const { AFFILIATE_URL: url, AFFILIATE_API_KEY: key, AFFILIATE_WORKSPACE_ID: workspace } = process.env
  const series =
    url && key && workspace ? await remoteSeries(url, key, workspace, timezone, interval) : await demoSeries(timezone, interval)
  writeFileSync(out, seriesSvg(series, url ? 'Affiliate program: the last 60 days' : 'Affiliate program (demo data): 60 days'))
  console.log(`wrote ${out}: ${series.items.length} ${interval} buckets in ${series.timezone}`)
}
