import { check, oneOf, queryInteger, text, timestamp, uuid } from '../domain/checks.js'
import { affiliateStatus } from '../domain/descriptions/affiliates.js'
import { commissions } from '../domain/descriptions/commissions.js'
import { GRANULARITIES, normalizeTimeZone } from '../reports/buckets.js'
import { inputsOf } from './model-schemas.js'
import { allOptional, schema } from './validate.js'

/** The most affiliates `GET /reports/top-affiliates` answers. */
export const MAX_TOP = 100
export const TOP_BY = ['earnings', 'clicks', 'signups', 'conversionRate'] as const

/** An IANA time zone name the runtime knows (`Europe/Berlin`, `UTC`), in any letter case. */
export const timeZone = check<string>(
  'timeZone',
  { type: 'string', maxLength: 64, description: 'An IANA time zone name, such as `Europe/Berlin`.', examples: ['UTC', 'America/New_York'] },
  (value) => {
    if (typeof value !== 'string' || value.length === 0 || value.length > 64) return 'must be an IANA time zone name such as Europe/Berlin'
    try {
      normalizeTimeZone(value)
      return true
    } catch {
      return 'must be an IANA time zone name such as Europe/Berlin'
    }
  },
)

/** What every report is about: a workspace (a campaign or affiliate of it) and a period, [from, to). */
const filters = {
  workspaceId: uuid,
  ...allOptional({ campaignId: uuid, affiliateId: uuid, from: timestamp, to: timestamp }),
}

/** `GET /reports/summary`. */
export const reportSummary = schema(filters)

/** `GET /reports/timeseries`. */
export const reportTimeseries = schema({ ...filters, ...allOptional({ interval: oneOf(GRANULARITIES), timezone: timeZone }) })

/** `GET /reports/top-affiliates`. */
export const reportTopAffiliates = schema({ ...filters, ...allOptional({ by: oneOf(TOP_BY), limit: queryInteger(1, MAX_TOP) }) })

/** `GET /exports/commissions`: the filters of `GET /commissions/list`, without the page. */
export const commissionExport = schema(
  allOptional({
    workspaceId: uuid,
    campaignId: uuid,
    affiliateId: uuid,
    ...inputsOf(commissions, ['status', 'kind']),
    from: timestamp,
    to: timestamp,
    contains: text(200),
  }),
)

/** `GET /exports/affiliates`: the filters of `GET /affiliates/list`, without the page. */
export const affiliateExport = schema(allOptional({ workspaceId: uuid, campaignId: uuid, status: affiliateStatus, contains: text(200) }))
