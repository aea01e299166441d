import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { toPayout, type Payout } from '../domain/payout.js'
import type { AffiliateRecord, PayoutMethod, PayoutRecord } from '../domain/records.js'
import { answerJsonSchema } from '../domain/answers.js'
import { payoutExport, type EXPORT_FORMATS } from '../schemas/payouts.js'
import { parse } from '../schemas/validate.js'
import type { Where } from '../storage/types.js'
import type { Access } from './access.js'
import { CSV_TYPE, csvStream, EXPORT_PAGE, recordPages, type Row } from './export-pages.js'
import { listWhere, type Deps } from './shared.js'

// `GET /payouts/export`: the payouts chosen as a CSV file, streamed a page at a time. See
// docs/payouts.md, "Exporting payouts", for the three formats and why each column is what it is.

export type PayoutExportQuery = Infer<typeof payoutExport.struct>
export type PayoutExportFormat = (typeof EXPORT_FORMATS)[number]

/** A file answer: what `GET /payouts/export` sends, and what the typed API and the client give back. */
export interface PayoutExport {
  /** `payouts-<format>-<YYYY-MM-DD>.csv`, the date the export was made (UTC). */
  filename: string
  /** `text/csv; charset=utf-8` */
  contentType: string
  /** The file, produced as it is read: each read of the stream reads one page of payouts. */
  body: ReadableStream<Uint8Array>
}

export { CSV_TYPE, EXPORT_PAGE }

/** The only payout method each provider's file takes; `csv` takes them all. */
const METHODS: Record<PayoutExportFormat, PayoutMethod | undefined> = { csv: undefined, paypal: 'PAYPAL', wise: 'WISE' }

/**
 * The payout answer's field names, in answer order, with the affiliate's e-mail after its id (for
 * the people reading the file; `payoutEmail` is where the money goes): the header of the `csv` format.
 */
let csvColumns: string[] | undefined
const payoutColumns = () =>
  (csvColumns ??= Object.keys(answerJsonSchema('payouts', 'payout').properties as object).flatMap((name) =>
    name === 'affiliateId' ? [name, 'affiliateEmail'] : [name],
  ))

/** Wise's "send by email" batch template, header spellings as Wise writes them. */
export const WISE_COLUMNS = [
  'name',
  'recipientEmail',
  'paymentReference',
  'receiverType',
  'amountCurrency',
  'amount',
  'sourceCurrency',
  'targetCurrency',
] as const

/**
 * Wise sends the reference with the bank transfer and cuts it per currency (USD 10 characters,
 * GBP 18, EUR 35): the first 8 characters of the payoutId fit them all.
 */
export const wiseReference = (payoutId: string): string => payoutId.slice(0, 8)

/** The note PayPal shows the recipient. */
export const paypalNote = (payout: Payout): string => `Affiliate commissions due by ${payout.periodEnd.slice(0, 10)}`

/** Wise's `name`: the affiliate's first and last name, or its e-mail when it has neither. */
function wiseName(affiliate: AffiliateRecord | undefined, payout: Payout): string {
  const name = [affiliate?.firstName ?? '', affiliate?.lastName ?? '']
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ')
  return name || affiliate?.email || payout.payoutEmail
}

/** The header row of a format; PayPal's upload takes none (its first row is the first payment). */
const headerOf = (format: PayoutExportFormat): Row | null => (format === 'csv' ? payoutColumns() : format === 'wise' ? WISE_COLUMNS : null)

function rowOf(format: PayoutExportFormat, payout: Payout, affiliates: ReadonlyMap<string, AffiliateRecord>): Row {
  switch (format) {
    case 'csv':
      return Object.entries(payout).flatMap(([name, value]) =>
        name === 'affiliateId' ? [value, affiliates.get(payout.affiliateId)?.email ?? null] : [value],
      ) as Row
    case 'paypal':
      // PayPal's columns: recipient, amount, currency, customer ID (our reference), note, wallet.
      return [payout.payoutEmail, payout.amount, payout.currency, payout.payoutId, paypalNote(payout), 'PAYPAL']
    case 'wise':
      // `target`: the affiliate receives exactly the amount, Wise's fee is the sender's.
      return [
        wiseName(affiliates.get(payout.affiliateId), payout),
        payout.payoutEmail,
        wiseReference(payout.payoutId),
        'PERSON',
        'target',
        payout.amount,
        payout.currency,
        payout.currency,
      ]
  }
}

/**
 * The payouts matching `where`, oldest first, a page per short read-only transaction (see
 * `recordPages`), each with the affiliates it names when `withAffiliates`.
 */
export function payoutPages(
  deps: Deps,
  where: Where<'payouts'>,
  withAffiliates: boolean,
): () => Promise<{ payouts: PayoutRecord[]; affiliates: Map<string, AffiliateRecord> } | null> {
  const next = recordPages(deps, 'payouts', { where }, async (tx, fresh) => {
    const affiliates = new Map<string, AffiliateRecord>()
    if (withAffiliates && fresh.length) {
      const ids = [...new Set(fresh.map((payout) => payout.affiliateId))]
      for (const affiliate of await tx.find('affiliates', { where: { id: { in: ids } } })) affiliates.set(affiliate.id, affiliate)
    }
    return affiliates
  })
  return async () => {
    const page = await next()
    return page && { payouts: page.records, affiliates: page.extra }
  }
}

/** `payouts.export`: checks the query, reads the first page, and answers the file as a stream. */
export function payoutExportOperation(deps: Deps) {
  return async function exportPayouts(access: Access, query: unknown): Promise<PayoutExport> {
    const q = parse([payoutExport, query]).query
    const format = q.format
    const method = METHODS[format]
    const where: Where<'payouts'> = {
      ...listWhere(access, { workspaceId: q.workspaceId, campaignId: q.campaignId, status: q.status ?? 'pending' }),
      ...(q.payoutId === undefined ? {} : { id: { in: [...new Set(q.payoutId.map((id) => id.toLowerCase()))] } }),
      ...(method === undefined ? {} : { payoutMethod: method }),
    }
    const next = payoutPages(deps, where, format !== 'paypal')
    const body = await csvStream(headerOf(format), async () => {
      const page = await next()
      return page && page.payouts.map((record) => rowOf(format, toPayout(record), page.affiliates))
    })
    return { filename: `payouts-${format}-${isoAt(deps.clock).slice(0, 10)}.csv`, contentType: CSV_TYPE, body }
  }
}
