import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'

// `npm start` and the `affiliate-service` command, run as a user runs them: real processes.
const root = mkdtempSync(join(tmpdir(), 'affiliate-start-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let dbs = 0
const freshDb = () => join(root, `db-${++dbs}`, 'affiliate.sqlite')
const bin = (name: string) => join(import.meta.dirname, '..', 'bin', name)

interface Server {
  child: ChildProcessByStdio<null, Readable, Readable>
  url: string
  output: () => string
  exit: Promise<number | null>
}

/** Runs bin/start.ts (what `npm start` runs) and resolves once it prints its URL. */
async function start(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', bin('start.ts')], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (data: Buffer) => (output += data.toString()))
  child.stderr.on('data', (data: Buffer) => (output += data.toString()))
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const found = /http:\/\/127\.0\.0\.1:\d+\/api\/v1/.exec(output)
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
    env: { ...process.env, ...env },
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
function slowPost(url: string, key: string, body: unknown) {
  const text = JSON.stringify(body)
  const { hostname, port, pathname } = new URL(`${url}/campaigns`)
  const req = request({
    hostname,
    port,
    path: pathname,
    method: 'POST',
    headers: { 'x-auth-service': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
  })
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let data = ''
      res.on('data', (chunk: Buffer) => (data += chunk.toString()))
      res.once('end', () => resolve({ status: res.statusCode!, body: data }))
    })
    req.once('error', reject)
  })
  req.write(text.slice(0, 20))
  req.flushHeaders()
  return {
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

  it('on SIGTERM stops accepting, finishes the request in flight, flushes, and exits 0', async () => {
    const db = freshDb()
    const server = await start({ AFFILIATE_DB: db })
    const key = printedKey(server.output())!
    const workspace = printedWorkspace(server.output())!
    // Make sure the request is in the server's hands (its headers read) before the signal.
    const inFlight = slowPost(server.url, key, campaign(workspace, 'In flight'))
    await new Promise((resolve) => setTimeout(resolve, 500))
    server.child.kill('SIGTERM')
    await new Promise<void>((resolve) => {
      const check = () => server.output().includes('finishing requests in flight') && resolve()
      check()
      server.child.stdout.on('data', check)
    })
    await expect(fetch(`${server.url}/health`)).rejects.toThrow()
    const answered = await inFlight.finish()
    expect(answered.status).toBe(201)
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
    const server = await start({ AFFILIATE_DB: ':memory:', AFFILIATE_API_KEY: 'env-key-of-the-operator', AFFILIATE_WORKSPACE_ID: workspace })
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
  it('creates, lists (never the key) and revokes keys; a revoked key is refused', async () => {
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
    expect(listed.stdout).toContain(key.slice(0, 13))
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
