// The records file (`affiliate-service export`, `exportRecords`): NDJSON, one JSON value a line.
//   {"format":"affiliate-service/records","version":1,"schemaVersion":"…","exportedAt":"…"}
//   {"model":"campaigns","record":{…every field of the model, in its description's order…}}
//   …
//   {"trailer":true,"models":{"campaigns":{"count":3,"sha256":"…"},…}}
// Every line is derived from `models` (src/storage/models.ts): a field added to a model is carried
// with no change here, and changes `schemaVersion`.
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'
import { modelNames, models } from '../storage/models.js'
import type { ModelName, StoredRecord } from '../storage/types.js'
import { RecordsImportError } from './errors.js'

/** The header's `format`: what says a file is one of these. */
export const RECORDS_FORMAT = 'affiliate-service/records'

/** The version of the file's layout (header, record lines, trailer). */
export const RECORDS_VERSION = 1

/** The first line. */
export interface RecordsHeader {
  format: typeof RECORDS_FORMAT
  /** The layout's version: {@link RECORDS_VERSION}. */
  version: number
  /**
   * Which records the file holds: the first 16 hex digits of the SHA-256 of every model's name and
   * fields (name, column kind, nullable), in order. An import refuses a file whose records are
   * described otherwise than the running version's.
   */
  schemaVersion: string
  /** When the export began (ISO 8601). */
  exportedAt: string
}

/** One model's part of the trailer. */
export interface ModelDigest {
  /** Its record lines in the file. */
  count: number
  /**
   * SHA-256 (lowercase hex) of its record lines, each as UTF-8 followed by one `\n` (0x0A), in
   * file order: exactly the bytes those lines take in the file. An empty model's is the SHA-256
   * of nothing (`e3b0c442…`).
   */
  sha256: string
}

/** Each model's count and digest, in `modelNames` order. */
export type RecordsDigests = { [M in ModelName]: ModelDigest }

/** The last line. */
export interface RecordsTrailer {
  trailer: true
  models: RecordsDigests
}

const fieldsOf = new Map(modelNames.map((model) => [model, models[model].fields] as const))

/** The schema version of this build (see {@link RecordsHeader.schemaVersion}). */
export const RECORDS_SCHEMA_VERSION: string = bytesToHex(
  sha256(utf8ToBytes(JSON.stringify(modelNames.map((model) => [model, models[model].fields.map((f) => [f.name, f.kind, f.nullable])])))),
).slice(0, 16)

/**
 * A record's line: its fields in the model's order (so every storage writes the same bytes for
 * the same record), without the trailing newline. Throws when the record lacks a field.
 */
export function recordLine(model: ModelName, record: StoredRecord): string {
  const out: Record<string, unknown> = {}
  for (const { name } of fieldsOf.get(model)!) {
    const value = record[name]
    if (value === undefined)
      throw new Error(`The storage answered a ${model} record without ${name} (id ${record.id}): it cannot be exported`)
    out[name] = value
  }
  return `{"model":${JSON.stringify(model)},"record":${JSON.stringify(out)}}`
}

/** A digest under way: the lines of one model go in, their count and SHA-256 come out. */
export class LineDigest {
  private readonly hash = sha256.create()
  private readonly encoder = new TextEncoder()
  count = 0

  /** Adds lines (without their newlines); one update per call, so hand in a page at a time. */
  add(lines: readonly string[]): void {
    if (lines.length === 0) return
    this.hash.update(this.encoder.encode(`${lines.join('\n')}\n`))
    this.count += lines.length
  }

  digest(): ModelDigest {
    return { count: this.count, sha256: bytesToHex(this.hash.digest()) }
  }
}

const invalid = (line: number, message: string) => new RecordsImportError('invalid_records', `Line ${line}: ${message}`, { line })

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Reads the header line, refusing anything but a records file of this layout and these records. */
export function parseHeader(text: string): RecordsHeader {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    value = null
  }
  if (!isObject(value) || value.format !== RECORDS_FORMAT) {
    throw invalid(
      1,
      `not an affiliate-service records file (its first line must be the header {"format":"${RECORDS_FORMAT}",…} that \`affiliate-service export\` writes)`,
    )
  }
  if (value.version !== RECORDS_VERSION) {
    throw invalid(
      1,
      `the file's layout is version ${JSON.stringify(value.version)}; this affiliate-service reads version ${RECORDS_VERSION}: import it with the version that exported it`,
    )
  }
  if (value.schemaVersion !== RECORDS_SCHEMA_VERSION) {
    throw invalid(
      1,
      `the file's records are described by schema ${JSON.stringify(value.schemaVersion)}, this affiliate-service's by ${RECORDS_SCHEMA_VERSION}: ` +
        'import it with the affiliate-service version that exported it (upgrade after: the storage migrates itself), or export it again with this one',
    )
  }
  if (typeof value.exportedAt !== 'string') throw invalid(1, 'the header has no exportedAt')
  return { format: RECORDS_FORMAT, version: RECORDS_VERSION, schemaVersion: RECORDS_SCHEMA_VERSION, exportedAt: value.exportedAt }
}

/** Whether a value fits a field of this kind (a null only where the field may hold one). */
function fits(value: unknown, kind: string, nullable: boolean): boolean {
  if (value === null) return nullable
  switch (kind) {
    case 'text':
      return typeof value === 'string'
    case 'int':
      return Number.isSafeInteger(value)
    case 'bool':
      return typeof value === 'boolean'
    case 'list':
      return Array.isArray(value) && value.every((item) => typeof item === 'string')
    default:
      return false
  }
}

/** A record line or the trailer, checked against the models: every field present, of its kind, and no other. */
export function parseLine(text: string, line: number): { model: ModelName; record: StoredRecord } | RecordsTrailer {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalid(line, 'not JSON: the file is damaged or was cut')
  }
  if (!isObject(value)) throw invalid(line, 'not a record line ({"model":…,"record":{…}}) or the trailer')
  if (value.trailer === true) return parseTrailer(value, line)
  const { model, record } = value
  if (typeof model !== 'string' || !fieldsOf.has(model as ModelName)) throw invalid(line, `unknown model ${JSON.stringify(model)}`)
  if (!isObject(record)) throw invalid(line, `the ${model} line holds no record`)
  const fields = fieldsOf.get(model as ModelName)!
  for (const { name, kind, nullable } of fields) {
    if (!fits(record[name], kind, nullable)) {
      throw invalid(
        line,
        `the ${model} record ${JSON.stringify(record.id)} has ${name} = ${JSON.stringify(record[name]) ?? 'nothing'}, not a ${nullable ? `${kind} or null` : kind}`,
      )
    }
  }
  if (Object.keys(record).length !== fields.length) {
    const extra = Object.keys(record).filter((name) => !fields.some((field) => field.name === name))
    throw invalid(line, `the ${model} record ${JSON.stringify(record.id)} has fields this version does not know: ${extra.join(', ')}`)
  }
  return { model: model as ModelName, record: record as StoredRecord }
}

function parseTrailer(value: Record<string, unknown>, line: number): RecordsTrailer {
  const digests = value.models
  if (!isObject(digests)) throw invalid(line, 'the trailer has no models')
  const models: Partial<RecordsDigests> = {}
  for (const model of modelNames) {
    const digest = digests[model]
    if (
      !isObject(digest) ||
      !Number.isSafeInteger(digest.count) ||
      typeof digest.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(digest.sha256)
    ) {
      throw invalid(line, `the trailer has no count and sha256 for ${model}`)
    }
    models[model] = { count: digest.count as number, sha256: digest.sha256 }
  }
  return { trailer: true, models: models as RecordsDigests }
}
