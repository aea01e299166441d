// `npm start` tells people what happened (SPEC wave 4, "Notifications"): with SMTP_URL an
// approval reaches a real SMTP server (`smtp-server` on 127.0.0.1) through nodemailer, with its
// List-Unsubscribe link; without it, the development mailbox prints it and the admin lists it.
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterAll, describe, expect, it } from 'vitest'
import { browser, children, freePort, start, unquote } from '../support/start-program.js'

const KEY = 'start-notify-test-key'
const WORKSPACE = '77777777-7777-4777-8777-777777777777'
const SECRET = 'a-portal-secret-of-at-least-32-characters'
const ADMIN_TOKEN = 'an-admin-token-of-at-least-32-characters!'

afterAll(() => {
  for (const child of children) child.kill('SIGKILL')
})

/** An applicant to a campaign that requires approval, approved: answers the API's base URL's helpers. */
async function approveAnApplicant(api: string) {
  const keyed = { 'x-auth-service': KEY, 'content-type': 'application/json' }
  const send = (method: string, path: string, body: unknown) =>
    fetch(`${api}${path}`, { method, headers: keyed, body: JSON.stringify(body) })
  const campaign = await send('POST', '/campaigns', {
    campaignName: '20% for 12 months',
    workspaceId: WORKSPACE,
    commissionType: 'percentage',
    amount: 20,
    url: 'https://shop.example.com/',
    requiresApprovalToJoin: true,
  })
  expect(campaign.status).toBe(201)
  const { id: campaignId } = ((await campaign.json()) as { data: { id: string } }).data
  const applicant = await send('POST', '/affiliates', { email: 'ada@example.com', firstName: 'Ada', campaignId })
  expect(applicant.status).toBe(201)
  const { id } = ((await applicant.json()) as { data: { id: string } }).data
  expect((await send('PUT', `/affiliates?affiliateId=${id}`, { isActive: true })).status).toBe(200)
}

describe('npm start sends notifications', () => {
  it('through SMTP (nodemailer) when SMTP_URL is set: the approval reaches the applicant', { timeout: 90_000 }, async () => {
    const mails: { from: string; to: string[]; text: string }[] = []
    const waiting: (() => void)[] = []
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
          for (const wake of waiting.splice(0)) wake()
          done()
        })
      },
    })
    const received = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (mails.length >= count ? resolve() : void waiting.push(check))
        check()
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
        AFFILIATE_PROGRAM_NAME: 'Acme Partners',
        AFFILIATE_NOTIFY_OWNERS: 'owner@example.com',
      })
      const api = await server.url
      expect(server.output()).toContain(`e-mail to SMTP smtp://127.0.0.1:${smtpPort}`)
      await approveAnApplicant(api)
      // The owner hears of the application, then Ada of her approval.
      await received(2)
      const approval = mails.find((m) => m.to.includes('ada@example.com'))!
      const applied = mails.find((m) => m.to.includes('owner@example.com'))!
      expect(approval.from).toBe('partners@example.com')
      // Headers as sent (they are not quoted-printable); the body decoded.
      const headers = approval.text.slice(0, approval.text.indexOf('\r\n\r\n'))
      const raw = unquote(approval.text)
      expect(headers).toContain('Subject: You are approved: welcome to the Acme Partners affiliate program')
      expect(headers).toMatch(
        new RegExp(`List-Unsubscribe:\\s+<http://127\\.0\\.0\\.1:${port}/portal/unsubscribe\\?id=[0-9a-f-]{36}&token=[\\w-]{43}>`),
      )
      expect(headers).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click')
      expect(headers).toMatch(/Message-ID: <[0-9a-f-]{36}@127\.0\.0\.1>/)
      expect(raw).not.toContain('20% for 12 months approves')
      expect(unquote(applied.text)).toContain('Subject: New affiliate application: ada@example.com')
      server.child.kill('SIGTERM')
      expect(await server.exit).toBe(0)
      expect(mails).toHaveLength(2)
    } finally {
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    }
  })

  it('without SMTP_URL: the development mailbox prints each message and the admin lists it', { timeout: 90_000 }, async () => {
    const port = await freePort()
    const server = start({
      PORT: String(port),
      AFFILIATE_API_KEY: KEY,
      AFFILIATE_WORKSPACE_ID: WORKSPACE,
      AFFILIATE_PORTAL_SECRET: SECRET,
      AFFILIATE_ADMIN_TOKEN: ADMIN_TOKEN,
    })
    const api = await server.url
    expect(server.output()).toContain(`portal at http://127.0.0.1:${port}/portal`)
    expect(server.output()).toContain('e-mail to the development mailbox')
    await approveAnApplicant(api)
    const printed = () => server.output().includes('mail (development mailbox, not sent) to ada@example.com: You are approved')
    await new Promise<void>((resolve) => {
      const check = () => (printed() ? resolve() : server.child.stdout.once('data', check))
      check()
    })
    const origin = `http://127.0.0.1:${port}`
    const admin = browser()
    await admin.go(`${origin}/admin/sign-in`)
    expect((await admin.go(`${origin}/admin/sign-in`, { token: ADMIN_TOKEN })).status).toBe(303)
    const mailbox = await admin.go(`${origin}/admin/settings/mail`)
    expect(mailbox.status).toBe(200)
    // No default campaign and no AFFILIATE_PROGRAM_NAME: the program is named after the campaign applied to.
    expect(mailbox.text).toContain('You are approved: welcome to the 20% for 12 months affiliate program')
    expect(mailbox.text).toContain(`${origin}/portal/unsubscribe?id=`)
    server.child.kill('SIGTERM')
    expect(await server.exit).toBe(0)
  })
})
