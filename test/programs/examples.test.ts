import { spawn } from 'node:child_process'
import { serve } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
// Every example runs by its documented npm script's command in its real runtime (Node with tsx,
// Express on Node, Bun and Deno from their npm packages), and a client makes authenticated
// requests against it: health, create, read, a validation error, a 401, a 429, then SIGTERM.
import { afterEach, describe, expect, it } from 'vitest'
import { runtimeEnv, scriptCommand, startProgram, type Started } from '../support/run-command.js'

const KEY = 'example-test-key'
const WORKSPACE = '44444444-4444-4444-8444-444444444444'
const URL_LINE = /listening on (http:\/\/127\.0\.0\.1:\d+\S*\/api\/v1)\b/

const started: Started[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((program) => program.stop()))
})

/** Runs the client's part; a failure names what the program printed, so a hang in CI can be read. */
async function withOutput(program: Started, work: () => Promise<void>): Promise<void> {
  try {
    await work()
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- the program printed:\n${program.output()}`, { cause: error })
  }
}

/** Every request gives up after 15 s, so a hung server fails the test with its output, not a bare timeout. */
function fetch(input: string, init: RequestInit = {}): Promise<Response> {
  return globalThis.fetch(input, { ...init, signal: AbortSignal.timeout(15_000) })
}

const keyed = { 'x-auth-service': KEY, 'content-type': 'application/json' }

/** A round trip a new user would make, checked to the statuses and envelopes. */
async function roundTrip(base: string): Promise<void> {
  const health = await fetch(`${base}/health`)
  expect(health.status).toBe(200)
  expect(await health.json()).toMatchObject({ status: 'ok', service: 'affiliate-service' })

  const created = await fetch(`${base}/campaigns`, {
    method: 'POST',
    headers: keyed,
    body: JSON.stringify({
      campaignName: 'Launch',
      workspaceId: WORKSPACE,
      commissionType: 'percentage',
      amount: 20,
      url: 'https://shop.example.com/',
    }),
  })
  expect(created.status).toBe(201)
  const campaign = ((await created.json()) as { data: { id: string; workspaceId: string } }).data
  expect(campaign.workspaceId).toBe(WORKSPACE)

  const read = await fetch(`${base}/campaigns?campaignId=${campaign.id}`, { headers: keyed })
  expect(read.status).toBe(200)
  expect(((await read.json()) as { data: unknown }).data).toEqual(campaign)

  const invalid = await fetch(`${base}/affiliates`, {
    method: 'POST',
    headers: keyed,
    body: JSON.stringify({ email: 'not-an-email', campaignId: campaign.id }),
  })
  expect(invalid.status).toBe(400)
  const validation = (await invalid.json()) as { message: string; errors: { path: string; location: string }[] }
  expect(validation.message).toBe('Validation error')
  expect(validation.errors).toEqual([expect.objectContaining({ path: 'email', location: 'body', type: 'field' })])

  const unauthorized = await fetch(`${base}/campaigns/list`, { headers: { 'x-auth-service': 'wrong' } })
  expect(unauthorized.status).toBe(401)
  expect(await unauthorized.json()).toEqual({
    status: 401,
    code: 'invalid_api_key',
    message:
      'Invalid API key. Please check your API key and try again. Send it in the x-auth-service header (or as Authorization: Bearer <key>).',
  })
}

/** Ten requests at once against the default limit of 5 per second per key: some must be refused. */
async function burst(base: string): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${base}/campaigns/list`, { headers: keyed })))
  const statuses = answers.map((answer) => answer.status)
  expect(statuses.every((status) => status === 200 || status === 429)).toBe(true)
  const refused = answers.filter((answer) => answer.status === 429)
  expect(refused.length).toBeGreaterThan(0)
  expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(await refused[0]!.json()).toEqual({ status: 429, code: 'rate_limited', message: 'Rate limit exceeded. Please retry later.' })
  await Promise.all(answers.filter((answer) => !answer.bodyUsed).map((answer) => answer.body?.cancel()))
}

const examples = [
  { name: 'node-http', script: 'example:node' },
  { name: 'express', script: 'example:express' },
  { name: 'hono', script: 'example:hono', perAddress: true },
  { name: 'stripe', script: 'example:stripe' },
  { name: 'bun', script: 'example:bun' },
  { name: 'deno', script: 'example:deno' },
]

/**
 * Wrong keys from one address, more than the default burst of 10: refused with 429 once the
 * address is known to the service; a host that hides it (Hono without `c.env`) answers 401 forever.
 */
async function wrongKeys(base: string): Promise<void> {
  const statuses: number[] = []
  for (let i = 0; i < 15; i++) {
    const answer = await fetch(`${base}/campaigns/list`, { headers: { 'x-auth-service': `wrong-${i}` } })
    statuses.push(answer.status)
    await answer.body?.cancel()
  }
  expect(statuses).toContain(429)
}

describe.each(examples as { name: string; script: string; perAddress?: boolean }[])('examples/$name', ({ script, perAddress }) => {
  it(`runs by \`npm run ${script}\`, serves an authenticated round trip and rate limits, stops on SIGTERM`, {
    timeout: 60_000,
  }, async () => {
    const { command, args, env } = scriptCommand(script)
    const program = await startProgram(
      command,
      args,
      runtimeEnv({ ...env, PORT: '0', AFFILIATE_API_KEY: KEY, AFFILIATE_WORKSPACE_ID: WORKSPACE }),
      URL_LINE,
    )
    started.push(program)
    await withOutput(program, async () => {
      await roundTrip(program.url)
      await burst(program.url)
      if (perAddress) await wrongKeys(program.url)
    })
    expect(await program.stop()).toBe(0)
  })
})

// `export default service`, with no adapter: Bun's `bun run` and Deno's `deno serve` serve its `fetch`.
const defaultExport = 'test/runtimes/default-export.ts'
const plain = [
  {
    runtime: 'bun',
    args: ['--no-install', 'run', defaultExport],
    pattern: /server: (http:\/\/localhost:\d+)/,
  },
  {
    runtime: 'deno',
    args: ['serve', '--allow-env', '--allow-read', '--host', '127.0.0.1', '--port', '0', defaultExport],
    pattern: /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
  },
]

describe.each(plain)('export default service under $runtime', ({ runtime, args, pattern }) => {
  it('serves the round trip', { timeout: 90_000 }, async () => {
    const { command } = scriptCommand(`example:${runtime}`)
    const program = await startProgram(
      command,
      args,
      runtimeEnv({ PORT: '0', AFFILIATE_API_KEY: KEY, AFFILIATE_WORKSPACE_ID: WORKSPACE }),
      pattern,
    )
    started.push(program)
    await withOutput(program, () => roundTrip(`${program.url.replace('localhost', '127.0.0.1')}/api/v1`))
  })
})

// `affiliate-service/client` needs only fetch: the same calls from Bun and Deno against a Node server.
const clients = [
  { runtime: 'bun', args: ['--no-install', 'run', 'test/runtimes/client.ts'] },
  { runtime: 'deno', args: ['run', '--allow-net=127.0.0.1', '--allow-env', '--allow-read', 'test/runtimes/client.ts'] },
]

describe.each(clients)('the HTTP client under $runtime', ({ runtime, args }) => {
  it('creates, reads, gets a typed 404, runs payouts and reads a streamed export', { timeout: 90_000 }, async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY, userId: crypto.randomUUID(), workspaceIds: [WORKSPACE] }]),
    })
    const server = await serve(service, { port: 0 })
    try {
      const { command } = scriptCommand(`example:${runtime}`)
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(command, args, {
          env: runtimeEnv({ AFFILIATE_URL: server.url, AFFILIATE_API_KEY: KEY, AFFILIATE_WORKSPACE_ID: WORKSPACE }),
        })
        let out = ''
        child.stdout.on('data', (d: Buffer) => (out += d.toString()))
        child.stderr.on('data', (d: Buffer) => (out += d.toString()))
        child.once('error', reject)
        child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${runtime} exited ${code}: ${out}`))))
      })
      const match = /client ok (\S+) true 404 payouts true text\/csv; charset=utf-8/.exec(output)
      expect(match, output).not.toBeNull()
      expect((await service.api.campaigns.get(match![1]!)).campaignName).toBe('From another runtime')
    } finally {
      await server.close()
    }
  })
})
