import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { runtimeEnv, scriptCommand } from '../support/run-command.js'

// The redirect and the beacon under Bun and Deno through their adapters: the client address is
// the socket's unless trustProxy, then X-Forwarded-For's (test/runtimes/tracking.ts).
const runtimes = [
  { runtime: 'bun', args: ['--no-install', 'run', 'test/runtimes/tracking.ts'] },
  { runtime: 'deno', args: ['run', '--allow-env', '--allow-read', '--allow-net=127.0.0.1', 'test/runtimes/tracking.ts'] },
]

interface Outcome {
  results: { status: number; clickId: string | null; allowOrigin?: string | null }[]
  totalClicks: number
}

async function run(runtime: string, args: string[], trustProxy: boolean): Promise<Outcome> {
  const { command } = scriptCommand(`example:${runtime}`)
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { env: runtimeEnv({ RUNTIME_NAME: runtime, TRUST_PROXY: trustProxy ? '1' : '0' }) })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${runtime} exited ${code}: ${out}`))))
  })
  const line = /^tracking (.*)$/m.exec(output)
  expect(line, output).not.toBeNull()
  return JSON.parse(line![1]!) as Outcome
}

describe.each(runtimes)('tracking under $runtime', ({ runtime, args }) => {
  it('limits and dedupes by the socket address: a forged X-Forwarded-For changes nothing', { timeout: 90_000 }, async () => {
    const { results, totalClicks } = await run(runtime, args, false)
    // One address (the socket's) with a budget of two: the third and fourth requests are 429;
    // the beacon's click repeats the redirect's visitor, so it answers the same clickId.
    expect(results.map((r) => r.status)).toEqual([302, 200, 429, 429])
    expect(results[0]!.clickId).toMatch(/^[0-9a-f-]{36}$/)
    expect(results[1]!.clickId).toBe(results[0]!.clickId)
    expect(results[1]!.allowOrigin).toBe('https://shop.example.com')
    expect(totalClicks).toBe(1)
  })

  it('with trustProxy, each forwarded address is its own visitor with its own budget', { timeout: 90_000 }, async () => {
    const { results, totalClicks } = await run(runtime, args, true)
    expect(results.map((r) => r.status)).toEqual([302, 200, 302, 200])
    expect(new Set(results.map((r) => r.clickId)).size).toBe(4)
    expect(totalClicks).toBe(4)
  })
})
