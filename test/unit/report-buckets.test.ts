import { describe, expect, it } from 'vitest'
import { type Granularity, bucketStart, bucketsBetween, isReportInputError, normalizeTimeZone } from '../../src/reports/buckets.js'
import { seriesFrom } from '../../src/reports/series.js'

// Report buckets at the edges of time zones: daylight-saving days of 23 and 25 hours, midnights that
// do not exist or happen twice, 30-minute changes, a day skipped whole, and the errors a route
// answers 400 with.

const HOUR = 3_600_000
const at = (iso: string) => Date.parse(iso)
/** The buckets over [from, to) as "start length-in-hours". */
const spans = (from: string, to: string, granularity: Granularity, timeZone: string) =>
  bucketsBetween(at(from), at(to), granularity, timeZone).map((b) => `${b.start} ${(b.endMs - b.startMs) / HOUR}`)
/** The day bucket holding local noon of `date`. */
const day = (date: string, timeZone: string, noonUtc = 'T12:00:00Z') => {
  const b = bucketStart(at(date + noonUtc), 'day', timeZone)
  return `${b.start} ${(b.endMs - b.startMs) / HOUR}`
}

describe('day buckets across daylight-saving changes', () => {
  it('Europe/Berlin: 2026-03-29 has 23 hours, 2026-10-25 has 25, each from local midnight', () => {
    expect(day('2026-03-29', 'Europe/Berlin')).toBe('2026-03-28T23:00:00.000Z 23')
    expect(day('2026-10-25', 'Europe/Berlin')).toBe('2026-10-24T22:00:00.000Z 25')
    expect(spans('2026-03-28T00:00:00Z', '2026-03-30T12:00:00Z', 'day', 'Europe/Berlin')).toEqual([
      '2026-03-27T23:00:00.000Z 24',
      '2026-03-28T23:00:00.000Z 23',
      '2026-03-29T22:00:00.000Z 24',
    ])
  })

  it('America/New_York: 2026-03-08 has 23 hours, 2026-11-01 has 25', () => {
    expect(day('2026-03-08', 'America/New_York')).toBe('2026-03-08T05:00:00.000Z 23')
    expect(day('2026-11-01', 'America/New_York')).toBe('2026-11-01T04:00:00.000Z 25')
    expect(day('2026-11-02', 'America/New_York')).toBe('2026-11-02T05:00:00.000Z 24')
  })

  it('a midnight that does not exist starts the day at the first instant that does', () => {
    // Santiago jumps from Saturday 23:59:59 -04 to Sunday 01:00 -03.
    expect(day('2026-09-06', 'America/Santiago')).toBe('2026-09-06T04:00:00.000Z 23')
    // Havana jumps from 23:59:59 -05 to 01:00 -04.
    expect(day('2026-03-08', 'America/Havana')).toBe('2026-03-08T05:00:00.000Z 23')
    // Beirut (2020 rules) jumped from 23:59:59 +02 to 01:00 +03.
    expect(day('2020-03-29', 'Asia/Beirut')).toBe('2020-03-28T22:00:00.000Z 23')
  })

  it('a day that falls back across midnight ends at the second midnight; one whose midnight repeats starts at the first', () => {
    // Santiago falls back from Sunday 00:00 -03 to Saturday 23:00 -04: Saturday has 25 hours.
    expect(day('2026-04-04', 'America/Santiago')).toBe('2026-04-04T03:00:00.000Z 25')
    expect(day('2026-04-05', 'America/Santiago')).toBe('2026-04-05T04:00:00.000Z 24')
    // Havana falls back from 01:00 -04 to 00:00 -05: midnight happens twice.
    expect(day('2026-11-01', 'America/Havana')).toBe('2026-11-01T04:00:00.000Z 25')
    // Beirut (2020) fell back from Sunday 00:00 +03 to Saturday 23:00 +02.
    expect(day('2020-10-24', 'Asia/Beirut')).toBe('2020-10-23T21:00:00.000Z 25')
  })

  it('when the clock falls back from after midnight into the day before, the time after the change stays in the new day', () => {
    // St. John's (1987-2010) fell back at 00:01 -2:30 to 23:01 -3:30 the day before: the new day
    // starts at the first midnight, and the hour the clock shows "yesterday" again belongs to it.
    expect(bucketStart(at('2009-11-01T02:45:00Z'), 'day', 'America/St_Johns')).toMatchObject({
      start: '2009-11-01T02:30:00.000Z',
      end: '2009-11-02T03:30:00.000Z',
    })
    expect(day('2009-10-31', 'America/St_Johns')).toBe('2009-10-31T02:30:00.000Z 24')
    // Casey station, 2010-03-05: from 02:00 +11 back to 23:00 +8 the day before, a day of 27 hours.
    expect(bucketStart(at('2010-03-04T15:30:00Z'), 'day', 'Antarctica/Casey')).toMatchObject({
      start: '2010-03-04T13:00:00.000Z',
      end: '2010-03-05T16:00:00.000Z',
    })
    expect(spans('2010-03-04T00:00:00Z', '2010-03-05T17:00:00Z', 'day', 'Antarctica/Casey')).toEqual([
      '2010-03-03T13:00:00.000Z 24',
      '2010-03-04T13:00:00.000Z 27',
      '2010-03-05T16:00:00.000Z 24',
    ])
  })

  it('30- and 45-minute offsets and changes', () => {
    expect(day('2026-03-29', 'Asia/Kolkata')).toBe('2026-03-28T18:30:00.000Z 24')
    expect(day('2026-03-29', 'Asia/Kathmandu')).toBe('2026-03-28T18:15:00.000Z 24')
    // Lord Howe falls back 30 minutes, from 02:00 +11 to 01:30 +10:30.
    expect(day('2026-04-05', 'Australia/Lord_Howe', 'T00:00:00Z')).toBe('2026-04-04T13:00:00.000Z 24.5')
    expect(day('2026-10-04', 'Australia/Lord_Howe', 'T00:00:00Z')).toBe('2026-10-03T13:30:00.000Z 23.5')
  })

  it('a local day skipped whole has no bucket (Pacific/Apia, 2011-12-30)', () => {
    expect(spans('2011-12-29T12:00:00Z', '2011-12-30T12:00:00Z', 'day', 'Pacific/Apia')).toEqual([
      '2011-12-29T10:00:00.000Z 24', // Thursday 29 December, -10
      '2011-12-30T10:00:00.000Z 24', // Saturday 31 December, +14
    ])
  })
})

describe('hour, week and month buckets', () => {
  it('the repeated local hour of a fall-back makes two buckets of an hour', () => {
    expect(spans('2026-10-24T23:30:00Z', '2026-10-25T02:00:00Z', 'hour', 'Europe/Berlin')).toEqual([
      '2026-10-24T23:00:00.000Z 1', // 01:00 CEST
      '2026-10-25T00:00:00.000Z 1', // 02:00 CEST
      '2026-10-25T01:00:00.000Z 1', // 02:00 CET
    ])
    expect(spans('2026-03-29T00:00:00Z', '2026-03-29T02:00:00Z', 'hour', 'Europe/Berlin')).toEqual([
      '2026-03-29T00:00:00.000Z 1', // 01:00 CET
      '2026-03-29T01:00:00.000Z 1', // 03:00 CEST
    ])
  })

  it('hours start on the local hour in a 30-minute zone, and a 30-minute change makes a 30-minute bucket', () => {
    expect(bucketStart(at('2026-06-01T12:10:00Z'), 'hour', 'Asia/Kolkata').start).toBe('2026-06-01T11:30:00.000Z')
    expect(spans('2026-04-04T14:00:00Z', '2026-04-04T16:00:00Z', 'hour', 'Australia/Lord_Howe')).toEqual([
      '2026-04-04T14:00:00.000Z 1', // 01:00 +11
      '2026-04-04T15:00:00.000Z 0.5', // 01:30 +10:30
      '2026-04-04T15:30:00.000Z 1', // 02:00 +10:30
    ])
    expect(bucketStart(at('2026-04-04T15:10:00Z'), 'hour', 'Australia/Lord_Howe')).toMatchObject({
      start: '2026-04-04T15:00:00.000Z',
      end: '2026-04-04T15:30:00.000Z',
    })
  })

  it('an offset change off the hour (old local mean times) ends one hour bucket and starts the next', () => {
    const minutes = (from: string, to: string, zone: string) =>
      bucketsBetween(at(from), at(to), 'hour', zone).map((b) => `${b.start} ${(b.endMs - b.startMs) / 60_000}`)
    // Santiago, 1910-01-10: from -4:42:45 (Santiago mean time) at midnight back to -5.
    expect(minutes('1910-01-10T04:00:00Z', '1910-01-10T05:30:00Z', 'America/Santiago')).toEqual([
      '1910-01-10T03:42:45.000Z 60',
      '1910-01-10T04:42:45.000Z 17.25', // 23:42:45 to 24:00, -5
      '1910-01-10T05:00:00.000Z 60',
    ])
    // Kolkata, 1906-01-01: from +5:21:10 (Madras time) at midnight on to +5:30.
    expect(minutes('1905-12-31T18:00:00Z', '1905-12-31T19:40:00Z', 'Asia/Kolkata')).toEqual([
      '1905-12-31T17:38:50.000Z 60',
      '1905-12-31T18:38:50.000Z 51.166666666666664', // 00:08:50 to 01:00, +5:30
      '1905-12-31T19:30:00.000Z 60',
    ])
    // And the day before Santiago's change has 24 h 17 min 15 s.
    expect(bucketStart(at('1910-01-09T12:00:00Z'), 'day', 'America/Santiago')).toMatchObject({
      start: '1910-01-09T04:42:45.000Z',
      end: '1910-01-10T05:00:00.000Z',
    })
  })

  it('ISO weeks start on Monday at local midnight, months on the 1st', () => {
    // Sunday 2026-03-29 is in the week of Monday 2026-03-23, which loses an hour.
    expect(bucketStart(at('2026-03-29T12:00:00Z'), 'week', 'Europe/Berlin')).toMatchObject({
      start: '2026-03-22T23:00:00.000Z',
      end: '2026-03-29T22:00:00.000Z',
    })
    expect(spans('2026-01-01T00:00:00Z', '2026-01-15T00:00:00Z', 'week', 'UTC')).toEqual([
      '2025-12-29T00:00:00.000Z 168',
      '2026-01-05T00:00:00.000Z 168',
      '2026-01-12T00:00:00.000Z 168',
    ])
    expect(spans('2026-01-15T00:00:00Z', '2026-04-01T00:00:00Z', 'month', 'America/New_York')).toEqual([
      '2026-01-01T05:00:00.000Z 744',
      '2026-02-01T05:00:00.000Z 672',
      '2026-03-01T05:00:00.000Z 743',
    ])
  })

  it('includes empty buckets and none for an empty period', () => {
    expect(bucketsBetween(at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:00Z'), 'day', 'UTC')).toEqual([])
    expect(bucketsBetween(at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:00.001Z'), 'month', 'UTC')).toHaveLength(1)
  })
})

const fieldOf = (run: () => unknown): string | undefined => {
  try {
    run()
  } catch (error) {
    return isReportInputError(error) ? error.field : 'not an input error'
  }
  return undefined
}

describe('errors', () => {
  it('name the query parameter a route answers 400 for', () => {
    expect(fieldOf(() => bucketsBetween(0, HOUR, 'day', 'Mars/Olympus'))).toBe('timezone')
    expect(fieldOf(() => bucketsBetween(0, HOUR, 'fortnight' as Granularity, 'UTC'))).toBe('interval')
    expect(fieldOf(() => bucketsBetween(Number.NaN, HOUR, 'day', 'UTC'))).toBe('from')
    expect(fieldOf(() => bucketsBetween(0, Number.POSITIVE_INFINITY, 'day', 'UTC'))).toBe('to')
    expect(fieldOf(() => bucketsBetween(HOUR, 0, 'day', 'UTC'))).toBe('to')
    expect(fieldOf(() => bucketsBetween(0, 2000 * HOUR, 'hour', 'UTC'))).toBe('interval')
    expect(fieldOf(() => seriesFrom([{ hourStart: 'x', n: 1 }], 0, HOUR, 'day', 'UTC', { counters: ['n'] }))).toBe('not an input error')
    expect(fieldOf(() => bucketsBetween(0, HOUR, 'day', 'UTC'))).toBeUndefined()
  })

  it('an unknown time zone is a TypeError; names are matched in any case', () => {
    for (const zone of ['Mars/Olympus', '', 'Europe/Berlinn', '+25:00']) {
      expect(() => bucketStart(0, 'day', zone)).toThrow(TypeError)
      expect(() => bucketsBetween(0, HOUR, 'day', zone)).toThrow(/Unknown time zone/)
    }
    expect(normalizeTimeZone('europe/berlin')).toBe('Europe/Berlin')
    expect(bucketStart(0, 'day', 'utc').start).toBe('1970-01-01T00:00:00.000Z')
  })

  it('an unknown interval is a TypeError', () => {
    expect(() => bucketStart(0, 'minute' as Granularity, 'UTC')).toThrow(TypeError)
  })

  it('more than 1000 buckets (or the cap given) is a RangeError', () => {
    const from = at('2026-01-01T00:00:00Z')
    expect(bucketsBetween(from, from + 1000 * HOUR, 'hour', 'UTC')).toHaveLength(1000)
    expect(() => bucketsBetween(from, from + 1001 * HOUR, 'hour', 'UTC')).toThrow(/more than 1000 hour buckets/)
    expect(() => bucketsBetween(from, from + 1001 * HOUR, 'hour', 'UTC')).toThrow(RangeError)
    expect(() => bucketsBetween(from, from + 90 * 24 * HOUR, 'day', 'UTC', { maxBuckets: 89 })).toThrow(RangeError)
    expect(bucketsBetween(from, from + 90 * 24 * HOUR, 'day', 'UTC', { maxBuckets: 90 })).toHaveLength(90)
  })

  it('an instant out of range or a reversed period is a RangeError', () => {
    expect(() => bucketsBetween(HOUR, 0, 'day', 'UTC')).toThrow(RangeError)
    expect(() => bucketStart(Number.NaN, 'day', 'UTC')).toThrow(RangeError)
    expect(() => bucketStart(at('1899-11-01T00:00:00Z'), 'day', 'UTC')).toThrow(RangeError)
    expect(() => bucketStart(at('9999-06-01T00:00:00Z'), 'day', 'UTC')).toThrow(RangeError)
    // The buckets at either end of the range can be asked about again.
    const first = bucketStart(at('1900-01-01T00:00:00Z'), 'month', 'Europe/Berlin')
    expect(first.start).toBe('1899-12-31T23:00:00.000Z')
    expect(bucketStart(first.startMs, 'month', 'Europe/Berlin')).toEqual(first)
    const last = bucketStart(at('9998-12-31T23:59:59.999Z'), 'month', 'Pacific/Kiritimati')
    expect(bucketStart(last.endMs - 1, 'month', 'Pacific/Kiritimati')).toEqual(last)
  })
})

describe('seriesFrom', () => {
  const row = (hourStart: string, clicks: number, earnings: number) => ({ hourStart, clicks, earnings })

  it('sums hourly rows into local days, zeros where empty, only rows in [from, to)', () => {
    const rows = [
      row('2026-10-24T21:00:00Z', 100, 100), // 23:00 CEST on the 24th: before `from`
      row('2026-10-24T22:00:00Z', 1, 10), // 00:00 CEST on the 25th
      row('2026-10-25T22:00:00Z', 2, 20), // 23:00 CET on the 25th: the 25th has 25 hours
      row('2026-10-25T23:00:00Z', 4, 40), // 00:00 CET on the 26th
      row('2026-10-27T23:00:00Z', 8, 80), // 00:00 on the 28th: at `to`, left out
    ]
    const series = seriesFrom(rows, at('2026-10-24T22:00:00Z'), at('2026-10-27T23:00:00Z'), 'day', 'Europe/Berlin', {
      counters: ['clicks', 'earnings'],
    })
    expect(series).toEqual([
      { start: '2026-10-24T22:00:00.000Z', end: '2026-10-25T23:00:00.000Z', clicks: 3, earnings: 30 },
      { start: '2026-10-25T23:00:00.000Z', end: '2026-10-26T23:00:00.000Z', clicks: 4, earnings: 40 },
      { start: '2026-10-26T23:00:00.000Z', end: '2026-10-27T23:00:00.000Z', clicks: 0, earnings: 0 },
    ])
  })

  it('in Asia/Kolkata the hour holding local midnight counts in the day before', () => {
    const series = seriesFrom(
      [row('2026-03-28T18:00:00Z', 1, 0), row('2026-03-28T19:00:00Z', 2, 0)],
      at('2026-03-27T18:30:00Z'),
      at('2026-03-29T18:30:00Z'),
      'day',
      'Asia/Kolkata',
      { counters: ['clicks'] },
    )
    expect(series.map((s) => [s.start, s.clicks])).toEqual([
      ['2026-03-27T18:30:00.000Z', 1],
      ['2026-03-28T18:30:00.000Z', 2],
    ])
  })

  it('refuses a row off the hour or a counter that is not a number', () => {
    const period = [at('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z')] as const
    expect(() => seriesFrom([row('2026-01-01T00:30:00Z', 1, 1)], ...period, 'day', 'UTC', { counters: ['clicks'] })).toThrow(TypeError)
    expect(() => seriesFrom([{ hourStart: 'yesterday', clicks: 1 }], ...period, 'day', 'UTC', { counters: ['clicks'] })).toThrow(TypeError)
    // Without an offset the host's zone would decide the hour.
    expect(() => seriesFrom([{ hourStart: '2026-01-01T01:00:00', clicks: 1 }], ...period, 'day', 'UTC', { counters: ['clicks'] })).toThrow(
      TypeError,
    )
    expect(
      seriesFrom([{ hourStart: '2026-01-01T03:00:00+02:00', clicks: 1 }], ...period, 'day', 'UTC', { counters: ['clicks'] })[0]!.clicks,
    ).toBe(1)
    expect(() =>
      seriesFrom([{ hourStart: '2026-01-01T01:00:00Z', clicks: Number.NaN }], ...period, 'day', 'UTC', { counters: ['clicks'] }),
    ).toThrow(/finite number/)
  })
})
