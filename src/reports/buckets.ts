// Time buckets of a report series in an IANA time zone: `hour`, `day`, `week` (ISO, from Monday)
// and `month`, every bucket including empty ones, as UTC instants.
//
// The zone's rules come from the runtime (`Intl.DateTimeFormat` with `timeZone`, the IANA database
// it ships); nothing here keeps a table of its own. From the runtime we read one thing, the offset
// (local wall clock minus UTC) at an instant, and everything else is arithmetic on it:
//
// - `day`, `week`, `month`: a bucket starts at the first instant whose local wall-clock time is at
//   or after the local midnight that opens it (the 1st of the month, Monday for weeks). So a day
//   across a daylight-saving change has 23 or 25 hours (Europe/Berlin 2026-03-29, 2026-10-25); a day
//   whose midnight does not exist (America/Santiago, America/Havana, Asia/Beirut: clocks jump from
//   23:59:59 to 01:00) starts at the first instant that exists (01:00); when midnight happens twice
//   (America/Havana falls back from 01:00 to 00:00) the day starts at the first one; when the clock
//   falls back from after midnight into the day before (America/St_Johns 1987-2010, from 00:01 to
//   23:01; Antarctica/Casey 2010-03-05, from 02:00 to 23:00) the new day keeps the time the clock
//   shows "yesterday" again, so it has 25 (27) hours and the day before keeps 24. A local day
//   skipped whole (Pacific/Apia jumped from 2011-12-29 to 2011-12-31) holds no instant and has no
//   bucket.
// - `hour`: a bucket starts where the local wall clock shows a whole hour, or where the offset
//   changes. In Europe/Berlin on 2026-10-25 the local hour 02:00 happens twice and makes two
//   buckets of an hour each; in Asia/Kolkata hours start at hh:30 UTC; on Australia/Lord_Howe's
//   30-minute changes one bucket lasts 30 minutes.
//
// Offsets are read at the instants of a fixed UTC grid (every 6 hours) and cached per zone; where
// two neighbouring grid points differ, the change is found by bisection to the millisecond. This
// assumes a zone's offset changes at most once between two grid points (no two changes within 6
// hours): a scan of all 418 zones of Node 20's ICU (tzdata 2025c) from 1900 to 2040, sampled hourly,
// found no two changes within 7 hours of each other. Every function here reads offsets only through this
// one cached function, so buckets tile time without gap or overlap whatever the data says.
//
// Instants are milliseconds since the epoch, accepted from 1900-01-01 to 9999-01-01 UTC and, so that
// every bucket returned can be asked about again, up to 40 days beyond either end.

export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const
export type Granularity = (typeof GRANULARITIES)[number]

/** One bucket: [start, end), as UTC ISO instants and as epoch milliseconds. */
export interface Bucket {
  start: string
  end: string
  startMs: number
  endMs: number
}

export interface BucketOptions {
  /** At most this many buckets, else a RangeError. @default 1000 */
  maxBuckets?: number
}

/** The query parameter (SPEC.md "Reports") a refused input came in. */
export type ReportInputField = 'from' | 'to' | 'interval' | 'timezone'

/**
 * An input a report route answers 400 for: a TypeError (unknown zone or interval) or a RangeError
 * (instant out of range, `to` before `from`, too many buckets), naming the query parameter.
 */
export type ReportInputError = (TypeError | RangeError) & { readonly field: ReportInputField }

const inputError = (Kind: typeof TypeError | typeof RangeError, field: ReportInputField, message: string): ReportInputError =>
  Object.assign(new Kind(message), { field })

/** Whether `error` is one of the input errors above (and not a bug elsewhere). */
export const isReportInputError = (error: unknown): error is ReportInputError =>
  (error instanceof TypeError || error instanceof RangeError) && typeof (error as { field?: unknown }).field === 'string'

/** The default cap on buckets in one series. */
export const MAX_BUCKETS = 1000

const SECOND = 1000
const HOUR = 3_600_000
const DAY = 24 * HOUR
const GRID = 6 * HOUR
/** Greater than any offset a zone has had since 1900 (they stay within ±15 hours). */
const MAX_OFFSET = 18 * HOUR
/** Longer than any bucket (a month, plus an offset change). */
const SLACK = 40 * DAY
const MIN_INSTANT = Date.UTC(1900, 0, 1) - SLACK
const MAX_INSTANT = Date.UTC(9999, 0, 1) + SLACK
/** Cached grid points per zone before the cache starts over (about 68 years of them). */
const GRID_CACHE_LIMIT = 100_000

/** `en-US` numeric date and time, "3/29/2026, 02:30:00", read whatever the separators. */
const WALL = /^(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)$/

class Zone {
  private readonly format: (instant: number) => string
  private readonly gridOffsets = new Map<number, number>()
  private readonly changes = new Map<number, number>()

  constructor(
    readonly name: string,
    formatter: Intl.DateTimeFormat,
  ) {
    this.format = formatter.format.bind(formatter)
  }

  /** The offset straight from the runtime (whole seconds; the millisecond part carries over). */
  private rawOffset(instant: number): number {
    const text = this.format(instant)
    const m = WALL.exec(text)
    if (!m) throw new Error(`unexpected date format from Intl: ${text}`)
    // Some engines have shown midnight as hour 24 of the same day.
    const wall = Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]) % 24, Number(m[5]), Number(m[6]))
    return wall - Math.floor(instant / SECOND) * SECOND
  }

  private gridOffset(index: number): number {
    let offset = this.gridOffsets.get(index)
    if (offset === undefined) {
      if (this.gridOffsets.size >= GRID_CACHE_LIMIT) {
        this.gridOffsets.clear()
        this.changes.clear()
      }
      offset = this.rawOffset(index * GRID)
      this.gridOffsets.set(index, offset)
    }
    return offset
  }

  /** The instant in (index·GRID, (index+1)·GRID] where the offset changes, or undefined. */
  private changeIn(index: number): number | undefined {
    const before = this.gridOffset(index)
    if (before === this.gridOffset(index + 1)) return undefined
    let change = this.changes.get(index)
    if (change === undefined) {
      let low = index * GRID
      let high = low + GRID
      while (high - low > 1) {
        const middle = low + Math.floor((high - low) / 2)
        if (this.rawOffset(middle) === before) low = middle
        else high = middle
      }
      change = high
      this.changes.set(index, change)
    }
    return change
  }

  /** Local wall-clock time minus UTC at `instant`, in milliseconds. */
  offset(instant: number): number {
    const index = Math.floor(instant / GRID)
    const change = this.changeIn(index)
    return change === undefined || instant < change ? this.gridOffset(index) : this.gridOffset(index + 1)
  }

  /** The first instant in (after, limit] where the offset changes, or undefined. */
  nextChange(after: number, limit: number): number | undefined {
    for (let index = Math.floor(after / GRID); index * GRID < limit; index++) {
      const change = this.changeIn(index)
      if (change !== undefined && change > after && change <= limit) return change
    }
    return undefined
  }

  /** The local wall-clock time at `instant`, as milliseconds of a UTC calendar. */
  wall(instant: number): number {
    return instant + this.offset(instant)
  }

  /** The first instant whose local wall-clock time is at or after `wall`. */
  firstAtOrAfter(wall: number): number {
    // Before wall - MAX_OFFSET every wall-clock time is earlier than `wall`; walk the stretches of
    // constant offset from there.
    const limit = wall + MAX_OFFSET
    let from = wall - MAX_OFFSET
    for (;;) {
      const offset = this.offset(from)
      const until = this.nextChange(from, limit) ?? limit
      if (until + offset > wall) return Math.max(from, wall - offset)
      from = until
    }
  }
}

const zones = new Map<string, Zone>()
const ZONE_NAMES_LIMIT = 1000

/**
 * The zone named `timeZone` (an IANA name the runtime knows, any letter case; `UTC` included).
 * @throws TypeError for anything else.
 */
function zoneOf(timeZone: string): Zone {
  let zone = zones.get(timeZone)
  if (zone) return zone
  let formatter: Intl.DateTimeFormat
  try {
    if (typeof timeZone !== 'string' || timeZone === '') throw new RangeError()
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
  } catch {
    throw inputError(
      TypeError,
      'timezone',
      `Unknown time zone ${JSON.stringify(timeZone)}: expected an IANA time zone name such as "Europe/Berlin" or "UTC".`,
    )
  }
  const canonical = formatter.resolvedOptions().timeZone
  zone = zones.get(canonical) ?? new Zone(canonical, formatter)
  if (zones.size >= ZONE_NAMES_LIMIT) zones.clear()
  zones.set(canonical, zone)
  zones.set(timeZone, zone)
  return zone
}

/**
 * The runtime's canonical name of `timeZone` (`"europe/berlin"` → `"Europe/Berlin"`).
 * @throws TypeError when the runtime does not know the zone.
 */
export function normalizeTimeZone(timeZone: string): string {
  return zoneOf(timeZone).name
}

function checkGranularity(granularity: string): asserts granularity is Granularity {
  if (!(GRANULARITIES as readonly string[]).includes(granularity)) {
    throw inputError(TypeError, 'interval', `Unknown interval ${JSON.stringify(granularity)}: expected one of ${GRANULARITIES.join(', ')}.`)
  }
}

function checkInstant(instant: number, name: 'from' | 'to' | 'instant'): void {
  if (typeof instant !== 'number' || !Number.isFinite(instant) || instant < MIN_INSTANT || instant >= MAX_INSTANT) {
    const message = `${name} must be an instant from 1900-01-01 to 9999-01-01 UTC, got ${String(instant)}.`
    throw name === 'instant' ? new RangeError(message) : inputError(RangeError, name, message)
  }
}

// Calendar arithmetic on wall-clock times (milliseconds of a UTC calendar).
type Calendar = 'day' | 'week' | 'month'

function truncate(wall: number, granularity: Calendar): number {
  const day = Math.floor(wall / DAY) * DAY
  if (granularity === 'day') return day
  const date = new Date(day)
  if (granularity === 'week') return day - ((date.getUTCDay() + 6) % 7) * DAY
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}

function following(wall: number, granularity: Calendar): number {
  if (granularity === 'day') return wall + DAY
  if (granularity === 'week') return wall + 7 * DAY
  const date = new Date(wall)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
}

const mod = (value: number, by: number) => ((value % by) + by) % by

/** The start of the hour bucket holding `instant`. */
function hourStart(zone: Zone, instant: number): number {
  const onTheHour = instant - mod(zone.wall(instant), HOUR)
  return zone.nextChange(onTheHour, instant) ?? onTheHour
}

/** The end of the hour bucket starting at `start`. */
function hourEnd(zone: Zone, start: number): number {
  const next = start - mod(zone.wall(start), HOUR) + HOUR
  return zone.nextChange(start, next) ?? next
}

/** The calendar bucket holding `instant`: its opening wall-clock time, start and end. */
function calendarBucket(zone: Zone, instant: number, granularity: Calendar) {
  let wall = truncate(zone.wall(instant), granularity)
  let start = zone.firstAtOrAfter(wall)
  for (;;) {
    const nextWall = following(wall, granularity)
    const end = zone.firstAtOrAfter(nextWall)
    // After a fall-back across the boundary the wall clock can show the previous bucket again.
    if (end > instant) return { wall, start, end }
    wall = nextWall
    start = end
  }
}

const bucket = (startMs: number, endMs: number): Bucket => ({
  start: new Date(startMs).toISOString(),
  end: new Date(endMs).toISOString(),
  startMs,
  endMs,
})

/**
 * The bucket of `granularity` in `timeZone` that holds `instantMs`.
 * @throws TypeError for an unknown zone or granularity; RangeError for an instant out of range.
 */
export function bucketStart(instantMs: number, granularity: Granularity, timeZone: string): Bucket {
  checkGranularity(granularity)
  checkInstant(instantMs, 'instant')
  const zone = zoneOf(timeZone)
  if (granularity === 'hour') {
    const start = hourStart(zone, instantMs)
    return bucket(start, hourEnd(zone, start))
  }
  const found = calendarBucket(zone, instantMs, granularity)
  return bucket(found.start, found.end)
}

/**
 * Every bucket of `granularity` in `timeZone` that meets [fromMs, toMs), in order, empty or not:
 * the first starts at or before `fromMs`, the last ends at or after `toMs`, and each ends where the
 * next starts. None when `fromMs === toMs`.
 * @throws TypeError for an unknown zone or granularity; RangeError when `toMs < fromMs`, an instant
 * is out of range, or there would be more than `maxBuckets` (default 1000) buckets.
 */
export function bucketsBetween(
  fromMs: number,
  toMs: number,
  granularity: Granularity,
  timeZone: string,
  options: BucketOptions = {},
): Bucket[] {
  checkGranularity(granularity)
  checkInstant(fromMs, 'from')
  checkInstant(toMs, 'to')
  if (toMs < fromMs) throw inputError(RangeError, 'to', 'to must not be before from.')
  const zone = zoneOf(timeZone)
  const max = options.maxBuckets ?? MAX_BUCKETS
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxBuckets must be a positive integer.')
  const buckets: Bucket[] = []
  const push = (start: number, end: number) => {
    if (buckets.length >= max) {
      throw inputError(
        RangeError,
        'interval',
        `The period from ${new Date(fromMs).toISOString()} to ${new Date(toMs).toISOString()} has more than ${max} ${granularity} buckets: use a longer interval or a shorter period.`,
      )
    }
    buckets.push(bucket(start, end))
  }
  if (toMs === fromMs) return buckets
  if (granularity === 'hour') {
    for (let start = hourStart(zone, fromMs); start < toMs; ) {
      const end = hourEnd(zone, start)
      push(start, end)
      start = end
    }
    return buckets
  }
  let { wall, start, end } = calendarBucket(zone, fromMs, granularity)
  push(start, end)
  while (end < toMs) {
    start = end
    // A local period skipped whole starts and ends at the same instant: it has no bucket.
    do {
      wall = following(wall, granularity)
      end = zone.firstAtOrAfter(following(wall, granularity))
    } while (end === start)
    push(start, end)
  }
  return buckets
}
