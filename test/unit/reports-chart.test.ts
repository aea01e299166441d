// The chart example (examples/report-chart): the SVG it draws from a time series, and the picture in
// the README being one it drew.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { seriesSvg } from '../../examples/report-chart/svg.js'
import { setup, WS_A } from '../support/helpers.js'

describe('examples/report-chart', () => {
  it('draws one bar per bucket, the clicks line through every bucket and a dot per bucket with signups', async () => {
    const { api, clock } = setup()
    const campaign = await api.campaigns.create({
      campaignName: 'Chart',
      workspaceId: WS_A,
      commissionType: 'fixed',
      amount: 5,
      url: 'https://shop.example.com',
    })
    const affiliate = await api.affiliates.create({ email: 'chart@example.com', campaignId: campaign.id })
    await api.links.create({ affiliateId: affiliate.id, referralCode: 'CHART' })
    clock.set(Date.UTC(2026, 2, 2, 12))
    await api.links.track({ referralCode: 'CHART', event: 'click' })
    await api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: 'buyer@example.com',
      amount: '12.00',
      commissionDate: '2026-03-02T12:00:00Z',
    })
    const series = await api.reports.timeseries({
      workspaceId: WS_A,
      from: '2026-03-01T00:00:00Z',
      to: '2026-03-08T00:00:00Z',
      timezone: 'Europe/Berlin',
    })
    const svg = seriesSvg(series, 'Week <one>')
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.match(/class="earnings"/g)).toHaveLength(series.items.length)
    expect(svg.match(/class="signups"/g)).toHaveLength(1)
    expect(svg.match(/<polyline class="clicks" points="([^"]+)"/)![1]!.split(' ')).toHaveLength(series.items.length)
    expect(svg).toContain('Week &lt;one&gt;')
    expect(svg).toContain('earnings 12.00, 1 clicks, 1 signups')
  })

  it('made the picture in docs/: 60 days in Europe/Berlin', () => {
    const svg = readFileSync(new URL('../../docs/report-chart.svg', import.meta.url), 'utf8')
    expect(svg).toContain('day buckets in Europe/Berlin')
    expect(svg.match(/class="earnings"/g)).toHaveLength(60)
  })
})
