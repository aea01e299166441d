import type { Infer } from 'superstruct'
import { formatMoney } from '../domain/money.js'
import { unprocessable, validationError } from '../errors.js'
import { bucketsBetween, isReportInputError, normalizeTimeZone, type Granularity, type ReportInputField } from '../reports/buckets.js'
import {
  affiliateFigures,
  conversionRate,
  periodFigures,
  seriesOf,
  summaryOf,
  type Figures,
  type ReportFigures,
  type ReportScope,
  type SeriesPoint,
} from '../reports/read.js'
import { reportSummary, reportTimeseries, reportTopAffiliates, type TOP_BY } from '../schemas/reports.js'
import { parse } from '../schemas/validate.js'
import type { StorageTransaction } from '../storage/types.js'
import { requireWorkspace, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { findCampaign } from './campaigns.js'
import { inTransaction, readOnly, type Deps } from './shared.js'

// `GET /reports/summary`, `/reports/timeseries`, `/reports/top-affiliates`: figures of a workspace
// (or one campaign or affiliate of it) over a period, read from the hourly rollups.

export type ReportSummaryQuery = Infer<typeof reportSummary.struct>
export type ReportTimeseriesQuery = Infer<typeof reportTimeseries.struct>
export type ReportTopAffiliatesQuery = Infer<typeof reportTopAffiliates.struct>
export type TopAffiliatesBy = (typeof TOP_BY)[number]

const DAY = 86_400_000
/** The period a report defaults to: the 30 days up to now. */
export const DEFAULT_REPORT_DAYS = 30
/** The longest period a report covers (about ten years). */
export const MAX_REPORT_DAYS = 3660
/** Affiliates `top-affiliates` answers unless `limit` says. */
export const DEFAULT_TOP = 10

/** What a report is about, as answered: the workspace, the campaign and affiliate (null: all), the period. */
export interface ReportPeriod {
  workspaceId: string
  campaignId: string | null
  affiliateId: string | null
  /** The period's first instant (UTC ISO); figures count by the hour they lie in, when it starts in [from, to). */
  from: string
  to: string
}

export interface ReportSummary extends ReportPeriod, ReportFigures {}

export interface ReportTimeseries extends ReportPeriod {
  interval: Granularity
  /** The zone's canonical IANA name. */
  timezone: string
  /** Every bucket meeting the period, in order, empty ones included. */
  items: SeriesPoint[]
}

export interface TopAffiliate {
  affiliateId: string
  campaignId: string
  email: string
  firstName: string
  lastName: string
  opens: number
  clicks: number
  signups: number
  conversionRate: number
  commissionCount: number
  earnings: string
}

export interface ReportTopAffiliates extends ReportPeriod {
  by: TopAffiliatesBy
  /** The affiliates with any figure in the period, best first (ties: affiliateId ascending), at most `limit`. */
  items: TopAffiliate[]
}

const queryError = (field: ReportInputField | 'campaignId', msg: string) =>
  validationError([{ type: 'field', msg: `${field} ${msg}`, path: field, location: 'query' }])

type Filters = {
  workspaceId: string
  campaignId?: string | undefined
  affiliateId?: string | undefined
  from?: string | undefined
  to?: string | undefined
}

/** The period asked for, in epoch ms: `to` defaults to now, `from` to 30 days before `to`. */
function periodOf(q: Filters, now: number): { fromMs: number; toMs: number } {
  const toMs = q.to === undefined ? now : Date.parse(q.to)
  const fromMs = q.from === undefined ? toMs - DEFAULT_REPORT_DAYS * DAY : Date.parse(q.from)
  if (toMs < fromMs) throw queryError('to', 'must not be before from')
  if (toMs - fromMs > MAX_REPORT_DAYS * DAY) throw queryError('from', `must be at most ${MAX_REPORT_DAYS} days before to`)
  return { fromMs, toMs }
}

/**
 * The scope of a report the caller may read: 403 for a workspace not the caller's, 404 for a
 * campaign or affiliate it cannot see, 422 for one of another workspace or an affiliate of another campaign.
 */
async function scopeOf(tx: StorageTransaction, access: Access, q: Filters): Promise<ReportScope> {
  const workspaceId = q.workspaceId.toLowerCase()
  requireWorkspace(access, workspaceId)
  const scope: ReportScope = { workspaceId }
  if (q.campaignId !== undefined) {
    const campaign = await findCampaign(tx, access, q.campaignId)
    if (campaign.workspaceId !== workspaceId) throw unprocessable('campaignId is not in this workspace', 'workspace_mismatch')
    scope.campaignId = campaign.id
  }
  if (q.affiliateId !== undefined) {
    const affiliate = await findAffiliate(tx, access, q.affiliateId)
    if (affiliate.workspaceId !== workspaceId) throw unprocessable('affiliateId is not in this workspace', 'workspace_mismatch')
    if (scope.campaignId !== undefined && affiliate.campaignId !== scope.campaignId)
      throw unprocessable('The affiliate does not belong to this campaign', 'attribution_mismatch')
    scope.affiliateId = affiliate.id
  }
  return scope
}

const periodAnswer = (scope: ReportScope, fromMs: number, toMs: number): ReportPeriod => ({
  workspaceId: scope.workspaceId,
  campaignId: scope.campaignId ?? null,
  affiliateId: scope.affiliateId ?? null,
  from: new Date(fromMs).toISOString(),
  to: new Date(toMs).toISOString(),
})

const rank: Record<TopAffiliatesBy, (f: Figures) => number> = {
  earnings: (f) => f.earningsMinor,
  clicks: (f) => f.clicks,
  signups: (f) => f.signups,
  conversionRate: (f) => conversionRate(f.signups, f.clicks),
}

export function reportOperations({ storage, clock }: Deps) {
  return {
    async summary(access: Access, query: unknown): Promise<ReportSummary> {
      const q = parse([reportSummary, query]).query
      const { fromMs, toMs } = periodOf(q, clock.now())
      return inTransaction(
        storage,
        async (tx) => {
          const scope = await scopeOf(tx, access, q)
          return { ...periodAnswer(scope, fromMs, toMs), ...summaryOf(await periodFigures(tx, scope, fromMs, toMs)) }
        },
        readOnly,
      )
    },

    async timeseries(access: Access, query: unknown): Promise<ReportTimeseries> {
      const q = parse([reportTimeseries, query]).query
      const { fromMs, toMs } = periodOf(q, clock.now())
      const interval = q.interval ?? 'day'
      const timezone = normalizeTimeZone(q.timezone ?? 'UTC')
      // The buckets are checked before anything is read: too many is the caller's error (400).
      try {
        bucketsBetween(fromMs, toMs, interval, timezone)
      } catch (error) {
        if (isReportInputError(error)) throw queryError(error.field, `is refused: ${error.message}`)
        throw error
      }
      return inTransaction(
        storage,
        async (tx) => {
          const scope = await scopeOf(tx, access, q)
          return {
            ...periodAnswer(scope, fromMs, toMs),
            interval,
            timezone,
            items: await seriesOf(tx, scope, fromMs, toMs, interval, timezone),
          }
        },
        readOnly,
      )
    },

    async topAffiliates(access: Access, query: unknown): Promise<ReportTopAffiliates> {
      const q = parse([reportTopAffiliates, query]).query
      const { fromMs, toMs } = periodOf(q, clock.now())
      const by = q.by ?? 'earnings'
      const limit = q.limit ?? DEFAULT_TOP
      return inTransaction(
        storage,
        async (tx) => {
          const scope = await scopeOf(tx, access, q)
          let figures: Map<string, Figures>
          if (scope.affiliateId !== undefined) {
            figures = new Map([[scope.affiliateId, await periodFigures(tx, scope, fromMs, toMs)]])
          } else {
            figures = await affiliateFigures(tx, scope.workspaceId, scope.campaignId, fromMs, toMs)
          }
          const score = rank[by]
          const ranked = [...figures]
            .filter(([, f]) => Object.values(f).some((value) => value !== 0))
            .sort(([a, fa], [b, fb]) => score(fb) - score(fa) || (a < b ? -1 : 1))
          // Affiliates deleted since keep their share of the workspace's figures but are not listed.
          const items: TopAffiliate[] = []
          for (let i = 0; i < ranked.length && items.length < limit; i += limit) {
            const chunk = ranked.slice(i, i + limit)
            const found = await tx.find('affiliates', { where: { id: { in: chunk.map(([id]) => id) } } })
            const byId = new Map(found.map((affiliate) => [affiliate.id, affiliate]))
            for (const [id, f] of chunk) {
              const affiliate = byId.get(id)
              if (!affiliate || items.length >= limit) continue
              items.push({
                affiliateId: id,
                campaignId: affiliate.campaignId,
                email: affiliate.email,
                firstName: affiliate.firstName,
                lastName: affiliate.lastName,
                opens: f.opens,
                clicks: f.clicks,
                signups: f.signups,
                conversionRate: conversionRate(f.signups, f.clicks),
                commissionCount: f.saleCount,
                earnings: formatMoney(f.earningsMinor),
              })
            }
          }
          return { ...periodAnswer(scope, fromMs, toMs), by, items }
        },
        readOnly,
      )
    },
  }
}
