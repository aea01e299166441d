import { spawn } from 'node:child_process'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { generateWebhookSecret } from '../../src/webhooks/secrets.js'
import { runtimeEnv, scriptCommand } from '../support/run-command.js'

// src/webhooks imports no node:* (test/unit/layers.test.ts) and its dependencies (standardwebhooks,
// ipaddr.js) load elsewhere too: the same signing, schedule and address checks under Bun and Deno.
const runtimes = [
  { runtime: 'bun', args: ['--no-install', 'run', 'test/runtimes/webhooks.ts'] },
  { runtime: 'deno', args: ['run', '--allow-env', '--allow-read', 'test/runtimes/webhooks.ts'] },
]

describe.each(runtimes)('src/webhooks under $runtime', ({ runtime, args }) => {
  it('signs deliveries that standardwebhooks verifies on Node, with both secrets of a rotation', { timeout: 90_000 }, async () => {
    const old = generateWebhookSecret()
    const { command } = scriptCommand(`example:${runtime}`)
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(command, args, { env: runtimeEnv({ WEBHOOK_SECRET: old, RUNTIME_NAME: runtime }) })
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stderr.on('data', (d: Buffer) => (out += d.toString()))
      child.once('error', reject)
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${runtime} exited ${code}: ${out}`))))
    })
    const line = /^webhooks (.*)$/m.exec(output)
    expect(line, output).not.toBeNull()
    const got = JSON.parse(line![1]!) as {
      newSecret: string
      body: string
      headers: Record<string, string>
      plan: { status: string; attempts: number; nextAttemptAt: string }
      now: number
      loopback: string
      refused: string
    }
    expect(got.newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(new Webhook(old).verify(got.body, got.headers)).toMatchObject({ type: 'webhook.test', data: { runtime } })
    expect(new Webhook(got.newSecret).verify(got.body, got.headers)).toMatchObject({ type: 'webhook.test' })
    expect(got.plan).toEqual({ status: 'failed', attempts: 1, nextAttemptAt: new Date(got.now + 5000).toISOString() })
    expect(got.loopback).toBe('::ffff:127.0.0.1 (IPv4-mapped 127.0.0.1) is a loopback address')
    expect(got.refused).toMatch(/^refused: 169\.254\.169\.254 is the cloud metadata address/)
  })
})
