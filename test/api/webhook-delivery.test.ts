import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  connectedPeerProblem,
  createNodeWebhookSender,
  pinnedLookup,
  sendWebhook,
  type ResolveHost,
} from '../../adapters/node/webhook-delivery.js'
import { canonicalAddress } from '../../src/webhooks/address.js'
import { buildWebhookRequest, type WebhookEvent } from '../../src/webhooks/delivery.js'
import { planAfterAttempt, webhookAfterDelivery, type AttemptPlan, type WebhookHealth } from '../../src/webhooks/schedule.js'
import { generateWebhookSecret, liveSecrets, rotateWebhookSecret } from '../../src/webhooks/secrets.js'

// Every server here listens on 127.0.0.1; names resolve through an injected resolver. Refused
// addresses are refused before any socket opens: no traffic leaves the machine.

const HOUR = 3_600_000
const local = { allowHttp: true, allowPrivateAddresses: true } as const

interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
  /** For each secret the receiver holds, whether `new Webhook(secret).verify` accepted the delivery. */
  verified: boolean[]
}

type Answer = (req: IncomingMessage, res: ServerResponse, n: number) => void

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        }),
    ),
  )
})

const listen = (server: Server) =>
  new Promise<number>((resolve) => {
    servers.push(server)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  })

/** A receiver on 127.0.0.1 that verifies every delivery with standardwebhooks against `secrets`. */
async function receiver(secrets: string[], answer: Answer = (_req, res) => res.writeHead(204).end()) {
  const received: Received[] = []
  let connections = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const verified = secrets.map((secret) => {
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>)
          return true
        } catch (error) {
          if (!(error instanceof WebhookVerificationError)) throw error
          return false
        }
      })
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body, verified })
      answer(req, res, received.length)
    })
  })
  server.on('connection', () => connections++)
  const port = await listen(server)
  return { received, port, url: `http://127.0.0.1:${port}/hooks/affiliates`, connections: () => connections }
}

let sequence = 0
const event = (type = 'commission.created'): WebhookEvent => ({
  id: crypto.randomUUID(),
  type,
  createdAt: new Date().toISOString(),
  workspaceId: 'ws_1',
  sequence: ++sequence,
  data: { commissionId: `c${sequence}`, amount: '12.50', currency: 'EUR', note: 'naïve ☕' },
})

describe('delivering to a real receiver', () => {
  it('POSTs the event as JSON with Standard Webhooks headers that verify, for every delivery', async () => {
    const secret = generateWebhookSecret()
    const hook = await receiver([secret])
    const send = createNodeWebhookSender(local)
    const events = [event(), event('payout.created'), event('webhook.test')]
    for (const e of events) {
      const result = await send(buildWebhookRequest(e, hook.url, [secret], Date.now()))
      expect(result).toEqual({ outcome: 'success', status: 204, durationMs: expect.any(Number), responseBody: '' })
      expect(result.durationMs).toBeGreaterThanOrEqual(0)
    }
    expect(hook.received).toHaveLength(3)
    hook.received.forEach((got, i) => {
      expect(got.verified).toEqual([true])
      expect(got.method).toBe('POST')
      expect(got.url).toBe('/hooks/affiliates')
      expect(got.headers['content-type']).toBe('application/json')
      expect(got.headers['webhook-id']).toBe(events[i]!.id)
      expect(JSON.parse(got.body)).toEqual(events[i])
      expect(got.headers['content-length']).toBe(String(Buffer.byteLength(got.body)))
    })
  })

  it('sends the same webhook-id on every attempt of one event, with a fresh timestamp and signature', async () => {
    const secret = generateWebhookSecret()
    const hook = await receiver([secret], (_req, res, n) => res.writeHead(n < 3 ? 500 : 200).end('ok'))
    const send = createNodeWebhookSender(local)
    const e = event()
    const now = Date.now()
    const results = []
    for (const at of [now - 10_000, now - 5_000, now]) results.push(await send(buildWebhookRequest(e, hook.url, [secret], at)))
    expect(results.map((r) => r.status)).toEqual([500, 500, 200])
    expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([e.id]))
    expect(new Set(hook.received.map((r) => r.headers['webhook-timestamp'])).size).toBe(3)
    expect(hook.received.every((r) => r.verified[0])).toBe(true)
  })

  it('500, 500, then 200: three attempts on the retry schedule (injected clock), then succeeded', async () => {
    const secret = generateWebhookSecret()
    const hook = await receiver([secret], (_req, res, n) => res.writeHead(n < 3 ? 500 : 200).end(n < 3 ? 'busy' : 'thanks'))
    const send = createNodeWebhookSender(local)
    const e = event()
    const created = Date.now() - 10 * 60_000 // the clock the dispatcher would be told
    let clock = created
    const plans: AttemptPlan[] = []
    const attemptTimes: number[] = []
    for (let attempt = 1; attempt <= 8; attempt++) {
      attemptTimes.push(clock)
      const result = await send(buildWebhookRequest(e, hook.url, [secret], Date.now()))
      const plan = planAfterAttempt(attempt, result.outcome, clock, () => 0.5)
      plans.push(plan)
      if (plan.status !== 'failed') break
      clock = Date.parse(plan.nextAttemptAt)
    }
    expect(hook.received).toHaveLength(3)
    expect(attemptTimes.map((t) => t - created)).toEqual([0, 5_000, 305_000])
    expect(plans.map((p) => p.status)).toEqual(['failed', 'failed', 'succeeded'])
  })

  it('classifies what the receiver answers: 2xx success, 410 gone, anything else retryable with the status', async () => {
    const statuses = [200, 201, 202, 299, 410, 400, 404, 429, 500, 503]
    const hook = await receiver([], (_req, res, n) => res.writeHead(statuses[n - 1]!).end(`status ${statuses[n - 1]}`))
    const send = createNodeWebhookSender(local)
    const secret = generateWebhookSecret()
    const results = []
    for (const _ of statuses) results.push(await send(buildWebhookRequest(event(), hook.url, [secret], Date.now())))
    expect(results.map((r) => [r.status, r.outcome])).toEqual(
      statuses.map((s) => [s, s >= 200 && s < 300 ? 'success' : s === 410 ? 'gone' : 'retryable']),
    )
    expect(results.map((r) => r.responseBody)).toEqual(statuses.map((s) => `status ${s}`))
    expect(results[0]!.error).toBeUndefined()
    expect(results[4]!.error).toBe('the endpoint answered 410')
    expect(results[8]!.error).toBe('the endpoint answered 500')
  })

  it('a 410 disables the webhook at once', async () => {
    const hook = await receiver([], (_req, res) => res.writeHead(410).end())
    const result = await sendWebhook(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()), local)
    const health: WebhookHealth = { enabled: true, disabledReason: null, consecutiveDeadDeliveries: 0 }
    const after = webhookAfterDelivery(health, planAfterAttempt(1, result.outcome, Date.now()))
    expect(after).toEqual({ enabled: false, disabledReason: 'the endpoint answered 410 Gone', consecutiveDeadDeliveries: 1 })
  })

  it('reports a connection refused as retryable, with no status', async () => {
    const hook = await receiver([])
    const port = hook.port
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()))
    const result = await sendWebhook(
      buildWebhookRequest(event(), `http://127.0.0.1:${port}/`, [generateWebhookSecret()], Date.now()),
      local,
    )
    expect(result).toMatchObject({ outcome: 'retryable', status: null, responseBody: '' })
    expect(result.error).toMatch(/ECONNREFUSED/)
    expect(result.refused).toBeUndefined()
  })
})

describe('secret rotation, verified by the receiver', () => {
  it('during the overlap both the old and the new secret verify; after it only the new one', async () => {
    const old = generateWebhookSecret()
    const hook = await receiver([old])
    const holdsNew = async (secret: string) => receiver([secret])
    const send = createNodeWebhookSender(local)
    const now = Date.now()

    // Rotated an hour ago with the default 24-hour overlap: both secrets sign.
    const during = rotateWebhookSecret({ secret: old }, now - HOUR)
    const fresh = await holdsNew(during.secret)
    for (const target of [hook, fresh]) {
      await send(buildWebhookRequest(event(), target.url, liveSecrets(during, now), now))
    }
    expect(hook.received[0]!.verified).toEqual([true])
    expect(fresh.received[0]!.verified).toEqual([true])
    expect((hook.received[0]!.headers['webhook-signature'] as string).split(' ')).toHaveLength(2)

    // Rotated 25 hours ago: the overlap is over, only the new secret signs.
    const after = rotateWebhookSecret({ secret: old }, now - 25 * HOUR)
    const afterNew = await holdsNew(after.secret)
    await send(buildWebhookRequest(event(), hook.url, liveSecrets(after, now), now))
    await send(buildWebhookRequest(event(), afterNew.url, liveSecrets(after, now), now))
    expect(hook.received[1]!.verified).toEqual([false])
    expect(afterNew.received[0]!.verified).toEqual([true])
    expect((hook.received[1]!.headers['webhook-signature'] as string).split(' ')).toHaveLength(1)
  })
})

describe('SSRF protection', () => {
  const refusedUrls: Array<[string, RegExp]> = [
    ['https://127.0.0.1/', /refused: 127\.0\.0\.1 is a loopback address/],
    ['http://10.0.0.1/', /must be https/],
    ['https://10.0.0.1/', /refused: 10\.0\.0\.1 is a private address/],
    ['https://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is the cloud metadata address/],
    ['https://[::1]/', /refused: ::1 is a loopback address/],
    ['https://[::ffff:127.0.0.1]/', /refused: .*loopback/],
    ['https://192.168.0.10/', /refused: .*private/],
    ['https://100.64.1.1/', /refused: .*carrier-grade NAT/],
  ]

  it.each(refusedUrls)('refuses %s without the test options, before opening any socket', async (url, message) => {
    let resolved = 0
    const result = await sendWebhook(buildWebhookRequest(event(), url, [generateWebhookSecret()], Date.now()), {
      resolve: async () => {
        resolved++
        return []
      },
    })
    expect(result).toMatchObject({ outcome: 'retryable', status: null, refused: true, responseBody: '' })
    expect(result.error).toMatch(message)
    expect(resolved).toBe(0)
  })

  it('refuses http://10.0.0.1 for its address when http is allowed but private addresses are not', async () => {
    const result = await sendWebhook(buildWebhookRequest(event(), 'http://10.0.0.1/', [generateWebhookSecret()], Date.now()), {
      allowHttp: true,
    })
    expect(result.error).toBe('refused: 10.0.0.1 is a private address (allowed only with webhooks: { allowPrivateAddresses: true })')
  })

  it('refuses the real receiver on 127.0.0.1 without allowPrivateAddresses: no connection reaches it', async () => {
    const hook = await receiver([])
    const result = await sendWebhook(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()), { allowHttp: true })
    expect(result.refused).toBe(true)
    expect(hook.connections()).toBe(0)
    expect(hook.received).toHaveLength(0)
  })

  const resolvesTo =
    (table: Record<string, string[]>): ResolveHost =>
    async (hostname) =>
      (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))

  it.each([
    [['127.0.0.1'], /refused: 127\.0\.0\.1 is a loopback address .*; hooks\.attacker\.test resolves to it/],
    [['::1'], /refused: ::1 is a loopback address/],
    [['::ffff:127.0.0.1'], /IPv4-mapped 127\.0\.0\.1\) is a loopback/],
    [['169.254.169.254'], /metadata/],
    [['93.184.215.14', '10.1.2.3'], /refused: 10\.1\.2\.3 is a private address/],
  ])('refuses a host name resolving to %j', async (addresses, message) => {
    const hook = await receiver([])
    const result = await sendWebhook(
      buildWebhookRequest(event(), `http://hooks.attacker.test:${hook.port}/`, [generateWebhookSecret()], Date.now()),
      {
        allowHttp: true,
        resolve: resolvesTo({ 'hooks.attacker.test': addresses }),
      },
    )
    expect(result).toMatchObject({ outcome: 'retryable', status: null, refused: true })
    expect(result.error).toMatch(message)
    expect(hook.connections()).toBe(0)
  })

  it('refuses localhost through the system resolver (which answers from /etc/hosts)', async () => {
    const hook = await receiver([])
    const result = await sendWebhook(
      buildWebhookRequest(event(), `http://localhost:${hook.port}/`, [generateWebhookSecret()], Date.now()),
      { allowHttp: true },
    )
    expect(result.refused).toBe(true)
    expect(result.error).toMatch(/loopback address.*localhost resolves to it/)
    expect(hook.connections()).toBe(0)
  })

  it('reports a name that does not resolve, and a resolver that hangs past the deadline', async () => {
    const nothing = await sendWebhook(buildWebhookRequest(event(), 'https://nowhere.test/', [generateWebhookSecret()], Date.now()), {
      resolve: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' })
      },
    })
    expect(nothing).toMatchObject({
      outcome: 'retryable',
      status: null,
      error: 'could not resolve nowhere.test: getaddrinfo ENOTFOUND nowhere.test',
    })
    const empty = await sendWebhook(buildWebhookRequest(event(), 'https://empty.test/', [generateWebhookSecret()], Date.now()), {
      resolve: async () => [],
    })
    expect(empty.error).toBe('empty.test resolves to no IP address')
    const hung = await sendWebhook(buildWebhookRequest(event(), 'https://slow.test/', [generateWebhookSecret()], Date.now()), {
      timeoutMs: 50,
      resolve: () => new Promise(() => {}),
    })
    expect(hung.error).toBe('timed out after 50 ms resolving slow.test')
  })

  it('with the test options, delivers to a name resolving to 127.0.0.1, sending the name as Host', async () => {
    const secret = generateWebhookSecret()
    const hook = await receiver([secret])
    const result = await sendWebhook(buildWebhookRequest(event(), `http://hooks.example.test:${hook.port}/in`, [secret], Date.now()), {
      ...local,
      resolve: resolvesTo({ 'hooks.example.test': ['127.0.0.1'] }),
    })
    expect(result.outcome).toBe('success')
    expect(hook.received[0]!.headers.host).toBe(`hooks.example.test:${hook.port}`)
    expect(hook.received[0]!.verified).toEqual([true])
  })

  it('resolves once and connects to the address it checked: a changed second answer (rebinding) is never used', async () => {
    const hook = await receiver([])
    const answers = ['127.0.0.1', '127.0.0.2'] // nothing listens on 127.0.0.2: using it would fail
    let calls = 0
    const result = await sendWebhook(
      buildWebhookRequest(event(), `http://rebind.test:${hook.port}/`, [generateWebhookSecret()], Date.now()),
      {
        ...local,
        resolve: async () => {
          const address = answers[Math.min(calls++, 1)]!
          return [{ address, family: 4 }]
        },
      },
    )
    expect(result.outcome).toBe('success')
    expect(calls).toBe(1)
    expect(hook.received).toHaveLength(1)
  })
})

describe('pinnedLookup', () => {
  const addresses = [
    { address: '203.0.113.7', family: 4 as const },
    { address: '2001:db8::7', family: 6 as const },
  ]
  const call = (options: Parameters<ReturnType<typeof pinnedLookup>>[1]) =>
    new Promise<unknown[]>((resolve) => pinnedLookup(addresses)('anything.test', options, (...args) => resolve(args)))

  it('answers only the checked addresses, whatever the name, in both callback forms', async () => {
    expect(await call({ all: true })).toEqual([null, addresses])
    expect(await call({})).toEqual([null, '203.0.113.7', 4])
    expect(await call({ family: 6 })).toEqual([null, '2001:db8::7', 6])
    expect(await call({ family: 4, all: true })).toEqual([null, [addresses[0]]])
    expect(await call(6)).toEqual([null, '2001:db8::7', 6])
  })

  it('fails rather than fall back to DNS when no checked address has the family asked for', async () => {
    const lookup = pinnedLookup([addresses[0]!])
    const [error] = await new Promise<unknown[]>((resolve) => lookup('v6only.test', { family: 6 }, (...args) => resolve(args)))
    expect(error).toMatchObject({ code: 'ENOTFOUND' })
  })
})

describe('redirects, deadline and response size', () => {
  it('does not follow a redirect: the 302 is the result, and its target gets nothing', async () => {
    const target = await receiver([])
    const hook = await receiver([], (_req, res) => res.writeHead(302, { location: `${target.url}?moved` }).end())
    const result = await sendWebhook(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()), local)
    expect(result).toMatchObject({ outcome: 'retryable', status: 302 })
    expect(result.error).toBe(`the endpoint answered 302 (a redirect to ${target.url}?moved, not followed)`)
    expect(hook.received).toHaveLength(1)
    expect(target.received).toHaveLength(0)
    expect(target.connections()).toBe(0)
  })

  it('gives up at the deadline when the receiver never answers, and closes the connection', async () => {
    let closed!: () => void
    const closedAtReceiver = new Promise<void>((resolve) => (closed = resolve))
    const hook = await receiver([], (req) => req.socket.once('close', () => closed())) // never answers
    const result = await sendWebhook(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()), {
      ...local,
      timeoutMs: 200,
    })
    expect(result).toMatchObject({ outcome: 'retryable', status: null, error: 'timed out after 200 ms', responseBody: '' })
    await closedAtReceiver
  })

  it('keeps the status when the body is slower than the deadline', async () => {
    const hook = await receiver([], (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('partial') // and never ends
    })
    const result = await sendWebhook(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()), {
      ...local,
      timeoutMs: 200,
    })
    expect(result).toMatchObject({ outcome: 'success', status: 200, responseBody: 'partial' })
  })

  it('reads 1 KiB of the response and no more, even from a receiver that never stops sending', async () => {
    let chunksWritten = 0
    let gaveUp = false
    const hook = await receiver([], (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' })
      const chunk = 'é'.repeat(8 * 1024) // 16 KiB of two-byte characters
      const pump = () => {
        // Bounded: at most 4,096 chunks (64 MiB), stopping as soon as the sender hangs up.
        while (!res.destroyed && chunksWritten < 4096) {
          chunksWritten++
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        if (!res.destroyed) res.end()
      }
      res.on('close', () => (gaveUp = !res.writableFinished))
      pump()
    })
    const result = await sendWebhook(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()), {
      ...local,
      timeoutMs: 10_000,
    })
    expect(result).toMatchObject({ outcome: 'retryable', status: 500, error: 'the endpoint answered 500' })
    expect(Buffer.byteLength(result.responseBody)).toBe(1024)
    expect(result.responseBody).toBe('é'.repeat(512))
    await new Promise<void>((resolve) => setImmediate(resolve))
    await expect.poll(() => gaveUp).toBe(true)
    expect(chunksWritten).toBeLessThan(4096)
  })

  it('cuts a multi-byte character at the cap without failing, and takes another cap', async () => {
    const hook = await receiver([], (_req, res) => res.writeHead(200).end(`a${'€'.repeat(100)}`))
    const send = createNodeWebhookSender({ ...local, responseBodyLimit: 5 })
    const result = await send(buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()))
    expect(result.responseBody).toBe('a€\uFFFD')
    const none = await createNodeWebhookSender({ ...local, responseBodyLimit: 0 })(
      buildWebhookRequest(event(), hook.url, [generateWebhookSecret()], Date.now()),
    )
    expect(none).toMatchObject({ outcome: 'success', status: 200, responseBody: '' })
  })

  it('refuses bad options when the sender is made', () => {
    expect(() => createNodeWebhookSender({ timeoutMs: 0 })).toThrow(RangeError)
    expect(() => createNodeWebhookSender({ timeoutMs: Number.POSITIVE_INFINITY })).toThrow(RangeError)
    expect(() => createNodeWebhookSender({ responseBodyLimit: -1 })).toThrow(RangeError)
  })
})

describe('https with a host name pinned to a checked address', () => {
  let dir: string
  let cert: string
  let key: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'))
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=hooks.example.test',
        '-addext',
        'subjectAltName=DNS:hooks.example.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    )
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8')
    key = readFileSync(join(dir, 'key.pem'), 'utf8')
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  async function tlsReceiver(secret: string) {
    const received: Array<{ verified: boolean; servername: string | false | null }> = []
    const server = createHttpsServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        let verified = true
        try {
          new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>)
        } catch {
          verified = false
        }
        received.push({ verified, servername: (req.socket as import('node:tls').TLSSocket).servername })
        res.writeHead(200).end()
      })
    })
    const port = await listen(server as unknown as Server)
    return { received, port }
  }

  it('verifies the certificate for the name (SNI too) while connecting to the pinned address', async () => {
    const secret = generateWebhookSecret()
    const hook = await tlsReceiver(secret)
    const result = await sendWebhook(buildWebhookRequest(event(), `https://hooks.example.test:${hook.port}/`, [secret], Date.now()), {
      allowPrivateAddresses: true,
      ca: cert,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    })
    expect(result).toMatchObject({ outcome: 'success', status: 200 })
    expect(hook.received).toEqual([{ verified: true, servername: 'hooks.example.test' }])
  })

  it('fails on a certificate it does not trust, or one for another name', async () => {
    const hook = await tlsReceiver(generateWebhookSecret())
    const untrusted = await sendWebhook(
      buildWebhookRequest(event(), `https://hooks.example.test:${hook.port}/`, [generateWebhookSecret()], Date.now()),
      {
        allowPrivateAddresses: true,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      },
    )
    expect(untrusted).toMatchObject({ outcome: 'retryable', status: null })
    expect(untrusted.error).toMatch(/self[- ]signed|SELF_SIGNED/)
    const otherName = await sendWebhook(
      buildWebhookRequest(event(), `https://other.example.test:${hook.port}/`, [generateWebhookSecret()], Date.now()),
      {
        allowPrivateAddresses: true,
        ca: cert,
        resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      },
    )
    expect(otherName.error).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|does not match|altnames/)
    expect(hook.received).toHaveLength(0)
  })
})

describe('connectedPeerProblem (the check on the socket itself)', () => {
  const checked = new Set(['127.0.0.1', '0:0:0:0:0:0:0:1'].map(canonicalAddress))

  it('accepts a checked peer in any spelling', () => {
    expect(connectedPeerProblem('127.0.0.1', checked, local)).toBeUndefined()
    expect(connectedPeerProblem('::1', checked, local)).toBeUndefined()
  })

  it('refuses a peer that was not checked, one the policy refuses, and none', () => {
    expect(connectedPeerProblem('127.0.0.2', checked, local)).toBe('connected to 127.0.0.2, which was not checked')
    expect(connectedPeerProblem('127.0.0.1', checked, {})).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/)
    expect(connectedPeerProblem(undefined, checked, local)).toBe('the connection has no peer address')
  })

  it('lets a resolver answer an address in any spelling and still connects (IPv6 loopback receiver)', async () => {
    const server = createServer((_req, res) => res.writeHead(204).end())
    servers.push(server)
    const port = await new Promise<number>((resolve) => server.listen(0, '::1', () => resolve((server.address() as AddressInfo).port)))
    const result = await sendWebhook(buildWebhookRequest(event(), `http://v6.test:${port}/`, [generateWebhookSecret()], Date.now()), {
      ...local,
      resolve: async () => [{ address: '0:0:0:0:0:0:0:1', family: 6 }],
    })
    expect(result).toMatchObject({ outcome: 'success', status: 204 })
  })
})
