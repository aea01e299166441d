import { formatMoney } from '../domain/money.js'
import { answerFields } from '../domain/answers.js'
import type { AffiliateRecord, CampaignRecord } from '../domain/records.js'
import type { FindQuery, ModelName, RecordOf, StorageTransaction } from '../storage/types.js'
import { inTransaction, readOnly, type Deps } from './shared.js'

// CSV files streamed a page of records at a time: what every export (`/payouts/export`,
// `/exports/commissions`, `/exports/affiliates`) answers. Memory holds one page, whatever the count.

export const CSV_TYPE = 'text/csv; charset=utf-8'

/** Records read per storage transaction, and per piece of the stream. */
export const EXPORT_PAGE = 500

/** A CSV row. Money travels as a bigint of minor units and is written with two decimals (see `csvWriter`). */
export type Row = readonly (string | number | bigint | boolean | null)[]

/**
 * Text a spreadsheet may still run as a formula after `escape_formulas`: one starting with
 * whitespace (spaces, line breaks, no-break spaces) and then `=`, `+`, `-` or `@` (or their
 * full-width forms), which spreadsheets trim before they look for a formula.
 */
const SPACED_FORMULA = /^\s+[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]/

/**
 * Loads csv-stringify (with the first file: nothing else needs it, so importing the package does
 * not) and answers `csvText`: the CSV text of `rows` (RFC 4180: CRLF line ends, quotes where
 * needed). `escape_formulas` puts a `'`
 * before any text starting with `=`, `+`, `-`, `@`, tab or CR, and the string cast puts one before
 * text starting with whitespace and then one of those (`SPACED_FORMULA`), so a spreadsheet opening
 * the file shows an affiliate's name or a reference rather than running it as a formula (OWASP "CSV
 * Injection"). Numbers are exempt, so money goes in as a bigint of minor units: a clawback's
 * `-12.50` stays a number. Booleans are written `true` / `false`.
 */
export async function csvWriter(): Promise<(rows: readonly Row[]) => string> {
  const { stringify } = await import('csv-stringify/sync')
  return (rows) =>
    rows.length === 0
      ? ''
      : stringify(rows as Row[], {
          record_delimiter: 'windows',
          escape_formulas: true,
          cast: {
            bigint: (minor) => formatMoney(Number(minor)),
            boolean: (value) => String(value),
            string: (value) => (SPACED_FORMULA.test(value) ? `'${value}` : value),
          },
        })
}

/** A column a file has beside an answer's fields, read from what its page reads besides (`X`). */
export interface AddedColumn<M extends ModelName, X> {
  /** The header, e.g. `affiliateEmail`. */
  name: string
  /** The answer field it follows, by its answered name (`affiliateId`). */
  after: string
  value: (record: RecordOf<M>, extra: X) => string | null
}

/**
 * The columns of one of a model's answers (see `answers` in domain/describe.ts) as a CSV header, and
 * the row of a record: the answer's fields in order, money as minor units (see `csvWriter`), lists
 * joined with a space; `flags` (integer fields holding 0 or 1, as the source's wire format answers
 * them) as `true` / `false` like the booleans; and the `added` columns, each after the field it
 * names, for the people who read the file (an affiliate's e-mail beside its id, the currency
 * beside the money).
 */
export function answerColumns<M extends ModelName, X = undefined>(
  model: M,
  answer: string,
  options: { flags?: readonly string[]; added?: readonly AddedColumn<M, X>[] } = {},
): { header: string[]; row: (record: RecordOf<M>, extra: X) => Row } {
  type Cell = (values: Record<string, unknown>, record: RecordOf<M>, extra: X) => Row[number]
  const header: string[] = []
  const cells: Cell[] = []
  const flags = new Set(options.flags ?? [])
  for (const [field, spec, name] of answerFields(model, answer)) {
    header.push(name)
    if (spec.kind === 'money') cells.push((values) => (values[field] === null ? null : BigInt(values[field] as number)))
    else if (spec.kind === 'list') cells.push((values) => (values[field] as string[]).join(' '))
    else if (flags.has(field)) cells.push((values) => values[field] === 1 || values[field] === true)
    else cells.push((values) => values[field] as string | number | boolean | null)
    for (const added of options.added ?? []) {
      if (added.after !== name) continue
      header.push(added.name)
      cells.push((_, record, extra) => added.value(record, extra))
    }
  }
  const missing = (options.added ?? []).find((added) => !header.includes(added.name))
  if (missing) throw new Error(`${model} answer ${answer} has no field ${missing.after} to put ${missing.name} after`)
  return {
    header,
    row: (record, extra) => {
      const values: Record<string, unknown> = record
      return cells.map((cell) => cell(values, record, extra))
    },
  }
}

/** What the affiliates and campaigns of a page of records are, read with the page: for the human columns. */
export interface Named {
  affiliates: ReadonlyMap<string, AffiliateRecord>
  campaigns: ReadonlyMap<string, CampaignRecord>
}

/** Reads the affiliates and campaigns `records` name, in one look-up each (in the page's transaction). */
export async function namesOf(tx: StorageTransaction, records: readonly { affiliateId?: string; campaignId: string }[]): Promise<Named> {
  const affiliateIds = [...new Set(records.flatMap((record) => (record.affiliateId === undefined ? [] : [record.affiliateId])))]
  const campaignIds = [...new Set(records.map((record) => record.campaignId))]
  const [affiliates, campaigns] = await Promise.all([
    affiliateIds.length ? tx.find('affiliates', { where: { id: { in: affiliateIds } } }) : [],
    campaignIds.length ? tx.find('campaigns', { where: { id: { in: campaignIds } } }) : [],
  ])
  return { affiliates: new Map(affiliates.map((a) => [a.id, a])), campaigns: new Map(campaigns.map((c) => [c.id, c])) }
}

type Stamped = { createdAt: string; id: string }

/** Where a record sorts in an export: `createdAt`, then `id`, both ascending. */
const isAfter = (record: Stamped, last: Stamped): boolean =>
  record.createdAt > last.createdAt || (record.createdAt === last.createdAt && record.id > last.id)

/**
 * Reads the records of `model` matching `query` (`where`, `contains`), oldest first, a page per
 * storage transaction, each page in its own short read-only transaction so that a slow reader holds
 * no transaction open; `extra` reads what a page needs besides (in the same transaction).
 *
 * Pages are found by offset, and the offset is only a hint: each page is read from one row before
 * it (the last row given), and only rows sorting after that row are given. So no record is given
 * twice, and when records before the reader's position leave the selection (a pending payout
 * moved to processing while the export runs), the rows shift back; the reader sees that the
 * first row it reads already sorts after the last one given, and steps back until it finds its
 * place, so nothing is skipped. A record that matches from the start to the end of the export is
 * in the file exactly once; one that enters or leaves the selection meanwhile is in it or not
 * depending on whether the reader had passed it; each row shows the record as its page read it.
 */
export function recordPages<M extends ModelName, X = undefined>(
  deps: Deps,
  model: M,
  query: Pick<FindQuery<M>, 'where' | 'contains'>,
  extra?: (tx: StorageTransaction, records: RecordOf<M>[]) => Promise<X>,
): () => Promise<{ records: RecordOf<M>[]; extra: X } | null> {
  let position = 0
  let last: Stamped | null = null
  let finished = false
  const orderBy = { field: 'createdAt', direction: 'ASC' } as FindQuery<M>['orderBy']

  const page = async (tx: StorageTransaction) => {
    // After the first page, read from the last row given (one row of overlap), so it can be found.
    let offset = last === null ? 0 : Math.max(0, position - 1)
    // Whether a row read in this transaction sorts at or before the last one given (or none was).
    let placed = last === null || offset === 0
    for (;;) {
      const limit = last === null ? EXPORT_PAGE : EXPORT_PAGE + 1
      const rows = (await tx.find(model, { ...query, orderBy, offset, limit })) as (RecordOf<M> & Stamped)[]
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
      return { records: fresh as RecordOf<M>[], extra: (extra ? await extra(tx, fresh) : undefined) as X }
    }
  }

  return async () => (finished ? null : inTransaction(deps.storage, page, readOnly))
}

/**
 * A CSV file as a stream: `header` (when not null), then the rows `next` gives a page at a time
 * until it answers null. The first page is read now, so a storage failure is an error answer, not a
 * cut-off file; after that nothing is read ahead of the consumer.
 */
export async function csvStream(header: Row | null, next: () => Promise<Row[] | null>): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder()
  const csvText = await csvWriter()
  const pieceOf = async (first: boolean): Promise<string | null> => {
    const rows = await next()
    if (rows === null) return first && header ? csvText([header]) : null
    return csvText(first && header ? [header, ...rows] : rows)
  }
  let pending: string | null = await pieceOf(true)
  return new ReadableStream<Uint8Array>(
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
}
