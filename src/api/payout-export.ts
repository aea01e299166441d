import { stringify } from 'csv-stringify/sync'
import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { toPayout, type Payout } from '../domain/payout.js'
import type { AffiliateRecord, PayoutMethod, PayoutRecord } from '../domain/records.js'
import { answerJsonSchema } from '../domain/schema.js'
import { payoutExport, type EXPORT_FORMATS } from '../schemas/payouts.js'
import { parse } from '../schemas/validate.js'
import type { StorageTransaction, Where } from '../storage/types.js'
import type { Access } from './access.js'
import { inTransaction, listWhere, readOnly, type Deps } from './shared.js'

// `GET /payouts/export`: the payouts chosen as a CSV file, streamed a page at a time. See the
// README's "Exporting payouts" for the three formats and why each column is what it is.

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

export const CSV_TYPE = 'text/csv; charset=utf-8'

/** Payouts read per storage transaction, and per piece of the stream. */
export const EXPORT_PAGE = 500

/** The only payout method each provider's file takes; `csv` takes them all. */
const METHODS: Record<PayoutExportFormat, PayoutMethod | undefined> = { csv: undefined, paypal: 'PAYPAL', wise: 'WISE' }

/** The payout answer's field names, in answer order: the header of the `csv` format. */
let csvColumns: string[] | undefined
const payoutColumns = () => (csvColumns ??= Object.keys(answerJsonSchema('payouts', 'payout').properties as object))

/** Wise's "send by email" batch template, header spellings as Wise writes them. */
export const WISE_COLUMNS = ['name', 'recipientEmail', 'paymentReference', 'receiverType', 'amountCurrency', 'amount', 'sourceCurrency', 'targetCurrency'] as const

/**
 * Wise sends the reference with the bank transfer and cuts it per currency (USD 10 characters,
 * GBP 18, EUR 35): the first 8 characters of the payoutId fit them all.
 */
export const wiseReference = (payoutId: string): string => payoutId.slice(0, 8)

/** The note PayPal shows the recipient. */
export const paypalNote = (payout: Payout): string => `Affiliate commissions due by ${payout.periodEnd.slice(0, 10)}`

/** Wise's `name`: the affiliate's first and last name, or its e-mail when it has neither. */
function wiseName(affiliate: AffiliateRecord | undefined, payout: Payout): string {
  const name = [affiliate?.firstName ?? '', affiliate?.lastName ?? ''].map((part) => part.trim()).filter(Boolean).join(' ')
  return name || affiliate?.email || payout.payoutEmail
}

type Row = readonly (string | number | null)[]

/** The header row of a format; PayPal's upload takes none (its first row is the first payment). */
const headerOf = (format: PayoutExportFormat): Row | null =>
  format === 'csv' ? payoutColumns() : format === 'wise' ? WISE_COLUMNS : null

function rowOf(format: PayoutExportFormat, payout: Payout, affiliates: ReadonlyMap<string, AffiliateRecord>): Row {
  switch (format) {
    case 'csv':
      return Object.values(payout) as Row
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
 * CSV text of `rows` (RFC 4180: CRLF line ends, quotes where needed). `escape_formulas` puts a `'`
 * before any text starting with `=`, `+`, `-`, `@`, tab or CR, so a spreadsheet opening the file
 * shows an affiliate's name or a reference rather than running it as a formula (OWASP "CSV
 * Injection"). No value the service makes starts with one of them (amounts are > 0).
 */
const csvText = (rows: readonly Row[]): string =>
  rows.length === 0 ? '' : stringify(rows as Row[], { record_delimiter: 'windows', escape_formulas: true })

/** Where a payout sorts in the export: `createdAt`, then `id`, both ascending. */
const isAfter = (record: PayoutRecord, last: PayoutRecord): boolean =>
  record.createdAt > last.createdAt || (record.createdAt === last.createdAt && record.id > last.id)

/**
 * Reads the payouts matching `where`, oldest first, a page per storage transaction, each page
 * in its own short read-only transaction so that a slow reader holds no transaction open.
 *
 * Pages are found by offset, and the offset is only a hint: each page is read from one row before
 * it (the last row given), and only rows sorting after that row are given. So no payout is given
 * twice, and when payouts before the reader's position leave the selection (a pending payout
 * moved to processing while the export runs), the rows shift back; the reader sees that the
 * first row it reads already sorts after the last one given, and steps back until it finds its
 * place, so nothing is skipped. A payout that matches from the start to the end of the export is
 * in the file exactly once; one that enters or leaves the selection meanwhile is in it or not
 * depending on whether the reader had passed it; each row shows the payout as its page read it.
 */
export function payoutPages(
  deps: Deps,
  where: Where<'payouts'>,
  withAffiliates: boolean,
): () => Promise<{ payouts: PayoutRecord[]; affiliates: Map<string, AffiliateRecord> } | null> {
  let position = 0
  let last: PayoutRecord | null = null
  let finished = false
  const orderBy = { field: 'createdAt', direction: 'ASC' } as const

  const page = async (tx: StorageTransaction) => {
    // After the first page, read from the last row given (one row of overlap), so it can be found.
    let offset = last === null ? 0 : Math.max(0, position - 1)
    // Whether a row read in this transaction sorts at or before the last one given (or none was).
    let placed = last === null || offset === 0
    for (;;) {
      const limit = last === null ? EXPORT_PAGE : EXPORT_PAGE + 1
      const rows = await tx.find('payouts', { where, orderBy, offset, limit })
      if (!placed && (rows.length === 0 || isAfter(rows[0]!, last!))) {
        // Rows before this offset left the selection: step back to a row at or before the last one given.
        offset = Math.max(0, offset - EXPORT_PAGE)
        placed = offset === 0
        continue
      }
      placed = true
      // Rows sort ascending, so the ones after the last given are the tail of `rows`.
      const after = last === null ? rows : rows.filter((row) => isAfter(row, last!))
      if (after.length === 0 && rows.length === limit) {
        // A whole page of rows that entered the selection behind the reader: read on.
        offset += rows.length
        continue
      }
      const fresh = after.slice(0, EXPORT_PAGE)
      if (fresh.length === after.length && rows.length < limit) finished = true
      position = offset + rows.length - after.length + fresh.length
      if (fresh.length) last = fresh[fresh.length - 1]!
      const affiliates = new Map<string, AffiliateRecord>()
      if (withAffiliates && fresh.length) {
        const ids = [...new Set(fresh.map((payout) => payout.affiliateId))]
        for (const affiliate of await tx.find('affiliates', { where: { id: { in: ids } } })) affiliates.set(affiliate.id, affiliate)
      }
      return { payouts: fresh, affiliates }
    }
  }

  return async () => (finished ? null : inTransaction(deps.storage, page, readOnly))
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
    const next = payoutPages(deps, where, format === 'wise')
    const encoder = new TextEncoder()
    const header = headerOf(format)
    const pieceOf = async (first: boolean): Promise<string | null> => {
      const page = await next()
      if (page === null) return first && header ? csvText([header]) : null
      const rows = page.payouts.map((record) => rowOf(format, toPayout(record), page.affiliates))
      return csvText(first && header ? [header, ...rows] : rows)
    }
    // The first page is read now: a storage failure is an error answer, not a cut-off file.
    let pending: string | null = await pieceOf(true)
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          // Pages whose rows all left the selection give no text: read on until one does, or the end.
          while (pending === '') pending = await pieceOf(false)
          if (pending === null) return controller.close()
          controller.enqueue(encoder.encode(pending))
          pending = ''
        },
      },
      // Nothing is read ahead of the consumer: a page is read when the previous one has been taken.
      { highWaterMark: 0 },
    )
    return { filename: `payouts-${format}-${isoAt(deps.clock).slice(0, 10)}.csv`, contentType: CSV_TYPE, body }
  }
}
