import type { ReportSummary } from '../api/reports.js'
import { formatMoney, parseMoney } from '../domain/money.js'
import type { SeriesPoint } from '../reports/read.js'
import { reportSummary } from '../schemas/reports.js'
import { refusal } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { affiliateEmails, affiliateLink, badge, day, head, type Ctx, type Handler } from './ui.js'

const DAY = 86_400_000
const PERIODS = [7, 30, 90] as const
type Interval = 'day' | 'week' | 'month'

/**
 * The period the query asks for: 7, 30 or 90 days up to today's end (UTC), or custom `from`/`to`
 * days (`to` included) passed to the reports as they are, so any range they accept is shown and a
 * range they refuse is their message on the page. A day the form cannot have sent is passed on as
 * typed, so the message names it.
 */
function periodOf(url: URL, now: number): { from: string; to: string; days: string; typed: { from: string; to: string } } {
  const typed = { from: url.searchParams.get('from') ?? '', to: url.searchParams.get('to') ?? '' }
  const preset = PERIODS.find((d) => String(d) === url.searchParams.get('days'))
  // Dates count unless a preset was chosen with them ("Custom" sends days="").
  if (preset === undefined && (typed.from || typed.to)) {
    const asDay = (text: string, plus: number) =>
      /^\d{4}-\d{2}-\d{2}$/.test(text) && Number.isFinite(Date.parse(text)) ? new Date(Date.parse(text) + plus).toISOString() : text
    return { from: asDay(typed.from, 0), to: asDay(typed.to, DAY), days: 'custom', typed }
  }
  const end = Math.floor(now / DAY) * DAY + DAY
  const days = preset ?? 30
  return {
    from: new Date(end - days * DAY).toISOString(),
    to: new Date(end).toISOString(),
    days: String(days),
    typed: { from: '', to: '' },
  }
}

/** Buckets a chart can draw: days up to four months, then weeks up to two years, then months. */
const intervalOf = (span: number): Interval => (span <= 122 * DAY ? 'day' : span <= 731 * DAY ? 'week' : 'month')

const change = (now: number, before: number): string => {
  if (before === 0) return now === 0 ? 'no change' : 'new'
  const pct = ((now - before) / Math.abs(before)) * 100
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(0)}% vs previous period`
}

/** Clicks (bars, left axis) and earnings (line, right axis) per bucket, drawn on the server. */
function chart(points: SeriesPoint[], currency: string, interval: Interval, title: string): Html {
  const W = 720
  const H = 220
  const pad = 40
  const maxClicks = Math.max(1, ...points.map((p) => p.clicks))
  const maxEarn = Math.max(1, ...points.map((p) => Number(p.earnings)))
  const step = (W - 2 * pad) / Math.max(1, points.length)
  const y = (value: number, max: number) => H - pad - (value / max) * (H - 2 * pad)
  const bars = points.map(
    (p, i) =>
      html`<rect x="${(pad + i * step + step * 0.15).toFixed(1)}" y="${y(p.clicks, maxClicks).toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${(H - pad - y(p.clicks, maxClicks)).toFixed(1)}" fill="#1f5fbf"><title>${p.start.slice(0, 10)}: ${p.clicks} clicks, ${moneyText(p.earnings, currency)}</title></rect>`,
  )
  const line = points.map((p, i) => `${(pad + i * step + step / 2).toFixed(1)},${y(Number(p.earnings), maxEarn).toFixed(1)}`).join(' ')
  return html`<figure class="chart card"><figcaption><strong>${title} per ${interval}</strong> <span class="muted">(bars: clicks, left axis; line: earnings in ${currency}, right axis)</span></figcaption>
<div class="scroll" tabindex="0" role="group" aria-label="${`${title} (scrolls sideways on a narrow screen)`}"><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${`${title} per ${interval}; the table below has the figures`}">
<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#565e6b"/>
<text x="4" y="${pad}" font-size="11" fill="#1c2128">${maxClicks}</text><text x="4" y="${H - pad}" font-size="11" fill="#1c2128">0</text>
<text x="${W - pad + 4}" y="${pad}" font-size="11" fill="#1c2128">${maxEarn.toFixed(0)}</text>
${bars}<polyline points="${line}" fill="none" stroke="#a4262c" stroke-width="2"/>
<text x="${pad}" y="${H - 10}" font-size="11" fill="#1c2128">${points[0]?.start.slice(0, 10) ?? ''}</text><text x="${W - pad}" y="${H - 10}" font-size="11" text-anchor="end" fill="#1c2128">${points.at(-1)?.start.slice(0, 10) ?? ''}</text>
</svg></div></figure>`
}

/** The money figures of one currency: the period, the one before it, and its series. */
interface CurrencyFigures {
  currency: string
  now: ReportSummary
  before: ReportSummary
  series: SeriesPoint[]
}

/** Amounts added in cents (of one currency: callers never pass two). */
const plus = (a: string, b: string): string => formatMoney((parseMoney(a) ?? 0) + (parseMoney(b) ?? 0))

/** Two summaries of campaigns of one currency, added. */
function addSummaries(a: ReportSummary, b: ReportSummary): ReportSummary {
  const pair = (x: { count: number; amount: string }, y: { count: number; amount: string }) => ({
    count: x.count + y.count,
    amount: plus(x.amount, y.amount),
  })
  return {
    ...a,
    opens: a.opens + b.opens,
    clicks: a.clicks + b.clicks,
    signups: a.signups + b.signups,
    conversionRate: 0,
    commissions: pair(a.commissions, b.commissions),
    byStatus: {
      pending: pair(a.byStatus.pending, b.byStatus.pending),
      processing: pair(a.byStatus.processing, b.byStatus.processing),
      paid: pair(a.byStatus.paid, b.byStatus.paid),
      refunded: pair(a.byStatus.refunded, b.byStatus.refunded),
      hold: pair(a.byStatus.hold, b.byStatus.hold),
      voided: pair(a.byStatus.voided, b.byStatus.voided),
    },
    clawbacks: pair(a.clawbacks, b.clawbacks),
    paidOut: pair(a.paidOut, b.paidOut),
    sales: pair(a.sales, b.sales),
  }
}

const addSeries = (a: SeriesPoint[], b: SeriesPoint[]): SeriesPoint[] =>
  a.map((p, i) => {
    const q = b[i]!
    return {
      ...p,
      opens: p.opens + q.opens,
      clicks: p.clicks + q.clicks,
      signups: p.signups + q.signups,
      commissionCount: p.commissionCount + q.commissionCount,
      earnings: plus(p.earnings, q.earnings),
    }
  })

/**
 * The money figures per currency. A workspace whose campaigns share one currency reads its own
 * rollups (three reads); one with campaigns in several currencies reads each campaign's and adds
 * those of one currency together, never two currencies.
 */
async function figuresPerCurrency(
  c: Ctx,
  campaigns: readonly { id: string; currency: string }[],
  range: { from: string; to: string; before: string },
  interval: Interval,
  workspace: { now: ReportSummary; before: ReportSummary },
): Promise<CurrencyFigures[]> {
  const byCurrency = new Map<string, string[]>()
  for (const m of campaigns) byCurrency.set(m.currency, [...(byCurrency.get(m.currency) ?? []), m.id])
  const read = async (campaignId?: string) => {
    const scope = { workspaceId: c.workspaceId, ...(campaignId ? { campaignId } : {}) }
    const [now, before, series] = await Promise.all([
      c.api.reports.summary({ ...scope, from: range.from, to: range.to }),
      c.api.reports.summary({ ...scope, from: range.before, to: range.from }),
      c.api.reports.timeseries({ ...scope, from: range.from, to: range.to, interval }),
    ])
    return { now, before, series: series.items }
  }
  if (byCurrency.size <= 1) {
    const series = await c.api.reports.timeseries({ workspaceId: c.workspaceId, from: range.from, to: range.to, interval })
    return [{ currency: [...byCurrency.keys()][0] ?? 'USD', ...workspace, series: series.items }]
  }
  return Promise.all(
    [...byCurrency]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(async ([currency, ids]) => {
        const each = await Promise.all(ids.map((id) => read(id)))
        return each.slice(1).reduce(
          (sum, one) => ({
            currency,
            now: addSummaries(sum.now, one.now),
            before: addSummaries(sum.before, one.before),
            series: addSeries(sum.series, one.series),
          }),
          { currency, ...each[0]! },
        )
      }),
  )
}

function picker(c: Ctx, days: string, typed: { from: string; to: string }): Html {
  return html`<form class="filters card" method="get" action="${c.path}">
<div><label for="days">Period</label><select id="days" name="days">${PERIODS.map((d) => html`<option value="${d}"${String(d) === days ? html` selected` : ''}>Last ${d} days</option>`)}<option value=""${days === 'custom' ? html` selected` : ''}>Custom: from and to</option></select></div>
<div><label for="from">From <span class="hint">(custom)</span></label><input id="from" name="from" type="date" value="${typed.from}"></div>
<div><label for="to">To <span class="hint">(custom, included)</span></label><input id="to" name="to" type="date" value="${typed.to}"></div>
<div><button type="submit">Show</button></div></form>`
}

export const overviewPages: Record<string, Handler> = {
  async 'GET '(c) {
    const { from, to, days, typed } = periodOf(c.v.url, c.now())
    const action = html`<a class="button" href="${c.path}/payouts">Run payouts</a>`
    const scope = { workspaceId: c.workspaceId }
    let now: ReportSummary
    // The period is the reports' to accept: a range they refuse is their message, beside the picker.
    try {
      now = await c.api.reports.summary({ ...scope, from, to })
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...reportSummary.fields])
      const text = Object.values(errors).join(' ') || problem
      return c.page(
        'Overview',
        html`${head('Overview', action)}<div class="alert" role="alert"><strong>That period cannot be shown:</strong> ${text}</div>${picker(c, days, typed)}`,
        status,
      )
    }
    const fromMs = Date.parse(now.from)
    const span = Date.parse(now.to) - fromMs
    const interval = intervalOf(span)
    const range = { from: now.from, to: now.to, before: new Date(fromMs - span).toISOString() }
    const [before, campaigns, top, latest] = await Promise.all([
      c.api.reports.summary({ ...scope, from: range.before, to: range.from }),
      c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 }),
      // All-time earnings through the list's index: one read (the period's ranking, reports.topAffiliates, costs 228 ms at 10k commissions).
      c.api.affiliates.list({ workspaceId: c.workspaceId, orderType: 'totalEarnings', orderValue: 'DESC', limit: 5 }),
      c.api.commissions.list({ workspaceId: c.workspaceId, limit: 5 }),
    ])
    const money = await figuresPerCurrency(c, campaigns.items, range, interval, { now, before })
    const currencyOf = new Map(campaigns.items.map((m) => [m.id, m.currency]))
    const emails = await affiliateEmails(
      c,
      latest.items.map((m) => m.affiliateId),
    )
    const card = (label: string, value: string, a: number, b: number) =>
      html`<div><dt>${label}</dt><dd>${value} <span class="change">${change(a, b)}</span></dd></div>`
    // A money card: one line per currency, each with its own change; never a sum across currencies.
    const moneyCard = (label: string, pick: (s: ReportSummary) => string) =>
      html`<div><dt>${label}</dt>${money.map((f) => html`<dd>${moneyText(pick(f.now), f.currency)} <span class="change">${change(Number(pick(f.now)), Number(pick(f.before)))}</span></dd>`)}</div>`
    const cards = html`<dl class="cards">
${card('Clicks', now.clicks.toLocaleString('en-US'), now.clicks, before.clicks)}
${card('Signups', now.signups.toLocaleString('en-US'), now.signups, before.signups)}
${card('Conversion rate', `${(now.conversionRate * 100).toFixed(1)}%`, now.conversionRate, before.conversionRate)}
${card('Sales', now.commissions.count.toLocaleString('en-US'), now.commissions.count, before.commissions.count)}
${moneyCard('Referred revenue', (s) => s.sales.amount)}
${moneyCard('Commissions earned', (s) => s.commissions.amount)}
${moneyCard('Due (pending)', (s) => s.byStatus.pending.amount)}
${moneyCard('Paid out', (s) => s.paidOut.amount)}
</dl>`
    const charts = money.map((f) => {
      const title = money.length > 1 ? `${f.currency} campaigns: clicks and earnings` : 'Clicks and earnings'
      const figures = table(
        [
          interval === 'day' ? 'Day' : interval === 'week' ? 'Week of' : 'Month',
          ['Clicks', 'num'],
          ['Signups', 'num'],
          ['Sales', 'num'],
          ['Earnings', 'num'],
        ],
        f.series.map((p) => [
          html`${interval === 'month' ? p.start.slice(0, 7) : p.start.slice(0, 10)}`,
          html`${p.clicks}`,
          html`${p.signups}`,
          html`${p.commissionCount}`,
          html`${moneyText(p.earnings, f.currency)}`,
        ]),
        `Figures per ${interval}${money.length > 1 ? ` (${f.currency} campaigns)` : ''}`,
      )
      return html`${chart(f.series, f.currency, interval, title)}<details class="card"><summary>The chart’s figures as a table${money.length > 1 ? ` (${f.currency})` : ''}</summary>${figures}</details>`
    })
    const topTable = top.items.length
      ? table(
          ['Affiliate', ['Clicks', 'num'], ['Signups', 'num'], ['Earnings', 'num']],
          top.items.map((a) => [
            html`<a href="${c.path}/affiliates/detail?affiliateId=${a.id}">${a.email}</a>`,
            html`${a.totalClicks}`,
            html`${a.totalSignups}`,
            html`${moneyText(a.totalEarnings, currencyOf.get(a.campaignId) ?? '')}`,
          ]),
        )
      : html`<p class="muted">No affiliates yet.</p>`
    const latestTable = latest.items.length
      ? table(
          ['Date', 'Affiliate', ['Amount', 'num'], 'Status'],
          latest.items.map((m) => [
            day(m.commissionDate),
            affiliateLink(c, m.affiliateId, emails),
            html`<a href="${c.path}/commissions/detail?commissionId=${m.commissionId}">${moneyText(m.amount, m.currency)}</a>`,
            badge(m.status),
          ]),
        )
      : html`<p class="muted">No commissions yet. Record a sale through the API, connect Stripe in <a href="${c.path}/settings/integrations#providers">Settings → Integrations</a> or add one in <a href="${c.path}/commissions/new">Commissions</a>.</p>`
    return c.page(
      'Overview',
      html`${head('Overview', action)}${noticeBox(c.notice())}${picker(c, days, typed)}
<p class="muted">From ${day(now.from)} to ${day(new Date(Date.parse(now.to) - 1).toISOString())} (UTC), compared with the ${Math.round(span / DAY)} days before.</p>${cards}${charts}
<div class="grid"><section class="card"><h2>Top affiliates <span class="hint">(all time)</span></h2>${topTable}</section><section class="card"><h2>Latest commissions</h2>${latestTable}</section></div>`,
    )
  },
}
