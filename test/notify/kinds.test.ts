// Every kind of notification (SPEC wave 4, "Notifications") on memory and sql.js: written with its
// cause, sent once by the job, to the right person, naming the program, amounts in their currency.
import { describe, expect, it } from 'vitest'
import { memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { causeEveryKind, notifyService } from '../support/notify-support.js'

const storages: [string, () => Storage][] = [
  ['memory', () => memoryStorage()],
  ['sql.js', () => sqlJsStorage()],
]

describe.each(storages)('notifications on %s', (_name, make) => {
  it('sends each of the seven kinds once, to its person, naming the program', async () => {
    const env = notifyService(make())
    const { ann } = await causeEveryKind(env)
    // Ann and Bob both applied: eight messages of seven kinds.
    expect(await env.jobs.flush()).toBe(8)
    expect(env.errors).toEqual([])
    const byKind = Object.fromEntries(env.sent.map((m) => [m.kind, m]))
    expect(Object.keys(byKind).sort()).toEqual([
      'affiliate.applied',
      'affiliate.approved',
      'affiliate.rejected',
      'clawback.created',
      'commission.earned',
      'integration.failing',
      'payout.paid',
    ])
    expect(env.sent).toHaveLength(8)
    expect(
      env.sent
        .filter((m) => m.kind === 'affiliate.applied')
        .map((m) => m.subject)
        .sort(),
    ).toEqual(['New affiliate application: ann@example.com', 'New affiliate application: bob@example.com'])
    expect(byKind['affiliate.approved']!.to).toBe('ann@example.com')
    expect(byKind['affiliate.rejected']!.to).toBe('bob@example.com')
    expect(byKind['affiliate.applied']!.to).toBe('owner@example.com')
    expect(byKind['integration.failing']!.to).toBe('owner@example.com')
    // 1,234.50 EUR, formatted in its currency; the payout's reference; the refund taken back.
    expect(byKind['commission.earned']!.subject).toBe('You earned €1,234.50 with Acme Partners')
    expect(byKind['payout.paid']!.text).toContain('Reference: PP-7781')
    expect(byKind['payout.paid']!.subject).toBe('Acme Partners sent you €1,234.50')
    expect(byKind['clawback.created']!.subject).toBe('A refund took back €100.00 of your Acme Partners earnings')
    for (const message of env.sent) {
      expect(message.from).toBe('Partners <partners@example.com>')
      // The program, never the campaign's name as if it were a company.
      expect(message.subject + message.text).not.toMatch(/20% for 12 months (approves|sent|earnings)/)
      expect(message.headers['Message-ID']).toBe(`<${message.id}@partners.example.com>`)
      const toAffiliate = message.to !== 'owner@example.com'
      expect('List-Unsubscribe' in message.headers).toBe(toAffiliate)
      if (toAffiliate) {
        expect(message.headers['List-Unsubscribe']).toMatch(
          /^<https:\/\/partners\.example\.com\/portal\/unsubscribe\?id=[0-9a-f-]{36}&token=[\w-]{43}>$/,
        )
        expect(message.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click')
      }
    }
    expect(byKind['commission.earned']!.text).toContain('https://partners.example.com/portal')
    expect(byKind['affiliate.applied']!.text).toContain('https://partners.example.com/admin/affiliates?status=pending')
    // Nothing is sent twice: a second flush finds nothing due.
    expect(await env.jobs.flush()).toBe(0)
    expect(env.sent).toHaveLength(8)
    void ann
  })

  it('the running job sends a notice once its change commits, woken by the commit (not the poll)', async () => {
    let heard!: (message: unknown) => void
    const arrived = new Promise((resolve) => (heard = resolve))
    const env = notifyService(make(), { send: (message) => heard(message), pollMs: 3_600_000 })
    const campaign = await env.service.api.campaigns.create({
      workspaceId: '11111111-1111-4111-8111-111111111111',
      campaignName: 'Acme Partners',
      commissionType: 'fixed',
      amount: 5,
      url: 'https://shop.example.com/',
      isDefault: true,
    })
    const ann = await env.service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    env.jobs.start()
    expect(env.jobs.running).toBe(true)
    await env.service.api.commissions.create({
      campaignId: campaign.id,
      affiliateId: ann.id,
      referredUser: 'b@example.com',
      amount: '5.00',
      commissionDate: new Date(env.clock.now()).toISOString(),
    })
    // An hour's poll: only the commit's wake-up can bring it this soon.
    expect(await arrived).toMatchObject({ kind: 'commission.earned', to: 'ann@example.com' })
    await env.jobs.stop()
    expect(env.jobs.running).toBe(false)
  })

  it('a rolled-back change writes no notification', async () => {
    const env = notifyService(make())
    const { commission } = await causeEveryKind(env)
    await env.jobs.flush()
    // Refunding more than is left is refused: no clawback, no message.
    await expect(env.service.api.commissions.refund(commission.commissionId, { amount: '9999.00' })).rejects.toThrow()
    expect(await env.jobs.flush()).toBe(0)
  })
})
