// Every message as it is sent (SPEC wave 4, "Notifications"): subject, recipients, headers, text
// and HTML of each kind, and of the daily digest, written to a snapshot file people read
// (test/notify/__snapshots__/messages.md). Ids and signatures change each run: they are replaced
// by placeholders here, and their shapes are checked in kinds.test.ts.
import { describe, expect, it } from 'vitest'
import { memoryStorage, type NotificationMessage } from '../../src/index.js'
import { WS_A } from '../support/helpers.js'
import { causeEveryKind, notifyService } from '../support/notify-support.js'

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const TOKEN = /token=[\w-]{43}/g

function shown(m: NotificationMessage): string {
  const ids = new Map<string, string>()
  const clean = (text: string) =>
    text
      .replace(UUID, (id) => (ids.has(id) ? ids.get(id)! : (ids.set(id, `<id-${ids.size + 1}>`), ids.get(id)!)))
      .replace(TOKEN, 'token=<signature>')
  return clean(
    [
      `## ${m.kind}`,
      '',
      `- to: ${m.to}`,
      `- from: ${m.from ?? ''}`,
      `- subject: ${m.subject}`,
      ...Object.entries(m.headers).map(([name, value]) => `- ${name}: ${value}`),
      '',
      '```text',
      m.text,
      '```',
      '',
      '```html',
      m.html,
      '```',
      '',
    ].join('\n'),
  )
}

describe('every message', () => {
  it('reads as the snapshot says', async () => {
    const env = notifyService(memoryStorage())
    const { ann, campaign } = await causeEveryKind(env)
    await env.jobs.flush()
    // The daily digest: Ann takes commission e-mails once a day; two commissions, one message.
    await env.prefs.setAffiliate({ id: ann.id, workspaceId: WS_A }, { off: [], digest: true })
    for (const amount of ['40.00', '2.50']) {
      await env.service.api.commissions.create({
        campaignId: campaign.id,
        affiliateId: ann.id,
        referredUser: 'jane.doe@example.com',
        amount,
        commissionDate: new Date(env.clock.now()).toISOString(),
      })
    }
    await env.jobs.flush()
    env.clock.set(Date.UTC(2026, 2, 11))
    await env.jobs.flush()
    const order = [
      'affiliate.applied',
      'affiliate.approved',
      'affiliate.rejected',
      'commission.earned',
      'payout.paid',
      'clawback.created',
      'integration.failing',
    ]
    const messages = [...env.sent].sort(
      (a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || a.to.localeCompare(b.to) || a.subject.localeCompare(b.subject),
    )
    expect(messages).toHaveLength(9)
    await expect(`# Notifications as sent\n\n${messages.map(shown).join('\n')}`).toMatchFileSnapshot('__snapshots__/messages.md')
  })
})
