// Notifications on PostgreSQL (SPEC wave 4, "Notifications"): every kind written with its cause
// and sent once; and two instances on one database sending side by side: each message once.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { createAffiliateService, memoryKeyStore, type NotificationMessage } from '../../src/index.js'
import { apiCampaignInput, WS_A } from '../support/helpers.js'
import { causeEveryKind, notifyService } from '../support/notify-support.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'

describe.skipIf(!postgresUrl)(needs('Notifications on PostgreSQL', POSTGRES_VAR), () => {
  let pool: pg.Pool
  const schemas: string[] = []
  const storage = async () => {
    const schema = uniqueName('notify')
    schemas.push(schema)
    const made = postgresStorage({ pool, schema })
    await made.ready()
    return made
  }

  beforeAll(async () => {
    pool = await testPool(8)
  }, 30_000)
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema)
    await pool.end()
  })

  it('sends each of the seven kinds once', { timeout: 60_000 }, async () => {
    const env = notifyService(await storage())
    await causeEveryKind(env)
    expect(await env.jobs.flush()).toBe(8)
    expect(env.errors).toEqual([])
    expect(new Set(env.sent.map((m) => m.kind)).size).toBe(7)
    expect(env.sent.find((m) => m.kind === 'commission.earned')!.subject).toBe('You earned €1,234.50 with Acme Partners')
    expect(await env.jobs.flush()).toBe(0)
  })

  it('two instances sending at once send each message exactly once', { timeout: 60_000 }, async () => {
    const shared = await storage()
    const sent: { by: string; message: NotificationMessage }[] = []
    const instance = (by: string) =>
      createAffiliateService({
        storage: shared,
        keyStore: memoryKeyStore([]),
        rateLimit: false,
        // A mailer that takes a moment, so the instances' batches overlap.
        notify: {
          send: async (message) => void (await new Promise((resolve) => setTimeout(resolve, 2)), sent.push({ by, message })),
          owners: ['owner@example.com'],
        },
      })
    const [a, b] = [instance('a'), instance('b')]
    const campaign = await a.api.campaigns.create(
      apiCampaignInput({ workspaceId: WS_A, commissionType: 'fixed', amount: 5, isDefault: true }),
    )
    const affiliate = await a.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    const count = 120
    for (let i = 0; i < count; i++) {
      await (i % 2 ? a : b).api.commissions.create({
        campaignId: campaign.id,
        affiliateId: affiliate.id,
        referredUser: `buyer${i}@example.com`,
        amount: '5.00',
        commissionDate: new Date().toISOString(),
      })
    }
    await Promise.all([a.notifications!.flush(), b.notifications!.flush(), a.notifications!.flush(), b.notifications!.flush()])
    const ids = sent.map((s) => s.message.id)
    expect(ids).toHaveLength(count)
    expect(new Set(ids).size).toBe(count)
    const left = await shared.transaction((tx) => tx.count('notifications', { where: { status: 'pending' } }))
    expect(left).toBe(0)
  })
})
