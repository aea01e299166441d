// `affiliate-service export | import | migrate`: every record moved between databases, as NDJSON
// (SPEC wave 4, "Moving, backing up and restoring data"; docs/operations.md, "Moving to PostgreSQL").
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { exportRecords, importRecords, RecordsImportError, sqlJsStorage, type ModelDigest, type Storage } from '../src/index.js'
import type { ModelName } from '../src/storage/types.js'
import { redactUrl } from '../src/redact.js'
import { fileJournal, lockHolder } from '../adapters/node/file-journal.js'
import { DEFAULT_DB, fail, optional, reason, SCHEMA } from './env.js'
import { progressOn } from './progress.js'

export const RECORDS_USAGE = `Usage:
  affiliate-service export [--db <file | postgres url>] [--schema <name>] > backup.ndjson
  affiliate-service import [--db <file | postgres url>] [--schema <name>] < backup.ndjson
  affiliate-service migrate --from <file | postgres url> --to <file | postgres url>
                            [--from-schema <name>] [--to-schema <name>]

  export   Writes every record (keys as their hashes, secrets, clicks, events...) to standard
           output: a header line, one JSON line per record, a trailer with each model's count and
           SHA-256. A database file is read as a still copy, without its lock: export while the
           server runs.
  import   Writes such a file into an empty database (refused when it holds any record), then
           reads every model back and checks its count and SHA-256 against the trailer. A failed
           import empties the database again, or says exactly what to drop.
  migrate  export and import in one step, e.g. from the embedded file to PostgreSQL; the source
           must not be written meanwhile (stop the server first).

  --db, --from, --to  a sql.js database file, or a postgres:// URL. Without --db: DATABASE_URL
                      (PostgreSQL), else AFFILIATE_DB, else ${DEFAULT_DB}.
  --schema            the PostgreSQL schema (default: AFFILIATE_SCHEMA, else affiliate_service).

A progress bar is drawn on a terminal; piped, one line per model. See docs/operations.md.`

/** A database named on the command line: a sql.js file or a PostgreSQL schema. */
interface Place {
  kind: 'sqljs' | 'postgres'
  /** Fit to print: never a password. */
  where: string
  path: string
  url: string
  schema: string | undefined
}

const isPostgres = (value: string) => /^postgres(ql)?:\/\//i.test(value)

function placeOf(value: string | undefined, schema: string | undefined, env: NodeJS.ProcessEnv): Place {
  const named = value ?? env.DATABASE_URL ?? (env.AFFILIATE_DB || DEFAULT_DB)
  const chosen = schema ?? (env.AFFILIATE_SCHEMA || undefined)
  if (chosen !== undefined && !SCHEMA.test(chosen))
    fail(`the schema must be a PostgreSQL name (letters, digits, _; at most 63), got ${chosen}`)
  if (isPostgres(named))
    return {
      kind: 'postgres',
      where: `PostgreSQL ${redactUrl(named)}, schema ${chosen ?? 'affiliate_service'}`,
      path: '',
      url: named,
      schema: chosen,
    }
  if (named === ':memory:') fail('":memory:" holds nothing to move: name a database file or a postgres:// URL')
  return { kind: 'sqljs', where: named, path: named, url: '', schema: undefined }
}

type Opened = Storage & { ready(): Promise<unknown>; close(): Promise<void> }

/**
 * Opens a place to read (a file as a still copy, without its lock; a schema as it is, never
 * migrated) or to write (a file under its lock, refused while a server holds it; a schema made
 * and migrated when missing).
 */
async function open(place: Place, mode: 'read' | 'write'): Promise<Opened> {
  let storage: Opened
  if (place.kind === 'postgres') {
    const { postgresStorage } = await optional(() => import('../adapters/postgres.js'), 'a postgres:// URL', 'pg')
    storage = postgresStorage({ connectionString: place.url, ...(place.schema ? { schema: place.schema } : {}), migrate: mode === 'write' })
  } else {
    storage = sqlJsStorage({ persist: fileJournal(place.path, mode === 'read' ? { readOnly: true } : { lockWaitMs: 0 }) })
  }
  try {
    await storage.ready()
  } catch (error) {
    await storage.close().catch(() => undefined)
    fail(`cannot open ${mode === 'read' ? 'the source' : 'the target'} ${place.where}: ${reason(error)}`)
  }
  return storage
}

/** What to do about the records a failed import could not remove, for this kind of database. */
function dropAdvice(place: Place, remaining: Partial<Record<ModelName, number>>, created: boolean): string {
  const models = Object.keys(remaining)
  if (models.length === 0) return ''
  if (place.kind === 'postgres') {
    const schema = place.schema ?? 'affiliate_service'
    return `\nTo drop them: psql "${redactUrl(place.url)}" -c 'TRUNCATE ${models.map((model) => `"${schema}"."${model}"`).join(', ')}'`
  }
  return created
    ? `\nThis import made ${place.path}: delete it and its journal (${place.path}.journal-*), then import again.`
    : `\n${place.path} held no record before this import: delete it and its journal (${place.path}.journal-*), then import again.`
}

function failImport(error: unknown, place: Place, created: boolean): never {
  if (error instanceof RecordsImportError)
    fail(`import into ${place.where} failed: ${error.message}${dropAdvice(place, error.remaining, created)}`)
  throw error
}

const total = (models: Record<string, ModelDigest>) => Object.values(models).reduce((sum, digest) => sum + digest.count, 0)

async function exportCommand(values: { db?: string; schema?: string }, env: NodeJS.ProcessEnv): Promise<void> {
  const out = process.stdout
  if (out.isTTY) fail('export writes the records to standard output: send it to a file, e.g. affiliate-service export > backup.ndjson')
  const place = placeOf(values.db, values.schema, env)
  const storage = await open(place, 'read')
  const progress = progressOn(process.stderr, ['export'])
  let pending = ''
  try {
    const lines = exportRecords(storage, { onProgress: progress })
    let step = await lines.next()
    while (!step.done) {
      pending += `${step.value}\n`
      // Written in blocks, waiting whenever the reader (a file, a pipe) has not taken the last one.
      if (pending.length >= 65_536) {
        if (!out.write(pending)) await once(out, 'drain')
        pending = ''
      }
      step = await lines.next()
    }
    await new Promise<void>((resolve, reject) => out.write(pending, (error) => (error ? reject(error) : resolve())))
    progress.stop()
    process.stderr.write(
      `Exported ${total(step.value.models).toLocaleString('en')} records of ${Object.keys(step.value.models).length} models from ${place.where}.\n`,
    )
  } finally {
    progress.stop()
    await storage.close()
  }
}

async function importCommand(values: { db?: string; schema?: string }, env: NodeJS.ProcessEnv): Promise<void> {
  if (process.stdin.isTTY)
    fail('import reads a records file on standard input, e.g. affiliate-service import --db ./data/affiliate.sqlite < backup.ndjson')
  const place = placeOf(values.db, values.schema, env)
  const created = place.kind === 'sqljs' && !existsSync(place.path)
  const storage = await open(place, 'write')
  const progress = progressOn(process.stdout, ['verify'])
  try {
    const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    const result = await importRecords(storage, lines, { onProgress: progress })
    progress.stop()
    console.log(
      `Imported ${total(result.models).toLocaleString('en')} records into ${place.where}: every model's count and SHA-256 match the file's trailer.`,
    )
  } catch (error) {
    progress.stop()
    await storage.close().catch(() => undefined)
    failImport(error, place, created)
  }
  await storage.close()
}

async function migrateCommand(
  values: { from?: string; to?: string; 'from-schema'?: string; 'to-schema'?: string },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  if (!values.from || !values.to) fail(`migrate needs --from and --to\n\n${RECORDS_USAGE}`)
  const from = placeOf(values.from, values['from-schema'], env)
  const to = placeOf(values.to, values['to-schema'], env)
  if (from.kind === to.kind && (from.kind === 'sqljs' ? from.path === to.path : from.url === to.url && from.schema === to.schema)) {
    fail('--from and --to name the same database')
  }
  if (from.kind === 'sqljs') {
    const pid = await lockHolder(from.path)
    // A copy while the server writes would miss its later writes: the move needs the server stopped.
    if (pid !== null)
      fail(
        `${from.path} is being served by process ${pid}: stop it first, or its writes after the copy are lost (a backup while it runs: affiliate-service export)`,
      )
  }
  const created = to.kind === 'sqljs' && !existsSync(to.path)
  const source = await open(from, 'read')
  const target = await open(to, 'write')
  const counts = new Map<string, number>()
  const progress = progressOn(process.stdout, ['verify'], counts)
  console.log(`Moving every record from ${from.where} to ${to.where}.`)
  try {
    // The same path as export piped into import: lines out of one storage, into the other.
    const lines = exportRecords(source, { onProgress: ({ model, total }) => total !== undefined && counts.set(model, total) })
    const result = await importRecords(target, lines, { onProgress: progress })
    progress.stop()
    console.log(
      `Moved ${total(result.models).toLocaleString('en')} records: every model's count and SHA-256 in ${to.where} match ${from.where}'s.`,
    )
  } catch (error) {
    progress.stop()
    await Promise.allSettled([source.close(), target.close()])
    failImport(error, to, created)
  }
  await Promise.all([source.close(), target.close()])
}

export async function recordsCommand(
  command: 'export' | 'import' | 'migrate',
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      db: { type: 'string' },
      schema: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'from-schema': { type: 'string' },
      'to-schema': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(RECORDS_USAGE)
    return
  }
  const misplaced = command === 'migrate' ? (['db', 'schema'] as const) : (['from', 'to', 'from-schema', 'to-schema'] as const)
  for (const name of misplaced) if (values[name] !== undefined) fail(`--${name} is not an option of ${command}\n\n${RECORDS_USAGE}`)
  if (command === 'export') return exportCommand(values, env)
  if (command === 'import') return importCommand(values, env)
  return migrateCommand(values, env)
}
