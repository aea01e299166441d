import { type Bucket, type BucketOptions, type Granularity, bucketsBetween } from './buckets.js'

// A report's time series summed from hourly rollups: one row per UTC hour (and workspace, campaign,
// affiliate, which the caller has already filtered on) with numeric counters.
//
// Which rows count, and where:
// - A row counts when its `hourStart` lies in [from, to), so the series adds up to what a summary
//   over the same rows says, even when `from` or `to` falls inside a bucket (the first and last
//   buckets then hold part of their period).
// - A row counts in the bucket that holds its `hourStart`. In a zone whose offset is a whole number
//   of hours, bucket boundaries fall on UTC hours and this is exact. Rollups cannot say more than
//   their hour, so in a zone with a 30- or 45-minute offset (Asia/Kolkata +05:30,
//   Asia/Kathmandu +05:45, Pacific/Chatham +12:45, Australia/Lord_Howe in winter +10:30) a bucket
//   holds the UTC hours that start inside it: the local day from 00:00 to 00:00 (18:30Z to 18:30Z in
//   Kolkata) holds the hours starting 19:00Z to 18:00Z, i.e. its data runs 30 minutes (Kathmandu
//   and Chatham: 45 minutes) later than its label, and the hour containing local midnight counts
//   in the day before. Buckets shorter than an hour that hold no hour start (Lord Howe's 30-minute
//   hour bucket) stay at zero. Exact local days there would need 15-minute rollups.

/** An hourly rollup row: the UTC hour it covers (ISO 8601, on the hour) and its counters. */
export type HourlyRow<K extends string> = { hourStart: string } & { readonly [counter in K]: number }

/** One bucket of a series: its start and end (UTC ISO instants) and the sum of each counter. */
export type SeriesItem<K extends string> = { start: string; end: string } & { [counter in K]: number }

export interface SeriesOptions<K extends string> extends BucketOptions {
  /** The counters to sum: every item has each of them, 0 in an empty bucket. */
  counters: readonly K[]
}

const HOUR = 3_600_000

/** An ISO 8601 instant with its offset (a string without one would be read in the host's zone). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/

function hourOf(row: { hourStart: unknown }): number {
  const text = row.hourStart
  const instant = typeof text === 'string' && ISO_INSTANT.test(text) ? Date.parse(text) : Number.NaN
  if (!Number.isFinite(instant) || instant % HOUR !== 0) {
    throw new TypeError(`An hourly row's hourStart must be an ISO 8601 instant on a UTC hour, got ${JSON.stringify(text)}.`)
  }
  return instant
}

/** The index of the last bucket starting at or before `instant` (there is one). */
function bucketIndex(buckets: readonly Bucket[], instant: number): number {
  let low = 0
  let high = buckets.length - 1
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if (buckets[middle]!.startMs <= instant) low = middle
    else high = middle - 1
  }
  return low
}

/**
 * Every bucket of `granularity` in `timeZone` meeting [fromMs, toMs), empty ones included, with the
 * sums of `options.counters` over the hourly rows whose `hourStart` lies in [fromMs, toMs) and in the
 * bucket. Rows may come in any order; rows outside the period are ignored.
 * @throws TypeError for an unknown zone or granularity, a row whose `hourStart` is not on a UTC
 * hour, or a counter that is not a finite number; RangeError as `bucketsBetween` does.
 */
export function seriesFrom<K extends string>(
  hourly: Iterable<HourlyRow<K>>,
  fromMs: number,
  toMs: number,
  granularity: Granularity,
  timeZone: string,
  options: SeriesOptions<K>,
): SeriesItem<K>[] {
  const buckets = bucketsBetween(fromMs, toMs, granularity, timeZone, options)
  const { counters } = options
  const items = buckets.map((b) => {
    const item = { start: b.start, end: b.end } as SeriesItem<K>
    for (const counter of counters) (item as Record<K, number>)[counter] = 0
    return item
  })
  for (const row of hourly) {
    const hour = hourOf(row)
    if (hour < fromMs || hour >= toMs) continue
    const item = items[bucketIndex(buckets, hour)] as Record<K, number>
    for (const counter of counters) {
      const value = row[counter]
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new TypeError(
          `Counter ${JSON.stringify(counter)} of the row for ${row.hourStart} must be a finite number, got ${String(value)}.`,
        )
      }
      item[counter] += value
    }
  }
  return items
}
