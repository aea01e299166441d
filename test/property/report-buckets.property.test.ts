import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Bucket, GRANULARITIES, type Granularity, bucketStart, bucketsBetween } from '../../src/reports/buckets.js'
import { seriesFrom } from '../../src/reports/series.js'

// Over random periods from 1900 to 2100 in zones with daylight saving, 30- and 45-minute offsets and
// 30-minute changes: the buckets tile the period with no gap or overlap, every instant lies in the
// bucket bucketStart gives, each bucket starts where a fresh Intl formatter (not the module's cached
// offsets) says the local hour, day, week or month begins, and seriesFrom equals a brute-force sum.

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'America/Santiago',
  'America/Havana',
  'Asia/Kathmandu',
  'America/St_Johns', // fell back from 00:01 to 23:01 the day before (1987-2010)
  'Antarctica/Casey', // 2010-03-05: from 02:00 back to 23:00 the day before
] as const
const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Periods long enough to cross several changes, short enough to stay under the bucket cap. */
const SPAN: Record<Granularity, number> = { hour: 200 * HOUR, day: 400 * DAY, week: 3 * 366 * DAY, month: 20 * 366 * DAY }
const FIRST = Date.UTC(1900, 0, 2)
const LAST = Date.UTC(2100, 0, 1)

const formatters = new Map<string, Intl.DateTimeFormat>()
/** The local wall-clock time at `instant` as milliseconds of a UTC calendar, straight from Intl. */
function wallRaw(instant: number, zone: string): number {
  let f = formatters.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(zone, f)
  }
  const p = Object.fromEntries(f.formatToParts(instant).map((part) => [part.type, Number(part.value)]))
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) + (((instant % 1000) + 1000) % 1000)
}
const offsetRaw = (instant: number, zone: string) => wallRaw(instant, zone) - instant

/** The local wall-clock time that opens the calendar bucket holding wall-clock time `wall`. */
function opening(wall: number, granularity: Exclude<Granularity, 'hour'>): number {
  const day = Math.floor(wall / DAY) * DAY
  const date = new Date(day)
  if (granularity === 'day') return day
  if (granularity === 'week') return day - ((date.getUTCDay() + 6) % 7) * DAY
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}

/** Any instant, or one in a month where most daylight-saving changes happen (March, April, September to November). */
const instant = fc.oneof(
  fc.integer({ min: FIRST, max: LAST }),
  fc
    .record({
      year: fc.integer({ min: 1901, max: 2099 }),
      month: fc.constantFrom(2, 3, 8, 9, 10),
      offset: fc.integer({ min: 0, max: 31 * DAY - 1 }),
    })
    .map(({ year, month, offset }) => Date.UTC(year, month, 1) + offset),
)
const period = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    granularity: fc.constantFrom(...GRANULARITIES),
    from: instant,
    fraction: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map(({ zone, granularity, from, fraction }) => ({ zone, granularity, from, to: from + Math.floor(fraction * SPAN[granularity]) }))

const holding = (buckets: readonly Bucket[], instant: number) => buckets.find((b) => b.startMs <= instant && instant < b.endMs)

describe('report buckets, property', () => {
  it('tile [from, to) with no gap or overlap, and every instant lies in the bucket bucketStart gives', () => {
    fc.assert(
      fc.property(
        period,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { minLength: 1, maxLength: 8 }),
        ({ zone, granularity, from, to }, picks) => {
          const buckets = bucketsBetween(from, to, granularity, zone)
          if (to === from) {
            expect(buckets).toEqual([])
            return
          }
          expect(buckets.length).toBeGreaterThan(0)
          expect(buckets[0]!.startMs).toBeLessThanOrEqual(from)
          expect(buckets.at(-1)!.startMs).toBeLessThan(to)
          expect(buckets.at(-1)!.endMs).toBeGreaterThanOrEqual(to)
          buckets.forEach((b, i) => {
            expect(b.startMs).toBeLessThan(b.endMs)
            expect(b.start).toBe(new Date(b.startMs).toISOString())
            if (i > 0) expect(b.startMs).toBe(buckets[i - 1]!.endMs)
          })
          for (const pick of [0, ...picks]) {
            const instant = from + Math.floor(pick * (to - from))
            expect(bucketStart(instant, granularity, zone)).toEqual(holding(buckets, instant))
          }
          // The first and last instant of every bucket, and its middle.
          for (const b of buckets) {
            for (const instant of [b.startMs, b.endMs - 1, b.startMs + Math.floor((b.endMs - b.startMs) / 2)]) {
              expect(bucketStart(instant, granularity, zone)).toEqual(b)
            }
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('start where the local hour, day, week or month begins (or, for hours, where the offset changes)', () => {
    fc.assert(
      fc.property(period, ({ zone, granularity, from, to }) => {
        for (const b of bucketsBetween(from, to, granularity, zone)) {
          const wall = wallRaw(b.startMs, zone)
          const length = b.endMs - b.startMs
          if (granularity === 'hour') {
            const changed = offsetRaw(b.startMs - 1, zone) !== offsetRaw(b.startMs, zone)
            expect(changed || wall % HOUR === 0).toBe(true)
            expect(length).toBeLessThanOrEqual(HOUR)
            continue
          }
          // The wall clock crosses the bucket's opening here: just before, it shows an earlier time;
          // at the start, the opening itself, or (midnight skipped) no later than the clock jumped
          // forward at that instant (an hour, usually; eight when Casey took +08 in 1969).
          const open = opening(wall, granularity)
          expect(wallRaw(b.startMs - 1, zone)).toBeLessThan(open)
          const jump = offsetRaw(b.startMs, zone) - offsetRaw(b.startMs - 1, zone)
          if (wall !== open) expect(wall - open).toBeLessThanOrEqual(jump)
          if (granularity === 'day') {
            // 24 hours less what the clocks jumped during the day (23 or 25 at daylight saving; 16 on Casey's 1969-01-01).
            expect(length).toBeGreaterThan(0)
            expect(length).toBeLessThanOrEqual(28 * HOUR)
          }
        }
      }),
      { numRuns: 150 },
    )
  })

  it('seriesFrom equals a brute-force sum over random hourly rows', () => {
    const row = fc.record({
      hour: fc.integer({ min: -72, max: 72 + SPAN.week / HOUR }),
      a: fc.integer({ min: 0, max: 1000 }),
      b: fc.integer({ min: -50, max: 50 }),
    })
    fc.assert(
      fc.property(period, fc.array(row, { maxLength: 60 }), ({ zone, granularity, from, to }, drawn) => {
        const base = Math.floor(from / HOUR) * HOUR
        const rows = drawn.map((r) => ({ hourStart: new Date(base + r.hour * HOUR).toISOString(), a: r.a, b: r.b }))
        const series = seriesFrom(rows, from, to, granularity, zone, { counters: ['a', 'b'] })

        const sums = new Map<string, { a: number; b: number }>()
        let total = 0
        for (const r of rows) {
          const instant = Date.parse(r.hourStart)
          if (instant < from || instant >= to) continue
          const key = bucketStart(instant, granularity, zone).start
          const sum = sums.get(key) ?? { a: 0, b: 0 }
          sum.a += r.a
          sum.b += r.b
          sums.set(key, sum)
          total += r.a
        }
        const expected = bucketsBetween(from, to, granularity, zone).map((b) => ({
          start: b.start,
          end: b.end,
          a: sums.get(b.start)?.a ?? 0,
          b: sums.get(b.start)?.b ?? 0,
        }))
        expect(series).toEqual(expected)
        expect(series.reduce((n, item) => n + item.a, 0)).toBe(total)
      }),
      { numRuns: 300 },
    )
  })
})
