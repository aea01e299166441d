import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import type pg from 'pg'
import type { RedisClientType } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { reachableUrl } from '../../bin/env.js'
import { createAffiliateService, memoryKeyStore, sqlJsStorage } from '../../src/index.js'
import {
  deleteKeys,
  dropSchema,
  needs,
  POSTGRES_VAR,
  postgresUrl,
  REDIS_VAR,
  redisUrl,
  testPool,
  testRedis,
  uniqueName,
} from '../support/services.js'

// `npm start` and the `affiliate-service` command, run as a user runs them: real processes.
const root = mkdtempSync(join(tmpdir(), 'affiliate-start-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let dbs = 0
const freshDb = () => join(root, `db-${++dbs}`, 'affiliate.sqlite')
const bin = (name: string) => join(import.meta.dirname, '..', '..', 'bin', name)
// What the shell running the tests may have set is not what a test means: each says what it sets.
const unset = { DATABASE_URL: '', AFFILIATE_SCHEMA: '', AFFILIATE_DB: '', REDIS_URL: '', HOST: '', AFFILIATE_ADMIN_TOKEN: '' }

interface Server {
  child: ChildProcessByStdio<null, Readable, Readable>
  url: string
  output: () => string
  exit: Promise<number | null>
}

/** Runs bin/start.ts (what `npm start` runs) and resolves once it prints its URL. */
async function start(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', bin('start.ts')], {
    env: { ...process.env, ...unset, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (data: Buffer) => (output += data.toString()))
  child.stderr.on('data', (data: Buffer) => (output += data.toString()))
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const found = /http:\/\/(?:127\.0\.0\.1|\[::1\]):\d+\/api\/v1/.exec(output)
      if (found) resolve(found[0])
    }
    child.stdout.on('data', check)
    void exit.then((code) => reject(new Error(`start exited ${code} before listening:\n${output}`)))
  })
  return { child, url, output: () => output, exit }
}

/** Runs the `affiliate-service` command; answers its exit code and output. */
async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', bin('cli.ts'), ...args], {
    env: { ...process.env, ...unset, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()))
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  return { code, stdout, stderr }
}

const printedKey = (output: string) => /aff_live_[A-Za-z0-9]{32}/.exec(output)?.[0]
const printedWorkspace = (output: string) => /for workspace ([0-9a-f-]{36})/.exec(output)?.[1]

const post = (url: string, key: string, body: unknown) =>
  fetch(`${url}/campaigns`, {
    method: 'POST',
    headers: { 'x-auth-service': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

const campaign = (workspaceId: string, name = 'Started') => ({
  campaignName: name,
  workspaceId,
  commissionType: 'percentage',
  amount: 10,
  url: 'https://shop.example.com/',
})

/** Sends the headers and half the body now; `finish()` sends the rest and answers status and body. */
/**
 * A POST whose body is held back until `finish()`. It asks `Expect: 100-continue`, and the Node
 * adapter answers `100 Continue` only once the service starts reading the body: `reading` settles
 * then, when the request is in the service's hands (its key checked, its body awaited).
 */
function slowPost(url: string, key: string, body: unknown) {
  const text = JSON.stringify(body)
  const { hostname, port, pathname } = new URL(`${url}/campaigns`)
  const req = request({
    hostname,
    port,
    path: pathname,
    method: 'POST',
    headers: {
      'x-auth-service': key,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      expect: '100-continue',
    },
  })
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let data = ''
      res.on('data', (chunk: Buffer) => (data += chunk.toString()))
      res.once('end', () => resolve({ status: res.statusCode!, body: data }))
    })
    req.once('error', reject)
  })
  const reading = new Promise<void>((resolve, reject) => {
    req.once('continue', () => {
      req.write(text.slice(0, 20))
      resolve()
    })
    req.once('error', reject)
  })
  req.flushHeaders()
  return {
    reading,
    finish: () => {
      req.end(text.slice(20))
      return response
    },
  }
}

describe('npm start', () => {
  it('makes and prints one key on first start, and none on the next; data and key survive a restart', async () => {
    const db = freshDb()
    const first = await start({ AFFILIATE_DB: db })
    const key = printedKey(first.output())!
    const workspace = printedWorkspace(first.output())!
    expect(key).toBeDefined()
    expect(first.output().match(/aff_live_/g)).toHaveLength(1)
    const created = await post(first.url, key, campaign(workspace))
    expect(created.status).toBe(201)
    const { data } = (await created.json()) as { data: { id: string } }
    first.child.kill('SIGTERM')
    expect(await first.exit).toBe(0)

    const second = await start({ AFFILIATE_DB: db })
    expect(second.output()).not.toMatch(/aff_live_/)
    const read = await fetch(`${second.url}/campaigns?campaignId=${data.id}`, { headers: { 'x-auth-service': key } })
    expect(read.status).toBe(200)
    second.child.kill('SIGINT')
    expect(await second.exit).toBe(0)
  })

  it('starts right after its predecessor was killed with kill -9 and not yet reaped (a zombie still "running" under its pid)', {
    timeout: 60_000,
  }, async () => {
    const db = freshDb()
    // The first server's parent is a shell that then becomes `sleep`, which never reaps it: after
    // kill -9 it stays a zombie, whose pid still answers signals, as under a supervisor that has
    // not yet waited for it.
    const parent = spawn('sh', ['-c', `"$0" --import tsx "$1" & echo "server pid $!"; exec sleep 600`, process.execPath, bin('start.ts')], {
      env: { ...process.env, ...unset, PORT: '0', AFFILIATE_DB: db },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      let output = ''
      const url = await new Promise<string>((resolve, reject) => {
        const check = (data: Buffer) => {
          output += data.toString()
          const found = /http:\/\/127\.0\.0\.1:\d+\/api\/v1/.exec(output)
          if (found && /server pid \d+/.test(output)) resolve(found[0])
        }
        parent.stdout.on('data', check)
        parent.stderr.on('data', check)
        parent.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)))
      })
      const pid = Number(/server pid (\d+)/.exec(output)![1])
      const key = printedKey(output)!
      const created = await post(url, key, campaign(printedWorkspace(output)!))
      expect(created.status).toBe(201)
      const { data } = (await created.json()) as { data: { id: string } }

      process.kill(pid, 'SIGKILL')
      // Wait for the kernel to have made it a zombie: its lock file still names a pid that exists.
      const state = () => {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      }
      while (state() !== 'Z') await new Promise((resolve) => setTimeout(resolve, 20))
      expect(readFileSync(`${db}.lock`, 'utf8').trim()).toBe(String(pid))

      const next = await start({ AFFILIATE_DB: db })
      const read = await fetch(`${next.url}/campaigns?campaignId=${data.id}`, { headers: { 'x-auth-service': key } })
      expect(read.status).toBe(200)
      next.child.kill('SIGTERM')
      expect(await next.exit).toBe(0)
    } finally {
      parent.kill('SIGKILL')
    }
  })

  it('on SIGTERM stops accepting, finishes the request in flight, flushes, and exits 0', { timeout: 60_000 }, async () => {
    const db = freshDb()
    const server = await start({ AFFILIATE_DB: db })
    const key = printedKey(server.output())!
    const workspace = printedWorkspace(server.output())!
    // The request is in the service's hands (reading its body) before the signal.
    const inFlight = slowPost(server.url, key, campaign(workspace, 'In flight'))
    await inFlight.reading
    server.child.kill('SIGTERM')
    await new Promise<void>((resolve) => {
      const check = () => server.output().includes('finishing requests in flight') && resolve()
      check()
      server.child.stdout.on('data', check)
    })
    await expect(fetch(`${server.url}/health`)).rejects.toThrow()
    const answered = await inFlight.finish()
    expect(answered.status, answered.body).toBe(201)
    expect(await server.exit).toBe(0)
    expect(server.output()).toContain('database flushed')

    const { id } = (JSON.parse(answered.body) as { data: { id: string } }).data
    const again = await start({ AFFILIATE_DB: db })
    const read = await fetch(`${again.url}/campaigns?campaignId=${id}`, { headers: { 'x-auth-service': key } })
    expect(((await read.json()) as { data: { campaignName: string } }).data.campaignName).toBe('In flight')
    again.child.kill('SIGTERM')
    expect(await again.exit).toBe(0)
  })

  it('honours AFFILIATE_API_KEY for AFFILIATE_WORKSPACE_ID and makes no key of its own', async () => {
    const workspace = '77777777-7777-4777-8777-777777777777'
    const server = await start({
      AFFILIATE_DB: ':memory:',
      AFFILIATE_API_KEY: 'env-key-of-the-operator',
      AFFILIATE_WORKSPACE_ID: workspace,
    })
    expect(server.output()).not.toMatch(/aff_live_/)
    expect((await post(server.url, 'env-key-of-the-operator', campaign(workspace))).status).toBe(201)
    expect((await post(server.url, 'env-key-of-the-operator', campaign('88888888-8888-4888-8888-888888888888'))).status).toBe(403)
    expect((await post(server.url, 'some-other-key', campaign(workspace))).status).toBe(401)
    server.child.kill('SIGTERM')
    expect(await server.exit).toBe(0)
  })

  it('refuses AFFILIATE_API_KEY without AFFILIATE_WORKSPACE_ID', async () => {
    await expect(start({ AFFILIATE_DB: ':memory:', AFFILIATE_API_KEY: 'lonely' })).rejects.toThrow(/needs AFFILIATE_WORKSPACE_ID/)
  })
})

describe('affiliate-service keys', () => {
  it('creates, lists (never the key) and revokes keys; a revoked key is refused', { timeout: 60_000 }, async () => {
    const db = freshDb()
    const env = { AFFILIATE_DB: db }
    const workspace = '99999999-9999-4999-8999-999999999999'
    const created = await cli(['keys', 'create', '--workspace', workspace, '--label', 'checkout'], env)
    expect(created.code).toBe(0)
    const key = printedKey(created.stdout)!
    const id = /key id\s+(\S+)/.exec(created.stdout)![1]!

    const listed = await cli(['keys', 'list'], env)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(id)
    expect(listed.stdout).toContain(`${key.slice(0, 8)}…`)
    expect(listed.stdout).toContain(workspace)
    expect(listed.stdout).toContain('checkout')
    expect(listed.stdout).not.toContain(key.slice(13))

    // The server holds the file: key commands are refused with the reason, and the key works.
    const server = await start(env)
    expect(server.output()).not.toMatch(/aff_live_[A-Za-z0-9]{32}/)
    expect((await post(server.url, key, campaign(workspace))).status).toBe(201)
    const locked = await cli(['keys', 'list'], env)
    expect(locked.code).toBe(1)
    expect(locked.stderr).toMatch(new RegExp(`in use by process ${server.child.pid}`))
    server.child.kill('SIGTERM')
    expect(await server.exit).toBe(0)

    expect((await cli(['keys', 'revoke', id], env)).code).toBe(0)
    const twice = await cli(['keys', 'revoke', id], env)
    expect(twice.code).toBe(1)
    expect(twice.stderr).toContain('no active key')
    expect((await cli(['keys', 'list'], env)).stdout).toMatch(/revoked/)
    const restarted = await start(env)
    expect((await post(restarted.url, key, campaign(workspace))).status).toBe(401)
    restarted.child.kill('SIGTERM')
    expect(await restarted.exit).toBe(0)
  })

  it('explains its usage and refuses unknown commands', async () => {
    const help = await cli(['keys', '--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('create')
    const unknown = await cli(['keys', 'destroy'], {})
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('unknown keys command')
  })
})

describe('affiliate-service payouts run', () => {
  it('prints a dry run and writes nothing, then makes the payouts; a second run finds nothing due', { timeout: 60_000 }, async () => {
    const db = freshDb()
    const workspace = '88888888-8888-4888-8888-888888888888'
    // A file with one campaign, an affiliate ready to be paid, one without payout details, and their due commissions.
    const storage = sqlJsStorage({ persist: fileJournal(db) })
    const service = createAffiliateService({ storage, keyStore: memoryKeyStore([]) })
    const c = await service.api.campaigns.create({
      campaignName: 'Pay',
      workspaceId: workspace,
      commissionType: 'fixed',
      amount: 10,
      url: 'https://shop.example.com/',
      currency: 'EUR',
    })
    const ready = await service.api.affiliates.create({
      email: 'ready@example.com',
      campaignId: c.id,
      payoutMethod: 'PAYPAL',
      payoutEmail: 'pay@example.com',
    })
    const missing = await service.api.affiliates.create({ email: 'missing@example.com', campaignId: c.id })
    for (const affiliate of [ready, ready, missing]) {
      await service.api.commissions.create({
        campaignId: c.id,
        affiliateId: affiliate.id,
        referredUser: 'b@example.com',
        amount: '12.50',
        commissionDate: '2025-01-01T00:00:00Z',
      })
    }
    await storage.close()
    const env = { AFFILIATE_DB: db }

    const dry = await cli(['payouts', 'run', '--dry-run'], env)
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`workspace ${workspace}: 1 payout would be made (dry run)`)
    expect(dry.stdout).toMatch(/25\.00 EUR {2}PAYPAL pay@example\.com {2}\(2 commissions\)/)
    expect(dry.stdout).toContain(`skipped ${missing.id}  12.50  no_payout_details`)

    const run = await cli(['payouts', 'run', '--workspace', workspace, '--json'], env)
    expect(run.code, run.stderr).toBe(0)
    const answer = JSON.parse(run.stdout) as { workspaceId: string; payouts: { payoutId: string; amount: string }[]; skipped: unknown[] }
    expect(answer).toMatchObject({
      workspaceId: workspace,
      payouts: [{ amount: '25.00' }],
      skipped: [{ affiliateId: missing.id, reason: 'no_payout_details', amount: '12.50' }],
    })
    const again = await cli(['payouts', 'run', '--workspace', workspace, '--json'], env)
    expect(JSON.parse(again.stdout)).toMatchObject({ payouts: [], skipped: [{ reason: 'no_payout_details' }] })

    const reopened = sqlJsStorage({ persist: fileJournal(db) })
    const stored = await reopened.transaction((tx) => tx.find('payouts', {}))
    expect(stored.map((p) => [p.id, p.amountMinor, p.status, p.currency])).toEqual([[answer.payouts[0]!.payoutId, 2500, 'pending', 'EUR']])
    await reopened.close()
  })

  it('explains its usage and refuses what it cannot run, with the reason', async () => {
    const help = await cli(['payouts', '--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--dry-run')
    expect((await cli(['payouts', 'pay'], {})).stderr).toContain('unknown payouts command')
    expect((await cli(['payouts', 'run', '--workspace', 'nope'], {})).stderr).toContain('nope is not a UUID')
    const future = await cli(['payouts', 'run', '--workspace', '88888888-8888-4888-8888-888888888888', '--as-of', '2999-01-01T00:00:00Z'], {
      AFFILIATE_DB: freshDb(),
    })
    expect(future.code).toBe(1)
    expect(future.stderr).toContain('asOf cannot be in the future')
  })
})

/** The test PostgreSQL's URL with a password added: trust auth never asks for it, so only a log line could show it. */
const withPassword = (url: string) => {
  const parsed = new URL(url)
  parsed.username ||= 'postgres'
  parsed.password = 'hunter2'
  return parsed.href
}

describe('npm start: what the environment chooses', () => {
  it('HOST binds another interface, and the ready line names it', async () => {
    const server = await start({ AFFILIATE_DB: ':memory:', HOST: '::1' })
    expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+\/api\/v1$/)
    expect((await fetch(`${server.url}/health`)).status).toBe(200)
    // Not on 127.0.0.1: it listens where HOST says, only.
    await expect(fetch(`${server.url.replace('[::1]', '127.0.0.1')}/health`)).rejects.toThrow()
    server.child.kill('SIGTERM')
    expect(await server.exit).toBe(0)
  })

  it('prints a loopback URL for a server bound to every interface', () => {
    expect(reachableUrl('http://0.0.0.0:3000/api/v1')).toBe('http://127.0.0.1:3000/api/v1')
    expect(reachableUrl('http://[::]:3000/api/v1')).toBe('http://[::1]:3000/api/v1')
    expect(reachableUrl('http://10.1.2.3:3000/api/v1')).toBe('http://10.1.2.3:3000/api/v1')
  })

  it('stops at once, saying which service does not answer and never its password', async () => {
    const database = start({
      DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:1/app',
      AFFILIATE_DB: '',
      AFFILIATE_SCHEMA: '',
      REDIS_URL: '',
    })
    await expect(database).rejects.toThrow(/cannot open the database PostgreSQL postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app/)
    await expect(database).rejects.not.toThrow(/hunter2/)
    const redis = start({ AFFILIATE_DB: ':memory:', DATABASE_URL: '', AFFILIATE_SCHEMA: '', REDIS_URL: 'redis://:hunter2@127.0.0.1:1' })
    await expect(redis).rejects.toThrow(/cannot reach Redis redis:\/\/:\*\*\*@127\.0\.0\.1:1/)
    await expect(redis).rejects.not.toThrow(/hunter2/)
  })

  it('refuses settings that contradict each other', async () => {
    await expect(start({ AFFILIATE_DB: ':memory:', AFFILIATE_SCHEMA: 'mine' })).rejects.toThrow(/AFFILIATE_SCHEMA .* needs DATABASE_URL/)
    await expect(start({ AFFILIATE_DB: ':memory:', DATABASE_URL: 'postgres://127.0.0.1:1/x' })).rejects.toThrow(
      /DATABASE_URL .* or AFFILIATE_DB .*not both/,
    )
    await expect(start({ DATABASE_URL: 'postgres://127.0.0.1:1/x', AFFILIATE_DB: '', AFFILIATE_SCHEMA: 'drop table;' })).rejects.toThrow(
      /AFFILIATE_SCHEMA must be/,
    )
  })
})

describe.skipIf(!postgresUrl || !redisUrl)(needs('npm start on PostgreSQL and Redis', POSTGRES_VAR, REDIS_VAR), () => {
  const schema = uniqueName('start')
  let pool: pg.Pool
  let redis: RedisClientType
  const env = () => ({ DATABASE_URL: withPassword(postgresUrl!), AFFILIATE_SCHEMA: schema, REDIS_URL: redisUrl!, AFFILIATE_DB: '' })

  beforeAll(async () => {
    pool = await testPool(1)
    redis = await testRedis()
  })
  afterAll(async () => {
    await dropSchema(pool, schema)
    await pool.end()
    await deleteKeys(redis, `${schema}:`)
    await redis.close()
  })

  it('scales out with no code: two processes share the records, the keys and one bucket per key', { timeout: 60_000 }, async () => {
    const first = await start(env())
    const key = printedKey(first.output())!
    const workspace = printedWorkspace(first.output())!
    expect(key).toBeDefined()
    expect(first.output()).toMatch(
      new RegExp(
        `database: PostgreSQL postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:5432/test, schema ${schema}; rate limits: Redis redis://127\\.0\\.0\\.1:6379`,
      ),
    )
    expect(first.output()).not.toContain('hunter2')
    // The second finds the key the first made: it makes none.
    const second = await start(env())
    expect(second.output()).not.toMatch(/aff_live_/)
    try {
      const created = await post(first.url, key, campaign(workspace, 'Scaled'))
      expect(created.status).toBe(201)
      const { data } = (await created.json()) as { data: { id: string } }
      const read = await fetch(`${second.url}/campaigns?campaignId=${data.id}`, { headers: { 'x-auth-service': key } })
      expect(read.status).toBe(200)
      expect((await pool.query(`SELECT "campaignName" FROM "${schema}".campaigns`)).rows).toEqual([{ campaignName: 'Scaled' }])
      // The default limit (5 tokens), counted in Redis: ten at once over both cannot all pass.
      const burst = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          fetch(`${[first, second][i % 2]!.url}/campaigns/list`, { headers: { 'x-auth-service': key } }),
        ),
      )
      expect(burst.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(4)
      await Promise.all(burst.map((r) => r.body?.cancel()))
      expect(await redis.keys(`${schema}:limit:*`)).not.toEqual([])
    } finally {
      first.child.kill('SIGTERM')
      second.child.kill('SIGTERM')
      expect(await first.exit).toBe(0)
      expect(await second.exit).toBe(0)
    }
  })

  it('manages keys in PostgreSQL while a server runs: made, listed, and refused by it once revoked', { timeout: 60_000 }, async () => {
    const workspace = '99999999-9999-4999-8999-999999999998'
    const created = await cli(['keys', 'create', '--workspace', workspace, '--label', 'on postgres'], env())
    expect(created.code, created.stderr).toBe(0)
    const key = printedKey(created.stdout)!
    const id = /key id\s+(\S+)/.exec(created.stdout)![1]!
    const server = await start(env())
    try {
      expect((await post(server.url, key, campaign(workspace))).status).toBe(201)
      const listed = await cli(['keys', 'list'], env())
      expect(listed.code).toBe(0)
      expect(listed.stdout).toContain(id)
      expect(listed.stdout).toContain('on postgres')
      expect(listed.stdout).not.toContain(key.slice(13))
      expect((await cli(['keys', 'revoke', id], env())).code).toBe(0)
      expect((await post(server.url, key, campaign(workspace))).status).toBe(401)
      expect((await cli(['keys', 'list', '--db', 'x.sqlite'], env())).stderr).toMatch(/give one/)
    } finally {
      server.child.kill('SIGTERM')
      expect(await server.exit).toBe(0)
    }
  })
})

/** Waits until the server's output matches (it prints as it starts). */
async function printed(server: Server, pattern: RegExp): Promise<RegExpExecArray> {
  for (;;) {
    const found = pattern.exec(server.output())
    if (found) return found
    await new Promise((resolve) => server.child.stdout.once('data', resolve))
  }
}

/** Signs in to the admin with a token as a browser does: the form's CSRF token, then the post; answers the cookies. */
async function adminSignIn(origin: string, token: string): Promise<{ status: number; cookies: string[] }> {
  const form = await fetch(`${origin}/admin/sign-in`)
  const seed = form.headers.getSetCookie().map((c) => c.split(';')[0]!)
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!
  const sent = await fetch(`${origin}/admin/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: seed.join('; ') },
    body: new URLSearchParams({ csrf, token }),
  })
  return { status: sent.status, cookies: [...seed, ...sent.headers.getSetCookie().map((c) => c.split(';')[0]!)] }
}

describe('npm start: the admin dashboard', () => {
  it('makes an admin token on first start, prints it once with a sign-in URL, keeps only its hash; the token signs in to every workspace', async () => {
    const db = freshDb()
    const first = await start({ AFFILIATE_DB: db })
    const [, token, signIn] = await printed(first, /admin token[^\n]*\n\s+(\S{40,})\nSign in at (\S+)/)
    const workspace = printedWorkspace(first.output())!
    const origin = new URL(first.url).origin
    expect(signIn).toBe(`${origin}/admin/sign-in`)
    expect((await fetch(`${origin}/admin`, { redirect: 'manual' })).status).toBe(303)
    expect((await adminSignIn(origin, 'x'.repeat(43))).status).toBe(401)
    const { status, cookies } = await adminSignIn(origin, token!)
    expect(status).toBe(303)
    const page = await fetch(`${origin}/admin/settings/integrations`, { headers: { cookie: cookies.join('; ') } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(workspace)
    first.child.kill('SIGTERM')
    expect(await first.exit).toBe(0)
    const { readFileSync } = await import('node:fs')
    expect(readFileSync(db).includes(Buffer.from(token!))).toBe(false)

    const second = await start({ AFFILIATE_DB: db })
    await printed(second, /Admin dashboard: /)
    expect(second.output()).not.toContain(token!)
    expect((await adminSignIn(new URL(second.url).origin, token!)).status).toBe(303)
    second.child.kill('SIGTERM')
    expect(await second.exit).toBe(0)
  })

  it('takes AFFILIATE_ADMIN_TOKEN of 32+ characters, and refuses a shorter one', async () => {
    const short = await cli(['start'], { AFFILIATE_DB: ':memory:', AFFILIATE_ADMIN_TOKEN: 'too-short', PORT: '0' })
    expect(short.code).toBe(1)
    expect(short.stderr).toContain('AFFILIATE_ADMIN_TOKEN must be at least 32 characters')
    const token = 't'.repeat(40)
    const server = await start({ AFFILIATE_DB: ':memory:', AFFILIATE_ADMIN_TOKEN: token })
    await printed(server, /Admin dashboard: /)
    expect(server.output()).not.toContain(token)
    expect((await adminSignIn(new URL(server.url).origin, token)).status).toBe(303)
    server.child.kill('SIGTERM')
    expect(await server.exit).toBe(0)
  })
})
