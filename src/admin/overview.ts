import type { SeriesPoint } from '../reports/read.js'
import { html, type Html } from '../site/html.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { affiliateEmails, affiliateLink, badge, day, head, type Handler } from './ui.js'

const DAY = 86_400_000
const PERIODS = [7, 30, 90] as const

/** The period the query asks for: 7, 30 or 90 days up to today's end (UTC), or custom `from`/`to` dates. */
function periodOf(url: URL, now: number): { from: number; to: number; days: string } {
  const end = Math.floor(now / DAY) * DAY + DAY
  const from = Date.parse(url.searchParams.get('from') ?? '')
  const to = Date.parse(url.searchParams.get('to') ?? '')
  if (Number.isFinite(from) && Number.isFinite(to) && to >= from && to - from <= 366 * DAY) return { from, to: to + DAY, days: 'custom' }
  const days = PERIODS.find((d) => String(d) === url.searchParams.get('days')) ?? 30
  return { from: end - days * DAY, to: end, days: String(days) }
}

const change = (now: number, before: number): string => {
  if (before === 0) return now === 0 ? 'no change' : 'new'
  const pct = ((now - before) / Math.abs(before)) * 100
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(0)}% vs previous period`
}

/** Clicks (bars, left axis) and earnings (line, right axis) per day, drawn on the server. */
function chart(points: SeriesPoint[], currency: string): Html {
  const W = 720
  const H = 220
  const pad = 40
  const maxClicks = Math.max(1, ...points.map((p) => p.clicks))
  const maxEarn = Math.max(1, ...points.map((p) => Number(p.earnings)))
  const step = (W - 2 * pad) / Math.max(1, points.length)
  const y = (value: number, max: number) => H - pad - (value / max) * (H - 2 * pad)
  const bars = points.map(
    (p, i) => html`<rect x="${(pad + i * step + step * 0.15).toFixed(1)}" y="${y(p.clicks, maxClicks).toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${(H - pad - y(p.clicks, maxClicks)).toFixed(1)}" fill="#1f5fbf"><title>${p.start.slice(0, 10)}: ${p.clicks} clicks</title></rect>`,
  )
  const line = points.map((p, i) => `${(pad + i * step + step / 2).toFixed(1)},${y(Number(p.earnings), maxEarn).toFixed(1)}`).join(' ')
  return html`<figure class="chart card"><figcaption><strong>Clicks and earnings per day</strong> <span class="muted">(bars: clicks, left axis; line: earnings in ${currency}, right axis)</span></figcaption>
<div class="scroll" tabindex="0" role="group" aria-label="The chart (scrolls sideways on a narrow screen)"><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="Clicks and earnings per day; the table below has the figures">
<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#565e6b"/>
<text x="4" y="${pad}" font-size="11" fill="#1c2128">${maxClicks}</text><text x="4" y="${H - pad}" font-size="11" fill="#1c2128">0</text>
<text x="${W - pad + 4}" y="${pad}" font-size="11" fill="#1c2128">${maxEarn.toFixed(0)}</text>
${bars}<polyline points="${line}" fill="none" stroke="#a4262c" stroke-width="2"/>
<text x="${pad}" y="${H - 10}" font-size="11" fill="#1c2128">${points[0]?.start.slice(0, 10) ?? ''}</text><text x="${W - pad}" y="${H - 10}" font-size="11" text-anchor="end" fill="#1c2128">${points.at(-1)?.start.slice(0, 10) ?? ''}</text>
</svg></div></figure>`
}

export const overviewPages: Record<string, Handler> = {
  async 'GET '(c) {
    const { from, to, days } = periodOf(c.v.url, c.now())
    const iso = (ms: number) => new Date(ms).toISOString()
    const scope = { workspaceId: c.workspaceId }
    const span = to - from
    const [now, before, series, top, latest, campaigns] = await Promise.all([
      c.api.reports.summary({ ...scope, from: iso(from), to: iso(to) }),
      c.api.reports.summary({ ...scope, from: iso(from - span), to: iso(from) }),
      c.api.reports.timeseries({ ...scope, from: iso(from), to: iso(to), interval: 'day' }),
      // All-time earnings through the list's index: one read (the period's ranking, reports.topAffiliates, costs 228 ms at 10k commissions).
      c.api.affiliates.list({ workspaceId: c.workspaceId, orderType: 'totalEarnings', orderValue: 'DESC', limit: 5 }),
      c.api.commissions.list({ workspaceId: c.workspaceId, limit: 5 }),
      c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 1 }),
    ])
    const currency = campaigns.items[0]?.currency ?? 'USD'
    const emails = await affiliateEmails(c, latest.items.map((m) => m.affiliateId))
    const card = (label: string, value: string, a: number, b: number) =>
      html`<div><dt>${label}</dt><dd>${value} <span class="change">${change(a, b)}</span></dd></div>`
    const picker = html`<form class="filters card" method="get" action="${c.path}">
<div><label for="days">Period</label><select id="days" name="days">${PERIODS.map((d) => html`<option value="${d}"${String(d) === days ? html` selected` : ''}>Last ${d} days</option>`)}</select></div>
<div><label for="from">From <span class="hint">(custom)</span></label><input id="from" name="from" type="date" value="${days === 'custom' ? iso(from).slice(0, 10) : ''}"></div>
<div><label for="to">To <span class="hint">(custom)</span></label><input id="to" name="to" type="date" value="${days === 'custom' ? iso(to - DAY).slice(0, 10) : ''}"></div>
<div><button type="submit">Show</button></div></form>`
    const cards = html`<dl class="cards">
${card('Clicks', now.clicks.toLocaleString('en-US'), now.clicks, before.clicks)}
${card('Signups', now.signups.toLocaleString('en-US'), now.signups, before.signups)}
${card('Conversion rate', `${(now.conversionRate * 100).toFixed(1)}%`, now.conversionRate, before.conversionRate)}
${card('Earnings', moneyText(now.commissions.amount, currency), Number(now.commissions.amount), Number(before.commissions.amount))}
${card('Due (pending)', moneyText(now.byStatus.pending.amount, currency), Number(now.byStatus.pending.amount), Number(before.byStatus.pending.amount))}
${card('Paid out', moneyText(now.paidOut.amount, currency), Number(now.paidOut.amount), Number(before.paidOut.amount))}
</dl>`
    const figures = table(
      ['Day', ['Clicks', 'num'], ['Signups', 'num'], ['Sales', 'num'], ['Earnings', 'num']],
      series.items.map((p) => [html`${p.start.slice(0, 10)}`, html`${p.clicks}`, html`${p.signups}`, html`${p.commissionCount}`, html`${moneyText(p.earnings, currency)}`]),
      'Figures per day',
    )
    const topTable = top.items.length
      ? table(
          ['Affiliate', ['Clicks', 'num'], ['Signups', 'num'], ['Earnings', 'num']],
          top.items.map((a) => [html`<a href="${c.path}/affiliates/detail?affiliateId=${a.id}">${a.email}</a>`, html`${a.totalClicks}`, html`${a.totalSignups}`, html`${moneyText(a.totalEarnings, currency)}`]),
        )
      : html`<p class="muted">No affiliates yet.</p>`
    const latestTable = latest.items.length
      ? table(
          ['Date', 'Affiliate', ['Amount', 'num'], 'Status'],
          latest.items.map((m) => [day(m.commissionDate), affiliateLink(c, m.affiliateId, emails), html`${moneyText(m.amount, currency)}`, badge(m.status)]),
        )
      : html`<p class="muted">No commissions yet. Record a sale through the API, connect Stripe in <a href="${c.path}/settings/integrations#providers">Settings → Integrations</a> or add one in <a href="${c.path}/commissions/new">Commissions</a>.</p>`
    return c.page(
      'Overview',
      html`${head('Overview', html`<a class="button" href="${c.path}/payouts">Run payouts</a>`)}${noticeBox(c.notice())}${picker}${cards}${chart(series.items, currency)}
<details class="card"><summary>The chart's figures as a table</summary>${figures}</details>
<div class="grid"><section class="card"><h2>Top affiliates <span class="hint">(all time)</span></h2>${topTable}</section><section class="card"><h2>Latest commissions</h2>${latestTable}</section></div>`,
    )
  },
}
