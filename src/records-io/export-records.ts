import { isoAt, systemClock, type Clock } from '../clock.js'
import { modelNames } from '../storage/models.js'
import type { ModelName, Storage } from '../storage/types.js'
import {
  LineDigest,
  RECORDS_FORMAT,
  RECORDS_SCHEMA_VERSION,
  RECORDS_VERSION,
  recordLine,
  type RecordsDigests,
  type RecordsHeader,
  type RecordsTrailer,
} from './format.js'
import { DEFAULT_PAGE_SIZE, recordPages } from './pages.js'

/** Where an export or import has got to: called as each model starts and after each page. */
export interface RecordsProgress {
  /** Reading records out, writing them in, or reading them back to check them. */
  stage: 'export' | 'import' | 'verify'
  model: ModelName
  /** Records of this model done so far. */
  done: number
  /** Records of this model in all, when known (an export counts them first; an import cannot). */
  total?: number
}

export interface ExportRecordsOptions {
  /** Stamps `exportedAt`. @default the system clock */
  clock?: Clock
  /** Records per read (each page is one short read-only transaction). @default 2000 */
  pageSize?: number
  /** Told as each model starts and after each page (a progress bar's feed). */
  onProgress?: (progress: RecordsProgress) => void
}

/**
 * Every record of every model as lines of NDJSON (without their `\n`): the header, one line per
 * record (`{"model":…,"record":{…}}`, every field, keys and secrets as stored: key hashes stay
 * hashes), then the trailer with each model's count and SHA-256. Through the Storage contract
 * alone, so any storage exports, a page at a time: memory holds a page, never a model.
 *
 * Each page is read in a transaction of its own: the lines are a consistent snapshot when nothing
 * writes meanwhile (for the sql.js file served by `npm start`, open a still copy with
 * `fileJournal(path, { readOnly: true })`; see docs/operations.md).
 *
 * @example
 * for await (const line of exportRecords(storage)) out.write(`${line}\n`)
 */
export async function* exportRecords(storage: Storage, options: ExportRecordsOptions = {}): AsyncGenerator<string, RecordsTrailer> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
  const header: RecordsHeader = {
    format: RECORDS_FORMAT,
    version: RECORDS_VERSION,
    schemaVersion: RECORDS_SCHEMA_VERSION,
    exportedAt: isoAt(options.clock ?? systemClock),
  }
  yield JSON.stringify(header)
  const digests = {} as RecordsDigests
  for (const model of modelNames) {
    const total = options.onProgress ? await storage.transaction((tx) => tx.count(model, {}), { readOnly: true }) : undefined
    options.onProgress?.({ stage: 'export', model, done: 0, ...(total === undefined ? {} : { total }) })
    const digest = new LineDigest()
    for await (const page of recordPages(storage, model, pageSize)) {
      const lines = page.map((record) => recordLine(model, record))
      digest.add(lines)
      yield* lines
      options.onProgress?.({ stage: 'export', model, done: digest.count, ...(total === undefined ? {} : { total }) })
    }
    digests[model] = digest.digest()
  }
  const trailer: RecordsTrailer = { trailer: true, models: digests }
  yield JSON.stringify(trailer)
  return trailer
}
