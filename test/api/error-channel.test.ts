// One error channel: every error a host should see reaches `onError(error, context)`, with
// `context.source` saying where it came from, and nothing else in the library writes to the
// console (checked over the sources, so a console.error cannot come back unnoticed).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, sqlJsStorage, type ErrorContext, type Storage } from '../../src/index.js'
import { resultForStatus } from '../../src/webhooks/delivery.js'
import { apiCampaignInput, KEY_A, USER_A, WS_A } from '../support/helpers.js'

interface Reported {
  error: unknown
  context: ErrorContext
}

/** A service whose onError resolves `next()` with the next error reported. */
function make(options: { storage?: Storage; webhooks?: Parameters<typeof createAffiliateService>[0]['webhooks'] } = {}) {
  const reported: Reported[] = []
  let waiting: ((report: Reported) => void) | undefined
  const service = createAffiliateService({
    storage: options.storage ?? memoryStorage(),
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    rateLimit: false,
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    onError: (error, context) => {
      reported.push({ error, context })
      waiting?.({ error, context })
    },
  })
  const next = () => new Promise<Reported>((resolve) => (waiting = resolve))
  return { service, reported, next }
}

let consoleError: MockInstance
beforeEach(() => {
  consoleError = vi.spyOn(console, 'error')
})
afterEach(() => {
  // The host's onError got the error: nothing went to the console beside it.
  expect(consoleError).not.toHaveBeenCalled()
  consoleError.mockRestore()
})

describe('onError(error, context)', () => {
  it('gets a request error with the request', async () => {
    const failing: Storage = { transaction: () => Promise.reject(new Error('the database is down')) }
    const { service, reported } = make({ storage: failing })
    const response = await service.fetch(new Request('http://x/api/v1/campaigns/list', { headers: { 'x-auth-service': KEY_A } }))
    expect(response.status).toBe(500)
    expect(reported).toHaveLength(1)
    expect(reported[0]!.error).toEqual(new Error('the database is down'))
    const context = reported[0]!.context
    expect(context.source).toBe('request')
    expect(context.source === 'request' && new URL(context.request.url).pathname).toBe('/api/v1/campaigns/list')
  })

  it('gets an events.on listener that throws or rejects, with the event', async () => {
    const { service, next } = make()
    service.events.on('campaign.created', () => {
      throw new Error('listener threw')
    })
    let reported = next()
    const campaign = await service.api.campaigns.create(apiCampaignInput())
    expect((await reported).error).toEqual(new Error('listener threw'))
    expect((await reported).context).toEqual({
      source: 'listener',
      event: expect.objectContaining({ type: 'campaign.created', data: campaign }),
    })

    service.events.on('campaign.updated', async () => {
      throw new Error('listener rejected')
    })
    reported = next()
    await service.api.campaigns.update(campaign.id, { campaignName: 'renamed' })
    expect((await reported).error).toEqual(new Error('listener rejected'))
    expect((await reported).context.source).toBe('listener')
  })

  it('gets the dispatcher failing in the background', async () => {
    const inner = memoryStorage()
    let broken = false
    // The storage fails the dispatcher's look for due deliveries once asked to.
    const storage: Storage = {
      transaction: (work, options) =>
        inner.transaction((tx) => {
          if (!broken) return work(tx)
          const failing = Object.create(tx) as typeof tx
          failing.find = (() => Promise.reject(new Error('lost the connection'))) as typeof tx.find
          return work(failing)
        }, options),
    }
    const { service, next } = make({ storage, webhooks: { send: async () => resultForStatus(200, 1, ''), pollMs: 3_600_000 } })
    await service.api.webhooks.create({ workspaceId: WS_A, url: 'https://hooks.example.com/in', events: ['*'] })
    const reported = next()
    broken = true
    service.events.start()
    try {
      expect(await reported).toEqual({ error: new Error('lost the connection'), context: { source: 'dispatcher' } })
    } finally {
      broken = false
      await service.events.stop()
    }
  })

  describe('the Node adapter', () => {
    const servers: RunningServer[] = []
    afterAll(async () => {
      for (const server of servers) await server.close()
    })

    it("reports its own errors to the service's onError, with the request", async () => {
      const { service, next } = make()
      // A service whose fetch throws (as a host's wrapper around it might): the adapter answers 500.
      const throwing = { fetch: () => Promise.reject(new Error('fetch threw')), onError: service.onError }
      const running = await serve(throwing, { port: 0, webhooks: false })
      servers.push(running)
      const reported = next()
      const answer = await fetch(`${running.url}/campaigns/list`)
      expect(answer.status).toBe(500)
      const { error, context } = await reported
      expect(error).toEqual(new Error('fetch threw'))
      expect(context.source).toBe('adapter')
      expect(context.source === 'adapter' && new URL(context.request!.url).pathname).toBe('/api/v1/campaigns/list')
    })
  })

  describe('a sql.js file database', () => {
    const root = mkdtempSync(join(tmpdir(), 'affiliate-error-channel-'))
    afterAll(() => rmSync(root, { recursive: true, force: true }))

    it('reports a checkpoint that fails (the journal would grow unseen), and folds again once it can', async () => {
      const file = join(root, 'affiliate.sqlite')
      // Fold the journal as soon as it is as large as the file.
      const storage = sqlJsStorage({ persist: fileJournal(file), checkpointBytes: 1 })
      const { next, reported: all } = make({ storage })
      await storage.ready()
      const fileBytes = statSync(file).size
      // The snapshot being written cannot be made: as a full disk would, the write fails.
      mkdirSync(`${file}.tmp`)
      const reported = next()
      const big = (id: string) =>
        storage.transaction((tx) =>
          tx.insert('settings', {
            id,
            value: 'x'.repeat(fileBytes),
            createdAt: '2026-01-01T00:00:00.000Z',
            updatedAt: '2026-01-01T00:00:00.000Z',
          }),
        )
      await big('first')
      const { error, context } = await reported
      expect(context).toEqual({ source: 'storage' })
      expect(String(error)).toMatch(/folding the journal into the database file failed/)
      expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('EISDIR')
      // The write itself stood (it is in the journal), and a later fold succeeds once the disk allows.
      rmSync(`${file}.tmp`, { recursive: true })
      await big('second')
      await storage.close()
      expect(all).toHaveLength(1)
      const reopened = sqlJsStorage({ persist: fileJournal(file) })
      expect(await reopened.transaction((tx) => tx.count('settings', { where: { id: { in: ['first', 'second'] } } }))).toBe(2)
      await reopened.close()
    })
  })
})

describe('no console output in library code but the default onError', () => {
  const root = join(import.meta.dirname, '..', '..')
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    )

  it('src/ and adapters/ call console.* only in defaultOnError (src/on-error.ts)', () => {
    const calls: string[] = []
    for (const file of [...files(join(root, 'src')), ...files(join(root, 'adapters'))]) {
      const lines = readFileSync(file, 'utf8').split('\n')
      for (const [i, line] of lines.entries()) {
        const code = line.trim()
        // Comments (JSDoc examples show console.log) are not code.
        if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) continue
        if (/\bconsole\s*[.[]/.test(code)) calls.push(`${relative(root, file)}:${i + 1}: ${code}`)
      }
    }
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatch(/^src\/on-error\.ts:\d+: export const defaultOnError: OnError = \(error, context\) => console\.error\(/)
  })
})
