import { describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { jobRunner, periodicJob, type BackgroundJob } from '../../src/jobs.js'
import { apiCampaignInput, KEY_A, manualClock, USER_A, WS_A } from '../support/helpers.js'

// service.start() / service.close() own the background work (issue 39): webhook delivery, click
// writing, click pruning, and whatever joins the job list.

function make(options: { send?: boolean } = {}) {
  const errors: unknown[] = []
  const sent: string[] = []
  const storage = memoryStorage()
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    clock: manualClock(),
    rateLimit: false,
    clickFlushMs: 60_000,
    onError: (error) => errors.push(error),
    ...(options.send
      ? {
          webhooks: {
            send: async (request: { url: string }) => {
              sent.push(request.url)
              return { outcome: 'success' as const, status: 204, durationMs: 1, responseBody: '' }
            },
          },
        }
      : {}),
  })
  return { service, storage, errors, sent }
}

describe('service.start() and service.close()', () => {
  it('start() without a webhook sender says once that delivery is not started; the rest starts', async () => {
    const { service, errors } = make()
    service.start()
    service.start()
    expect(service.events.running).toBe(false)
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toMatch(/Webhook delivery not started: no sender/)
    await service.close()
  })

  it('close() writes the clicks waiting, stops the dispatcher, and resolves once all is written; start() starts again', async () => {
    const { service, storage, errors, sent } = make({ send: true })
    service.start()
    expect(service.events.running).toBe(true)
    const campaign = await service.api.campaigns.create(apiCampaignInput())
    const affiliate = await service.api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    await service.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2026' })
    const redirect = await service.fetch(
      new Request('http://shop.test/api/v1/r/ANN-2026', { headers: { 'user-agent': 'Mozilla/5.0 Firefox/130.0' } }),
    )
    expect(redirect.status).toBe(302)
    // clickFlushMs is a minute: the click waits in its batch until close() writes it.
    expect(await storage.transaction((tx) => tx.count('clicks', {}))).toBe(0)
    await service.close()
    expect(await storage.transaction((tx) => tx.count('clicks', {}))).toBe(1)
    expect(service.events.running).toBe(false)
    service.start()
    expect(service.events.running).toBe(true)
    await service.close()
    expect(errors).toEqual([])
    expect(sent).toEqual([])
  })

  it('start({ webhooks: false }) starts the rest and no delivery, and reports nothing', async () => {
    const { service, errors } = make()
    service.start({ webhooks: false })
    expect(service.events.running).toBe(false)
    await service.close()
    expect(errors).toEqual([])
  })
})

describe('the job list', () => {
  it('a periodic job runs at start, again at once while it has more to do, and close() waits for the run under way', async () => {
    let runs = 0
    let release!: () => void
    const third = new Promise<void>((resolve) => (release = resolve))
    let reachedThird!: () => void
    const atThird = new Promise<void>((resolve) => (reachedThird = resolve))
    const job = periodicJob(
      'test',
      3_600_000,
      async () => {
        runs++
        if (runs === 3) {
          reachedThird()
          await third
          return false
        }
        return true
      },
      (error) => {
        throw error
      },
    )
    job.start({})
    await atThird
    let closed = false
    const closing = job.close().then(() => (closed = true))
    await Promise.resolve()
    expect(closed).toBe(false)
    release()
    await closing
    expect(runs).toBe(3)
  })

  it('closes every job in order even when one fails, then throws the first failure', async () => {
    const order: string[] = []
    const job = (name: string, fails = false): BackgroundJob => ({
      name,
      start: () => void order.push(`start ${name}`),
      close: async () => {
        order.push(`close ${name}`)
        if (fails) throw new Error(`${name} failed`)
      },
    })
    const runner = jobRunner([job('a'), job('b', true), job('c')])
    runner.start()
    runner.start()
    await expect(runner.close()).rejects.toThrow('b failed')
    expect(order).toEqual(['start a', 'start b', 'start c', 'close a', 'close b', 'close c'])
  })
})
