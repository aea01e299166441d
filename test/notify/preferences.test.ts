// Notifications' delivery rules and people's choices (SPEC wave 4, "Notifications"): a failing
// `send` retried with backoff without failing the change; the signed unsubscribe link (works once,
// cannot be forged, no sign-in); the affiliate's choices in the portal and the daily digest; the
// owner's per-campaign switches and addresses in the admin, and the development mailbox.
import { describe, expect, it } from 'vitest'
import { developmentMailbox, type NotificationMessage, type NotifyOptions } from '../../src/index.js'
import { RETRY_DELAYS_MS } from '../../src/notifications/sender.js'
import { ORIGIN, portalSetup, signIn, visitor, WS } from '../support/portal-support.js'

const ADMIN = { userId: 'owner', workspaceIds: [WS] }

async function program(notify: Partial<NotifyOptions> = {}) {
  const mails: NotificationMessage[] = []
  const setup = portalSetup({
    notify: { send: (m) => void mails.push(m), owners: ['owner@example.com'], ...notify },
    admin: { authorize: async () => ADMIN },
  })
  const { api, service, clock } = setup
  const campaign = await api.campaigns.create({
    workspaceId: WS,
    campaignName: 'Acme Partners',
    commissionType: 'fixed',
    amount: 10,
    url: 'https://shop.example.com',
    currency: 'USD',
    isDefault: true,
    payoutTerm: 0,
    minimumPayoutAmount: 0,
  })
  const ann = await api.affiliates.create({ email: 'ann@example.com', firstName: 'Ann', campaignId: campaign.id })
  let n = 0
  const sale = (amount = '12.00') =>
    api.commissions.create({
      campaignId: campaign.id,
      affiliateId: ann.id,
      referredUser: `buyer${++n}@example.com`,
      amount,
      commissionDate: new Date(clock.now()).toISOString(),
    })
  return { ...setup, mails, campaign, ann, sale, jobs: service.notifications! }
}

describe('a failing send', () => {
  it('never fails the change, goes to onError, and is retried with backoff until it goes', async () => {
    let failures = 2
    const t = await program({
      send: (m) => {
        if (failures-- > 0) throw new Error('SMTP 451 try again later')
        t.mails.push(m)
      },
    })
    const made = await t.sale()
    expect(made.amount).toBe('12.00')
    expect(await t.jobs.flush()).toBe(1)
    expect(t.mails).toEqual([])
    expect(t.errors).toHaveLength(1)
    expect(String(t.errors[0])).toContain('SMTP 451')
    // Not due again before its backoff.
    t.clock.advance(RETRY_DELAYS_MS[0] - 1)
    expect(await t.jobs.flush()).toBe(0)
    t.clock.advance(1)
    expect(await t.jobs.flush()).toBe(1)
    expect(t.errors).toHaveLength(2)
    t.clock.advance(RETRY_DELAYS_MS[1])
    expect(await t.jobs.flush()).toBe(1)
    expect(t.mails.map((m) => m.subject)).toEqual(['You earned $12.00 with Acme Partners'])
    t.clock.advance(RETRY_DELAYS_MS[5] * 2)
    expect(await t.jobs.flush()).toBe(0)
    expect(t.mails).toHaveLength(1)
  })

  it('gives up after the last retry (dead), and sends nothing more', async () => {
    const t = await program({ send: () => Promise.reject(new Error('mailbox unavailable')) })
    await t.sale()
    let attempts = 0
    for (;;) {
      const handled = await t.jobs.flush()
      if (handled === 0 && attempts > RETRY_DELAYS_MS.length) break
      attempts += handled
      t.clock.advance(RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]!)
    }
    expect(attempts).toBe(RETRY_DELAYS_MS.length + 1)
    expect(t.errors).toHaveLength(RETRY_DELAYS_MS.length + 1)
  })
})

describe('the unsubscribe link', () => {
  const linkOf = (m: NotificationMessage) => /^<(.+)>$/.exec(m.headers['List-Unsubscribe']!)![1]!

  it('works once, without signing in, and turns that kind off for that affiliate only', async () => {
    const t = await program()
    await t.sale()
    await t.jobs.flush()
    const link = linkOf(t.mails[0]!)
    expect(link.startsWith(`${ORIGIN}/portal/unsubscribe?id=`)).toBe(true)
    const browser = visitor(t)
    // Opening it (a link scanner may) changes nothing: the page asks.
    const page = await browser.get(link)
    expect(page.status).toBe(200)
    expect(page.text).toContain('Stop these e-mails')
    await t.sale('3.00')
    await t.jobs.flush()
    expect(t.mails).toHaveLength(2)
    // The one-click POST of RFC 8058: no cookie, no CSRF token.
    const once = await t.service.fetch(
      new Request(link, {
        method: 'POST',
        body: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    expect(once.status).toBe(200)
    expect(await once.text()).toContain('You are unsubscribed')
    const twice = await t.service.fetch(new Request(link, { method: 'POST' }))
    expect(twice.status).toBe(410)
    await t.sale('4.00')
    expect(await t.jobs.flush()).toBe(1)
    expect(t.mails).toHaveLength(2)
    // Other kinds still reach her: a payout paid.
    await t.api.affiliates.update(t.ann.id, { payoutMethod: 'PAYPAL', payoutEmail: 'ann@example.com' })
    const { payouts } = await t.api.payouts.run({ workspaceId: WS })
    await t.api.payouts.update(payouts[0]!.payoutId, { status: 'processing' })
    await t.api.payouts.update(payouts[0]!.payoutId, { status: 'paid' })
    await t.jobs.flush()
    expect(t.mails.map((m) => m.kind)).toEqual(['commission.earned', 'commission.earned', 'payout.paid'])
  })

  it('cannot be forged: another token, another id, or a changed character is refused and changes nothing', async () => {
    const t = await program()
    await t.sale()
    await t.sale('2.00')
    await t.jobs.flush()
    const [first, second] = t.mails.map(linkOf)
    const url = new URL(first!)
    const id = url.searchParams.get('id')!
    const token = url.searchParams.get('token')!
    const otherToken = new URL(second!).searchParams.get('token')!
    const flipped = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`
    for (const forged of [
      `${ORIGIN}/portal/unsubscribe?id=${id}&token=${otherToken}`,
      `${ORIGIN}/portal/unsubscribe?id=${id}&token=${flipped}`,
      `${ORIGIN}/portal/unsubscribe?id=${id}`,
      `${ORIGIN}/portal/unsubscribe?id=99999999-9999-4999-8999-999999999999&token=${token}`,
    ]) {
      expect((await t.service.fetch(new Request(forged, { method: 'POST' }))).status).toBe(404)
      expect((await t.service.fetch(new Request(forged))).status).toBe(404)
    }
    await t.sale('5.00')
    expect(await t.jobs.flush()).toBe(1)
    expect(t.mails).toHaveLength(3)
  })
})

describe('choices', () => {
  it('the portal: kinds off and commission e-mails as one daily digest', async () => {
    const t = await program()
    const browser = await signIn(t, 'ann@example.com')
    const dashboard = await browser.get('/portal')
    expect(dashboard.text).toContain('id="notifications"')
    expect(dashboard.text).toMatch(/id="notify-commission\.earned" name="on" value="commission\.earned" checked/)
    const saved = await browser.post('/portal/notifications', { on: 'commission.earned', digest: 'yes' })
    expect(saved.status).toBe(303)
    const again = await browser.get('/portal')
    expect(again.text).toMatch(/id="notify-payout\.paid" name="on" value="payout\.paid">/)
    expect(again.text).toMatch(/id="digest-yes" name="digest" value="yes" checked/)
    // A refused form: no digest choice sent.
    expect((await browser.post('/portal/notifications', { on: 'commission.earned' })).status).toBe(400)

    await t.sale('12.00')
    t.clock.advance(3_600_000)
    await t.sale('7.50')
    expect(await t.jobs.flush()).toBe(2)
    expect(t.mails).toEqual([])
    // At the end of the UTC day, one message lists both.
    t.clock.set(Date.UTC(2026, 0, 2))
    expect(await t.jobs.flush()).toBe(1)
    expect(t.mails).toHaveLength(1)
    expect(t.mails[0]!.subject).toBe('Your Acme Partners commissions of 2026-01-01: $19.50')
    expect(t.mails[0]!.text).toContain('• $12.00 (buyer1@example.com), 2026-01-01')
    expect(t.mails[0]!.text).toContain('• $7.50 (buyer2@example.com), 2026-01-01')
    expect(await t.jobs.flush()).toBe(0)
  })

  it('the admin: a campaign turns a kind off; owners set in Settings → E-mail; the development mailbox lists messages', async () => {
    const mailbox = developmentMailbox()
    const t = await program({ send: undefined, owners: undefined, mailbox } as Partial<NotifyOptions>)
    const admin = visitor(t)
    const page = await admin.get(`/admin/campaigns/notifications?campaignId=${t.campaign.id}`)
    expect(page.status).toBe(200)
    expect(page.text).toMatch(/value="affiliate\.rejected">/)
    const kinds = ['affiliate.approved', 'payout.paid', 'clawback.created', 'affiliate.applied']
    const body = new URLSearchParams(kinds.map((k) => ['sends', k]))
    body.append('csrf', admin.csrf())
    const cookie = [...admin.jar].map(([n, v]) => `${n}=${v}`).join('; ')
    const saved = await t.service.fetch(
      new Request(`${ORIGIN}/admin/campaigns/notifications?campaignId=${t.campaign.id}`, {
        method: 'POST',
        body,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    expect(saved.status).toBe(303)
    await t.sale()
    expect(await t.jobs.flush()).toBe(1)
    expect(mailbox.messages()).toEqual([])

    // No owner address yet: an applicant's notice is skipped; once set, the next one goes.
    await t.api.campaigns.update(t.campaign.id, { requiresApprovalToJoin: true })
    await t.api.affiliates.create({ email: 'bob@example.com', campaignId: t.campaign.id })
    await t.jobs.flush()
    expect(mailbox.messages()).toEqual([])
    await admin.get('/admin/settings/mail')
    expect((await admin.post('/admin/settings/mail/owners', { owners: 'not-an-address' })).status).toBe(400)
    expect((await admin.post('/admin/settings/mail/owners', { owners: 'me@example.com\nyou@example.com' })).status).toBe(303)
    await t.api.affiliates.create({ email: 'cat@example.com', campaignId: t.campaign.id })
    await t.jobs.flush()
    expect(mailbox.messages().map((m) => [m.to, m.subject])).toEqual([
      ['me@example.com, you@example.com', 'New affiliate application: cat@example.com'],
    ])
    const listed = await admin.get('/admin/settings/mail')
    expect(listed.text).toContain('New affiliate application: cat@example.com')
    expect(listed.text).toContain('me@example.com\nyou@example.com')
  })
})
