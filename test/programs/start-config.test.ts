// `npm start` configured from the environment alone, run as an operator runs it (a real process):
// the portal e-mails a sign-in link over SMTP to a real SMTP server (`smtp-server`) on 127.0.0.1,
// and the link signs the affiliate in; the per-key limit follows AFFILIATE_RATE_LIMIT_*.
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, describe, expect, it } from 'vitest'
import { browser, children, freePort, start, unquote } from '../support/start-program.js'

const KEY = 'start-config-test-key'
const WORKSPACE = '88888888-8888-4888-8888-888888888888'
const SECRET = 'a-portal-secret-of-at-least-32-characters'

afterAll(() => {
  for (const child of children) child.kill('SIGKILL')
})

describe('npm start configured from the environment', () => {
  it('e-mails a portal sign-in link over SMTP that signs the affiliate in, and limits keys as told', { timeout: 90_000 }, async () => {
    const mails: { from: string; to: string[]; text: string }[] = []
    let mailed!: () => void
    const delivered = new Promise<void>((resolve) => (mailed = resolve))
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, done) {
        let text = ''
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()))
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            text,
          })
          mailed()
          done()
        })
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
    const smtpPort = (smtp.server.address() as AddressInfo).port
    try {
      const port = await freePort()
      const server = start({
        PORT: String(port),
        AFFILIATE_API_KEY: KEY,
        AFFILIATE_WORKSPACE_ID: WORKSPACE,
        AFFILIATE_PORTAL_SECRET: SECRET,
        AFFILIATE_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
        AFFILIATE_MAIL_FROM: 'Partners <partners@example.com>',
        AFFILIATE_RATE_LIMIT_CAPACITY: '3',
        AFFILIATE_RATE_LIMIT_REFILL: '0.001',
      })
      const api = await server.url
      expect(server.output()).toContain(`portal at http://127.0.0.1:${port}/portal`)
      expect(server.output()).toContain(`e-mail to SMTP smtp://127.0.0.1:${smtpPort}`)
      const keyed = { 'x-auth-service': KEY, 'content-type': 'application/json' }
      const post = (path: string, body: unknown) => fetch(`${api}${path}`, { method: 'POST', headers: keyed, body: JSON.stringify(body) })
      const campaign = await post('/campaigns', {
        campaignName: 'Partners',
        workspaceId: WORKSPACE,
        commissionType: 'percentage',
        amount: 10,
        url: 'https://shop.example.com/',
      })
      expect(campaign.status).toBe(201)
      expect(campaign.headers.get('ratelimit-limit')).toBe('3')
      const { id: campaignId } = ((await campaign.json()) as { data: { id: string } }).data
      expect((await post('/affiliates', { email: 'ada@example.com', campaignId })).status).toBe(201)
      expect((await fetch(`${api}/campaigns/list`, { headers: keyed })).status).toBe(200)
      // The bucket of 3 is spent and refills one token in 1000 s.
      expect((await fetch(`${api}/campaigns/list`, { headers: keyed })).status).toBe(429)

      const origin = `http://127.0.0.1:${port}`
      const visitor = browser()
      expect((await visitor.go(`${origin}/portal/sign-in`)).status).toBe(200)
      expect((await visitor.go(`${origin}/portal/sign-in`, { email: 'ada@example.com' })).status).toBe(200)
      await delivered
      expect(mails).toHaveLength(1)
      expect(mails[0]!.from).toBe('partners@example.com')
      expect(mails[0]!.to).toEqual(['ada@example.com'])
      const link = /http:\/\/127\.0\.0\.1:\d+\/portal\/sign-in\/confirm\?token=[A-Za-z0-9_-]+/.exec(unquote(mails[0]!.text))?.[0]
      expect(link, mails[0]!.text).toBeDefined()
      expect(link!.startsWith(`${origin}/portal/sign-in/confirm?token=`)).toBe(true)
      expect((await visitor.go(link!)).status).toBe(200)
      const confirmed = await visitor.go(`${origin}/portal/sign-in/confirm`, { token: new URL(link!).searchParams.get('token')! })
      expect(confirmed.status).toBe(303)
      const dashboard = await visitor.go(new URL(confirmed.location!, origin).href)
      expect(dashboard.status).toBe(200)
      expect(dashboard.text).toContain('ada@example.com')

      server.child.kill('SIGTERM')
      expect(await server.exit).toBe(0)
    } finally {
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    }
  })

  it('turns the key limit off, and refuses portal settings that cannot work, naming the variable', { timeout: 90_000 }, async () => {
    const open = start({
      AFFILIATE_API_KEY: KEY,
      AFFILIATE_WORKSPACE_ID: WORKSPACE,
      AFFILIATE_RATE_LIMIT: 'off',
      AFFILIATE_WEBHOOKS_ALLOW_HTTP: '1',
      AFFILIATE_WEBHOOKS_ALLOW_PRIVATE: 'yes',
    })
    const api = await open.url
    expect(open.output()).toContain('rate limits: off')
    expect(open.output()).toContain('webhooks in development mode')
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => fetch(`${api}/campaigns/list`, { headers: { 'x-auth-service': KEY } })),
    )
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(answers[0]!.headers.get('ratelimit-limit')).toBeNull()
    // Development mode: an http webhook to a private address is accepted.
    const hook = await fetch(`${api}/webhooks`, {
      method: 'POST',
      headers: { 'x-auth-service': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ workspaceId: WORKSPACE, url: 'http://127.0.0.1:9/hooks', events: ['*'] }),
    })
    expect(hook.status).toBe(201)
    open.child.kill('SIGTERM')
    expect(await open.exit).toBe(0)

    const refusals: [Record<string, string>, string][] = [
      [{ AFFILIATE_PORTAL_SECRET: 'short' }, 'AFFILIATE_PORTAL_SECRET must be at least 32 characters'],
      [{ AFFILIATE_PORTAL_SECRET: SECRET }, 'the portal needs AFFILIATE_PUBLIC_URL'],
      [{ SMTP_URL: 'smtp://user:hunter2@mail.example.com' }, 'SMTP_URL needs AFFILIATE_MAIL_FROM'],
      [{ AFFILIATE_PUBLIC_URL: 'https://partners.example.com' }, 'AFFILIATE_PUBLIC_URL is for the portal: set AFFILIATE_PORTAL_SECRET'],
      [
        { AFFILIATE_NOTIFY_OWNERS: 'owner@example.com, nobody' },
        'AFFILIATE_NOTIFY_OWNERS must be e-mail addresses separated by commas, got nobody',
      ],
      [{ AFFILIATE_RATE_LIMIT_CAPACITY: 'many' }, 'AFFILIATE_RATE_LIMIT_CAPACITY must be a whole number above 0, got many'],
      [
        { AFFILIATE_RATE_LIMIT: 'off', AFFILIATE_RATE_LIMIT_REFILL: '2' },
        'AFFILIATE_RATE_LIMIT=off turns the limit off: unset AFFILIATE_RATE_LIMIT_REFILL',
      ],
    ]
    for (const [env, message] of refusals) {
      const refused = start(env)
      expect({ env, code: await refused.exit }).toEqual({ env, code: 1 })
      expect(refused.output()).toContain(message)
      expect(refused.output()).not.toContain('hunter2')
    }
  })
})
