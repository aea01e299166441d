import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { affiliateExport, commissionExport } from '../schemas/reports.js'
import { parse } from '../schemas/validate.js'
import type { Access } from './access.js'
import { answerColumns, CSV_TYPE, csvStream, namesOf, recordPages, type Named } from './export-pages.js'
import type { PayoutExport } from './payout-export.js'
import { affiliateStatusWhere, listWhere, periodWhere, type Deps } from './shared.js'

// `GET /exports/commissions` and `GET /exports/affiliates`: every record the list filters match,
// oldest first, as a CSV file streamed a page at a time (memory holds one page, whatever the count).
// The columns are the fields of the API's answer (a commission's as a referred user answers it, so
// every field), in answer order, money with two decimals and flags true/false; with the columns a
// person reads beside the ids: the affiliate's e-mail and the campaign's name (and for affiliates
// the currency of their earnings, the campaign's).

export type CommissionExportQuery = Infer<typeof commissionExport.struct>
export type AffiliateExportQuery = Infer<typeof affiliateExport.struct>
/** A CSV file answer, as `payouts.export` gives: `{ filename, contentType, body }`. */
export type CsvExport = PayoutExport

let commissionColumns: ReturnType<typeof answerColumns<'commissions', Named>> | undefined
let affiliateColumns: ReturnType<typeof answerColumns<'affiliates', Named>> | undefined

const commissionColumnsOf = () =>
  (commissionColumns ??= answerColumns<'commissions', Named>('commissions', 'referredUser', {
    flags: ['isWalletPayment'],
    added: [
      { name: 'campaignName', after: 'campaignId', value: (record, named) => named.campaigns.get(record.campaignId)?.campaignName ?? null },
      { name: 'affiliateEmail', after: 'affiliateId', value: (record, named) => named.affiliates.get(record.affiliateId)?.email ?? null },
    ],
  }))

const affiliateColumnsOf = () =>
  (affiliateColumns ??= answerColumns<'affiliates', Named>('affiliates', 'affiliate', {
    added: [
      { name: 'campaignName', after: 'campaignId', value: (record, named) => named.campaigns.get(record.campaignId)?.campaignName ?? null },
      { name: 'currency', after: 'totalEarnings', value: (record, named) => named.campaigns.get(record.campaignId)?.currency ?? null },
    ],
  }))

export function exportOperations(deps: Deps) {
  const filename = (what: string) => `${what}-${isoAt(deps.clock).slice(0, 10)}.csv`
  return {
    async commissions(access: Access, query: unknown): Promise<CsvExport> {
      const q = parse([commissionExport, query]).query
      const columns = commissionColumnsOf()
      const next = recordPages(
        deps,
        'commissions',
        { where: { ...listWhere(access, q), ...periodWhere(q) }, contains: q.contains || undefined },
        namesOf,
      )
      const body = await csvStream(columns.header, async () => {
        const page = await next()
        return page && page.records.map((record) => columns.row(record, page.extra))
      })
      return { filename: filename('commissions'), contentType: CSV_TYPE, body }
    },

    async affiliates(access: Access, query: unknown): Promise<CsvExport> {
      const q = parse([affiliateExport, query]).query
      const columns = affiliateColumnsOf()
      const next = recordPages(
        deps,
        'affiliates',
        {
          where: { ...listWhere(access, { ...q, status: undefined }), ...affiliateStatusWhere(q.status) },
          contains: q.contains || undefined,
        },
        (tx, records) =>
          namesOf(
            tx,
            records.map(({ campaignId }) => ({ campaignId })),
          ),
      )
      const body = await csvStream(columns.header, async () => {
        const page = await next()
        return page && page.records.map((record) => columns.row(record, page.extra))
      })
      return { filename: filename('affiliates'), contentType: CSV_TYPE, body }
    },
  }
}
