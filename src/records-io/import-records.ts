import { isoAt, systemClock, type Clock } from '../clock.js'
import { modelNames } from '../storage/models.js'
import type { ModelName, RecordOf, Storage, StoredRecord } from '../storage/types.js'
import { RecordsImportError, type RecordsImportErrorCode } from './errors.js'
import type { RecordsProgress } from './export-records.js'
import { parseHeader, parseLine, type ModelDigest, type RecordsDigests, type RecordsHeader, type RecordsTrailer } from './format.js'
import { digestModel } from './pages.js'
import { continueSequences, SequenceHighs } from './sequences.js'

export interface ImportRecordsOptions {
  /** The time a sequence record made by the import is stamped with. @default the system clock */
  clock?: Clock
  /** Records per write (one transaction, one `insertMany`). @default 5000 */
  batchSize?: number
  /** Records per read when checking what was written. @default 2000 */
  pageSize?: number
  /** Told after each write and each page read back (a progress bar's feed). */
  onProgress?: (progress: RecordsProgress) => void
}

export interface ImportRecordsResult {
  header: RecordsHeader
  /** What the storage holds once written, read back: equal to the file's trailer. */
  models: RecordsDigests
}

const DEFAULT_BATCH_SIZE = 5_000

const listCounts = (counts: Partial<Record<ModelName, number>>): string =>
  Object.entries(counts)
    .map(([model, count]) => `${model} (${count})`)
    .join(', ')

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Records of every model the storage holds, those with none left out. */
async function heldRecords(storage: Storage): Promise<Partial<Record<ModelName, number>>> {
  return storage.transaction(
    async (tx) => {
      const held: Partial<Record<ModelName, number>> = {}
      // One after the other: a transaction may be one connection.
      for (const model of modelNames) {
        const count = await tx.count(model, {})
        if (count > 0) held[model] = count
      }
      return held
    },
    { readOnly: true },
  )
}

/** A failure on the way, before the clean-up says what became of the storage. */
class Stop extends Error {
  constructor(
    readonly code: RecordsImportErrorCode,
    message: string,
    readonly line?: number,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause })
  }
}

/**
 * Writes the records of an export (`exportRecords`, `affiliate-service export`) into an empty
 * storage, through the Storage contract alone, and checks the result.
 *
 * - Refuses a storage that holds any record (`not_empty`), writing nothing.
 * - Reads `lines` as they come (a line at a time; a trailing `\r` is dropped, blank lines skipped)
 *   and writes each model's records in batches of `batchSize`, one transaction each: memory holds
 *   a batch, never a model. Timestamps, ids, key hashes and secrets are written as they are.
 * - Refuses a file that is not a whole export of this version: a header of another layout or
 *   schema, a line that does not fit its model, a missing trailer (a file cut short), counts
 *   that differ from the trailer's (`invalid_records`, with the `line`).
 * - Reads every model back and compares its count (`count`) and the SHA-256 of its lines
 *   re-made from the stored records with the trailer (`verification_failed`).
 * - Then makes the events' sequence go on after the highest sequence imported (on a storage
 *   that keeps it as a `sequences` record, that record is made when the file had none: an export
 *   of PostgreSQL, which keeps it in the database).
 * - On any failure, empties the storage again; if that fails too, the error's `remaining` and its
 *   message name the records to drop.
 *
 * @example
 * import { createReadStream } from 'node:fs'
 * import { createInterface } from 'node:readline'
 * await importRecords(storage, createInterface({ input: createReadStream('backup.ndjson'), crlfDelay: Infinity }))
 */
export async function importRecords(
  storage: Storage,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportRecordsOptions = {},
): Promise<ImportRecordsResult> {
  const held = await heldRecords(storage)
  if (Object.keys(held).length > 0) {
    throw new RecordsImportError(
      'not_empty',
      `The storage already holds records: ${listCounts(held)}. Import only into an empty one (a new database file or PostgreSQL schema); nothing was written.`,
    )
  }
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE
  const report = options.onProgress
  const written: Partial<Record<ModelName, number>> = {}
  const read = new Map<ModelName, number>()
  const batches = new Map<ModelName, { records: StoredRecord[]; firstLine: number }>()
  const highs = new SequenceHighs()
  // One write in flight while the next lines are read and parsed.
  let writing: Promise<void> = Promise.resolve()
  let lineNumber = 0
  /** Whether the events' sequence may have been moved (a `sequences` record made or changed). */
  let continued = false

  const write = (model: ModelName): void => {
    const batch = batches.get(model)
    if (!batch || batch.records.length === 0) return
    batches.delete(model)
    const { records, firstLine } = batch
    const next = writing.then(async () => {
      try {
        // Checked against the model by `parseLine`.
        await storage.transaction((tx) => tx.insertMany(model, records as unknown as RecordOf<ModelName>[]))
      } catch (error) {
        throw new Stop(
          'storage_failed',
          `The storage refused the ${model} records of lines ${firstLine} to ${firstLine + records.length - 1}: ${messageOf(error)}.`,
          firstLine,
          error,
        )
      }
      const done = (written[model] ?? 0) + records.length
      written[model] = done
      report?.({ stage: 'import', model, done })
    })
    // Handled here so that a failure waiting to be read is not an unhandled rejection; it is read
    // where `writing` is awaited next.
    next.catch(() => undefined)
    writing = next
  }

  let header: RecordsHeader | null = null
  let trailer: RecordsTrailer | null = null
  let current: ModelName | null = null
  let expected: RecordsDigests
  try {
    try {
      for await (const raw of lines) {
        lineNumber++
        const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
        if (text.trim() === '') continue
        if (header === null) {
          if (lineNumber !== 1) throw new Stop('invalid_records', `Line ${lineNumber}: the file must start with its header.`, lineNumber)
          header = parseHeader(text)
          continue
        }
        if (trailer !== null) throw new Stop('invalid_records', `Line ${lineNumber}: a line after the trailer.`, lineNumber)
        const parsed = parseLine(text, lineNumber)
        if ('trailer' in parsed) {
          trailer = parsed
          continue
        }
        const { model, record } = parsed
        read.set(model, (read.get(model) ?? 0) + 1)
        highs.note(model, record)
        if (model !== current) {
          // A file comes a model after another: the last one's rest is written now, not kept.
          if (current !== null && batches.has(current)) {
            await writing
            write(current)
          }
          current = model
        }
        let batch = batches.get(model)
        if (!batch) batches.set(model, (batch = { records: [], firstLine: lineNumber }))
        batch.records.push(record)
        if (batch.records.length >= batchSize) {
          // Wait for the write before this one: at most one batch waits while another is written.
          await writing
          write(model)
        }
      }
      for (const model of [...batches.keys()]) write(model)
    } finally {
      // Whatever stopped the reading, no write may still be running when the clean-up starts.
      await writing.catch(() => undefined)
    }
    await writing
    if (header === null) throw new Stop('invalid_records', 'The input is empty: no header, no records.', 1)
    if (trailer === null)
      throw new Stop(
        'invalid_records',
        `The file ends at line ${lineNumber} without its trailer: it was cut short. Export it again.`,
        lineNumber,
      )
    expected = trailer.models
    for (const model of modelNames) {
      const got = read.get(model) ?? 0
      if (got !== expected[model].count) {
        throw new Stop(
          'invalid_records',
          `The file holds ${got} ${model} records where its trailer says ${expected[model].count}: it is damaged.`,
        )
      }
    }
    // Checked before the sequence goes on: the records then are exactly the file's.
    const models = await verify(storage, expected, options)
    continued = true
    await continueSequences(storage, highs, isoAt(options.clock ?? systemClock))
    return { header, models }
  } catch (error) {
    const stop =
      error instanceof Stop
        ? error
        : error instanceof RecordsImportError
          ? new Stop(error.code, error.message, error.line)
          : new Stop('storage_failed', `The import failed: ${messageOf(error)}.`, undefined, error)
    const remaining = await empty(storage, continued ? { ...written, sequences: (written.sequences ?? 0) + 1 } : written)
    const after =
      Object.keys(remaining).length === 0
        ? ' The storage was emptied again: nothing of this import is kept.'
        : ` Emptying the storage again failed too, so it still holds these records of this import: ${listCounts(remaining)}. Drop them (or the whole database) before importing again.`
    throw new RecordsImportError(stop.code, `${stop.message}${after}`, {
      ...(stop.line === undefined ? {} : { line: stop.line }),
      written,
      remaining,
      cause: stop.cause ?? (error instanceof Stop || error instanceof RecordsImportError ? undefined : error),
    })
  }
}

/** Each model's count and digest as stored, against the trailer's. */
async function verify(storage: Storage, expected: RecordsDigests, options: ImportRecordsOptions): Promise<RecordsDigests> {
  const models = {} as RecordsDigests
  for (const model of modelNames) {
    const want: ModelDigest = expected[model]
    options.onProgress?.({ stage: 'verify', model, done: 0, total: want.count })
    const counted = await storage.transaction((tx) => tx.count(model, {}), { readOnly: true })
    if (counted !== want.count) {
      throw new Stop('verification_failed', `Read back, the storage counts ${counted} ${model} records where the file has ${want.count}.`)
    }
    const got = await digestModel(storage, model, options.pageSize, (done) =>
      options.onProgress?.({ stage: 'verify', model, done, total: want.count }),
    )
    if (got.count !== want.count || got.sha256 !== want.sha256) {
      throw new Stop(
        'verification_failed',
        `Read back, the storage's ${model} records differ from the file's: ${got.count} records with SHA-256 ${got.sha256}, where the file has ${want.count} with ${want.sha256}.`,
      )
    }
    models[model] = got
  }
  return models
}

/**
 * Removes every record after a failed import (the storage held none before it), a model at a
 * time; answers what is left of the import where a removal failed (`written` counts the events'
 * counter record once the sequence may have moved).
 */
async function empty(storage: Storage, written: Partial<Record<ModelName, number>>): Promise<Partial<Record<ModelName, number>>> {
  const remaining: Partial<Record<ModelName, number>> = {}
  for (const model of modelNames) {
    try {
      await storage.transaction((tx) => tx.deleteMany(model, {}))
    } catch {
      if ((written[model] ?? 0) > 0) remaining[model] = written[model]
    }
  }
  return remaining
}
