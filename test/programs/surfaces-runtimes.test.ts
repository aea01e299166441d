import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { runtimeEnv, scriptCommand } from '../support/run-command.js'

// Every surface (the API, the redirect, the portal, the admin) under Bun and Deno through their
// adapters, and X-Forwarded-Proto believed only with trustProxy (test/runtimes/surfaces.ts).
const runtimes = [
  { runtime: 'bun', args: ['--no-install', 'run', 'test/runtimes/surfaces.ts'] },
  { runtime: 'deno', args: ['run', '--allow-env', '--allow-read', '--allow-net=127.0.0.1', 'test/runtimes/surfaces.ts'] },
]

interface Outcome {
  statuses: Record<'health' | 'redirect' | 'portal' | 'admin', number>
  signIn: number
  location: string | null
  cookies: { name: string; secure: boolean }[]
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
  const line = /^surfaces (.*)$/m.exec(output)
  expect(line, output).not.toBeNull()
  return JSON.parse(line![1]!) as Outcome
}

describe.each(runtimes)('surfaces under $runtime', ({ runtime, args }) => {
  it('serves the API, the redirect, the portal and the admin; with trustProxy, https from the proxy makes the cookies Secure', {
    timeout: 90_000,
  }, async () => {
    const outcome = await run(runtime, args, true)
    // The admin's sign-in page is a 401 (every request it does not let in sees it).
    expect(outcome.statuses).toEqual({ health: 200, redirect: 302, portal: 200, admin: 401 })
    expect([outcome.signIn, outcome.location]).toEqual([303, '/admin'])
    expect(outcome.cookies.map((c) => c.name)).toEqual(['affiliate_admin_csrf', 'affiliate_admin_session', 'affiliate_admin_csrf'])
    expect(outcome.cookies.every((c) => c.secure)).toBe(true)
  })

  it('ignores X-Forwarded-Proto without trustProxy', { timeout: 90_000 }, async () => {
    const outcome = await run(runtime, args, false)
    expect([outcome.signIn, outcome.location]).toEqual([303, '/admin'])
    expect(outcome.cookies.some((c) => c.secure)).toBe(false)
  })
})
