import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { sqlJsStorage } from '../../src/index.js'
import { modelNames } from '../../src/storage/models.js'
import { startProgram, type Started } from '../support/run-command.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

// `affiliate-service export | import | migrate` as a user runs them: real processes, output to a
// file or a pipe, a server serving the file meanwhile.

const root = mkdtempSync(join(tmpdir(), 'affiliate-records-cli-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const bin = (name: string) => join(import.meta.dirname, '..', '..', 'bin', name)
// What the shell running the tests may have set is not what a test means: each says what it sets.
const unset = { DATABASE_URL: '', AFFILIATE_SCHEMA: '', AFFILIATE_DB: '', REDIS_URL: '', HOST: '', AFFILIATE_ADMIN_TOKEN: '' }
const WORKSPACE = '11111111-1111-4111-8111-111111111111'
const KEY = 'aff_live_recordsclitestkey000000000000001'

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs the command with standard input from `input` and standard output to `output` (files, as
 * `< backup.ndjson` and `> backup.ndjson` do), or pipes where not given.
 */
async function cli(args: string[], options: { input?: string; output?: string; env?: Record<string, string> } = {}): Promise<Run> {
  const stdin = options.input ? openSync(options.input, 'r') : 'pipe'
  const stdout = options.output ? openSync(options.output, 'w') : 'pipe'
  const child = spawn(process.execPath, ['--import', 'tsx', bin('cli.ts'), ...args], {
    env: { ...process.env, ...unset, NO_COLOR: '1', ...options.env },
    stdio: [stdin, stdout, 'pipe'],
  })
  if (stdin === 'pipe') child.stdin!.end()
  let out = ''
  let err = ''
  child.stdout?.on('data', (data: Buffer) => (out += data.toString()))
  child.stderr!.on('data', (data: Buffer) => (err += data.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  for (const fd of [stdin, stdout]) if (typeof fd === 'number') closeSync(fd)
  return { code, stdout: out, stderr: err }
}

/** `npm start` on a database file (bin/start.ts, as the script runs it), with a key of ours. */
const serve = (db: string): Promise<Started> =>
  startProgram(
    process.execPath,
    ['--import', 'tsx', bin('start.ts')],
    {
      ...process.env,
      ...unset,
      PORT: '0',
      AFFILIATE_DB: db,
      AFFILIATE_API_KEY: KEY,
      AFFILIATE_WORKSPACE_ID: WORKSPACE,
      AFFILIATE_ADMIN_TOKEN: 'a'.repeat(32),
    },
    /(http:\/\/127\.0\.0\.1:\d+\/api\/v1)/,
  )

const createCampaign = async (url: string, name: string) => {
  const response = await fetch(`${url}/campaigns`, {
    method: 'POST',
    headers: { 'x-auth-service': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      campaignName: name,
      workspaceId: WORKSPACE,
      commissionType: 'percentage',
      amount: 10,
      url: 'https://shop.example.com/',
    }),
  })
  expect(response.status).toBe(201)
  return ((await response.json()) as { data: { id: string } }).data.id
}

const recordLines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n').slice(1, -1)
const trailerOf = (file: string) =>
  JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!).models as Record<string, { count: number; sha256: string }>
/** The one line per model a piped run prints, for every model. */
const perModel = (_text: string, verb: string) => modelNames.map((model) => new RegExp(`^${verb} ${model}: [\\d,]+ records?$`, 'm'))

const served = join(root, 'served', 'affiliate.sqlite')
const backup = join(root, 'backup.ndjson')

describe('affiliate-service export, import and migrate', () => {
  let server: Started
  let campaignId: string
  beforeAll(async () => {
    server = await serve(served)
    campaignId = await createCampaign(server.url, 'Before the backup')
  })
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0)
  })

  it('export > file while npm start serves the database: every record, one plain line per model, the server untouched', async () => {
    const run = await cli(['export', '--db', served], { output: backup })
    expect(run.code, run.stderr).toBe(0)
    for (const line of perModel(run.stderr, 'exported')) expect(run.stderr).toMatch(line)
    expect(run.stderr).toMatch(new RegExp(`^Exported [\\d,]+ records of ${modelNames.length} models from .*affiliate\\.sqlite\\.$`, 'm'))
    const lines = recordLines(backup)
    expect(lines.some((line) => line.includes(`"id":"${campaignId}"`))).toBe(true)
    expect(trailerOf(backup).campaigns!.count).toBe(1)
    // The server kept its lock and goes on writing.
    await createCampaign(server.url, 'After the backup')
  })

  it('import < file into a new database, checked; a second import into it is refused and changes nothing', async () => {
    const target = join(root, 'restored.sqlite')
    const run = await cli(['import', '--db', target], { input: backup })
    expect(run.code, run.stderr).toBe(0)
    for (const line of perModel(run.stdout, 'verified')) expect(run.stdout).toMatch(line)
    expect(run.stdout).toMatch(
      /^Imported [\d,]+ records into .*restored\.sqlite: every model's count and SHA-256 match the file's trailer\.$/m,
    )

    const again = await cli(['import', '--db', target], { input: backup })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(
      /^affiliate-service: import into .*restored\.sqlite failed: The storage already holds records: campaigns \(1\), .*\. Import only into an empty one \(a new database file or PostgreSQL schema\); nothing was written\.$/m,
    )
    const copy = join(root, 'restored-export.ndjson')
    expect((await cli(['export', '--db', target], { output: copy })).code).toBe(0)
    expect(recordLines(copy)).toEqual(recordLines(backup))
  })

  it('import of a file cut short: exit 1, the database left empty, and the message says so', async () => {
    const cut = join(root, 'cut.ndjson')
    writeFileSync(cut, `${readFileSync(backup, 'utf8').trimEnd().split('\n').slice(0, -1).join('\n')}\n`)
    const target = join(root, 'cut.sqlite')
    const run = await cli(['import', '--db', target], { input: cut })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /without its trailer: it was cut short\. Export it again\. The storage was emptied again: nothing of this import is kept\.\n$/,
    )
    const copy = join(root, 'cut-export.ndjson')
    expect((await cli(['export', '--db', target], { output: copy })).code).toBe(0)
    expect(Object.values(trailerOf(copy)).every((digest) => digest.count === 0)).toBe(true)
  })

  it('migrate refuses a source file that a server still serves, naming its process', async () => {
    const run = await cli(['migrate', '--from', served, '--to', join(root, 'never.sqlite')])
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      `affiliate-service: ${served} is being served by process ${server.child.pid}: stop it first, or its writes after the copy are lost (a backup while it runs: affiliate-service export)\n`,
    )
    expect(existsSync(join(root, 'never.sqlite'))).toBe(false)
  })

  it('usage mistakes are plain', async () => {
    expect((await cli(['migrate', '--from', served])).stderr).toMatch(/^affiliate-service: migrate needs --from and --to\n/)
    expect((await cli(['export', '--from', served])).stderr).toMatch(/^affiliate-service: --from is not an option of export\n/)
  })

  // util-linux `script` runs the command on a pseudo-terminal, as a person at a terminal would.
  describe.skipIf(!existsSync('/usr/bin/script'))('on a terminal', () => {
    const onTerminal = async (command: string) => {
      const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], {
        env: { ...process.env, ...unset },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (data: Buffer) => (output += data.toString()))
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      return { code, output }
    }
    const command = (args: string) => `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(bin('cli.ts'))} ${args}`

    it('migrate draws a progress bar (cli-progress) for each model it writes and verifies', async () => {
      const target = join(root, 'terminal.sqlite')
      const run = await onTerminal(
        command(`migrate --from ${JSON.stringify(join(root, 'restored.sqlite'))} --to ${JSON.stringify(target)}`),
      )
      expect(run.code, run.output).toBe(0)
      expect(run.output).toMatch(/writing campaigns \|[█░]{40}\| 100% 1\/1 records/)
      expect(run.output).toMatch(/verifying events \|[█░]{40}\| \d+% \d+\/\d+ records/)
      expect(run.output).toMatch(/Moved [\d,]+ records: every model's count and SHA-256 in .*terminal\.sqlite match .*restored\.sqlite's\./)
    })

    it('export refuses to write the records to the terminal', async () => {
      const run = await onTerminal(command(`export --db ${JSON.stringify(served)}`))
      expect(run.code).toBe(1)
      expect(run.output).toContain(
        'affiliate-service: export writes the records to standard output: send it to a file, e.g. affiliate-service export > backup.ndjson',
      )
    })
  })
})

describe.skipIf(!postgresUrl)(needs('migrate to PostgreSQL', POSTGRES_VAR), () => {
  let pool: pg.Pool
  const schema = uniqueName('migrate')
  beforeAll(async () => {
    pool = await testPool()
  })
  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
  })

  it('migrate --from the file --to PostgreSQL, piped: one line per model, then the same records export from PostgreSQL', async () => {
    const source = join(root, 'to-move.sqlite')
    expect((await cli(['import', '--db', source], { input: backup })).code).toBe(0)
    const run = await cli(['migrate', '--from', source, '--to', postgresUrl!, '--to-schema', schema])
    expect(run.code, run.stderr).toBe(0)
    for (const line of perModel(run.stdout, 'verified')) expect(run.stdout).toMatch(line)
    expect(run.stdout).toMatch(
      new RegExp(
        `^Moved [\\d,]+ records: every model's count and SHA-256 in PostgreSQL .*, schema ${schema} match .*to-move\\.sqlite's\\.$`,
        'm',
      ),
    )
    const moved = join(root, 'moved.ndjson')
    expect((await cli(['export', '--db', postgresUrl!, '--schema', schema], { output: moved })).code).toBe(0)
    expect(recordLines(moved)).toEqual(recordLines(backup))
    // A second migrate into the same schema is refused: it holds records now.
    const again = await cli(['migrate', '--from', source, '--to', postgresUrl!, '--to-schema', schema])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/The storage already holds records: campaigns \(1\)/)
  })
})

describe('a read-only snapshot (what export reads) beside a process writing the file', () => {
  it('is consistent while another process writes and folds its journal into the file', async () => {
    const file = join(root, 'busy.sqlite')
    const linkId = '00000000-0000-4000-8000-00000000beef'
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '..', 'fixtures', 'snapshot-writer.ts'), file, linkId],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => data.toString().includes('ready') && resolve())
        child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before writing`)))
      })
      const seen: number[] = []
      while (seen.length < 40) {
        const snapshot = sqlJsStorage({ persist: fileJournal(file, { readOnly: true }) })
        const [clicks, counter] = await snapshot.transaction(async (tx) => [
          await tx.count('clicks', { where: { linkId } }),
          await tx.get('sequences', 'written'),
        ])
        await snapshot.close()
        expect(clicks).toBe(counter!.value)
        seen.push(clicks)
      }
      // Snapshots move forward with the writes, never back.
      expect(seen).toEqual([...seen].sort((a, b) => a - b))
      expect(seen.at(-1)).toBeGreaterThan(seen[0]!)
    } finally {
      child.kill('SIGKILL')
    }
  })
})
