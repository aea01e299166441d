import type { ReportTimeseries } from 'affiliate-service'

// Draws a report time series as an SVG chart: earnings as bars (left axis), clicks as a line and
// signups as dots (right axis), one column per bucket, dates along the bottom. Plain SVG text, no
// dependency: the numbers are the service's, the picture is only arithmetic on them.

const WIDTH = 960
const HEIGHT = 420
const MARGIN = { top: 56, right: 64, bottom: 56, left: 72 }
const COLORS = { earnings: '#4f7fd9', clicks: '#e0782f', signups: '#2f9e5f', grid: '#e3e6eb', text: '#2b2f36' }

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!)
const round = (value: number) => Math.round(value * 10) / 10

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  return [1, 2, 5, 10].map((step) => step * power).find((value) => value >= max)!
}

/** The local date a bucket starts on, as `MM-DD`, in the series' time zone. */
const label = (start: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone, month: '2-digit', day: '2-digit' }).format(new Date(start))

export function seriesSvg(series: ReportTimeseries, title: string): string {
  const items = series.items
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom
  const earnings = items.map((item) => Number(item.earnings))
  const maxMoney = niceMax(Math.max(0, ...earnings))
  const maxCount = niceMax(Math.max(0, ...items.map((item) => Math.max(item.clicks, item.signups))))
  const column = plotWidth / Math.max(1, items.length)
  const x = (i: number) => MARGIN.left + i * column
  const yMoney = (value: number) => MARGIN.top + plotHeight - (value / maxMoney) * plotHeight
  const yCount = (value: number) => MARGIN.top + plotHeight - (value / maxCount) * plotHeight
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12" fill="${COLORS.text}">`,
  )
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`)
  out.push(`<text x="${MARGIN.left}" y="24" font-size="16" font-weight="600">${escapeXml(title)}</text>`)
  out.push(
    `<text x="${MARGIN.left}" y="42" font-size="12">${escapeXml(`${series.interval} buckets in ${series.timezone}, ${series.from.slice(0, 10)} to ${series.to.slice(0, 10)}`)}</text>`,
  )
  for (let tick = 0; tick <= 4; tick++) {
    const y = MARGIN.top + plotHeight - (tick / 4) * plotHeight
    out.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${round(y)}" y2="${round(y)}" stroke="${COLORS.grid}"/>`)
    out.push(
      `<text x="${MARGIN.left - 8}" y="${round(y + 4)}" text-anchor="end" fill="${COLORS.earnings}">${((maxMoney * tick) / 4).toFixed(0)}</text>`,
    )
    out.push(`<text x="${WIDTH - MARGIN.right + 8}" y="${round(y + 4)}" fill="${COLORS.clicks}">${round((maxCount * tick) / 4)}</text>`)
  }
  items.forEach((item, i) => {
    const top = yMoney(earnings[i]!)
    const bar = `<rect class="earnings" x="${round(x(i) + column * 0.15)}" y="${round(top)}" width="${round(column * 0.7)}" height="${round(MARGIN.top + plotHeight - top)}" fill="${COLORS.earnings}"><title>${escapeXml(`${item.start}: earnings ${item.earnings}, ${item.clicks} clicks, ${item.signups} signups`)}</title></rect>`
    out.push(bar)
  })
  const points = items.map((item, i) => `${round(x(i) + column / 2)},${round(yCount(item.clicks))}`).join(' ')
  out.push(`<polyline class="clicks" points="${points}" fill="none" stroke="${COLORS.clicks}" stroke-width="2"/>`)
  items.forEach((item, i) => {
    if (item.signups > 0)
      out.push(
        `<circle class="signups" cx="${round(x(i) + column / 2)}" cy="${round(yCount(item.signups))}" r="3.5" fill="${COLORS.signups}"/>`,
      )
  })
  const every = Math.max(1, Math.ceil(items.length / 12))
  items.forEach((item, i) => {
    if (i % every === 0)
      out.push(
        `<text x="${round(x(i) + column / 2)}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${label(item.start, series.timezone)}</text>`,
      )
  })
  const legend = [
    [COLORS.earnings, 'earnings (left axis)'],
    [COLORS.clicks, 'clicks (right axis)'],
    [COLORS.signups, 'signups (right axis)'],
  ] as const
  legend.forEach(([color, text], i) => {
    const lx = MARGIN.left + i * 180
    out.push(
      `<rect x="${lx}" y="${HEIGHT - 22}" width="12" height="12" fill="${color}"/><text x="${lx + 18}" y="${HEIGHT - 12}">${text}</text>`,
    )
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
