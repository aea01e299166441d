import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express4 from 'express4'
import express5 from 'express5'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { expressAdapter } from '../../adapters/express.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { campaignInput, KEY_A, USER_A, WS_A } from '../support/helpers.js'

// A host on Express calls nothing by hand: `expressAdapter(service)` starts the service's
// background work (issue 39), so webhooks are delivered, here to a receiver on 127.0.0.1; and
// `service.close()` ends it all, the dispatcher included.

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function listen(server: Server): Promise<number> {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

/** A receiver on 127.0.0.1: `next()` resolves with the next delivery's body and headers. */
async function receiver() {
  const waiting: ((delivery: { body: string; headers: Record<string, string> }) => void)[] = []
  const port = await listen(
    createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        res.writeHead(204).end()
        waiting.shift()?.({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> })
      })
    }),
  )
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    next: () => new Promise<{ body: string; headers: Record<string, string> }>((resolve) => waiting.push(resolve)),
  }
}

type Express = typeof express5
const majors: [string, Express][] = [
  ['Express 4', express4 as unknown as Express],
  ['Express 5', express5],
]

describe.each(majors)('%s: a host that starts nothing by hand', (_name, express) => {
  it('gets its webhooks delivered, and service.close() stops the delivery', async () => {
    const errors: unknown[] = []
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      rateLimit: false,
      // Development mode, for a receiver on 127.0.0.1 over http; no sender given: the adapter's is used.
      webhooks: { allowHttp: true, allowPrivateAddresses: true },
      onError: (error) => errors.push(error),
    })
    const app = express()
    app.use('/affiliates', expressAdapter(service))
    const base = `http://127.0.0.1:${await listen(app.listen(0, '127.0.0.1'))}/affiliates/api/v1`
    const call = async (path: string, body: unknown) => {
      const response = await fetch(base + path, {
        method: 'POST',
        headers: { 'x-auth-service': KEY_A, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return (await response.json()).data
    }

    expect(service.events.running).toBe(true)
    const hook = await receiver()
    const webhook = await call('/webhooks', { workspaceId: WS_A, url: hook.url, events: ['campaign.created'] })
    const delivered = hook.next()
    const campaign = await call('/campaigns', campaignInput())
    const { body, headers } = await delivered
    new Webhook(webhook.secret).verify(body, headers)
    expect(JSON.parse(body)).toMatchObject({ type: 'campaign.created', workspaceId: WS_A, data: { id: campaign.id } })

    await service.close()
    expect(service.events.running).toBe(false)
    expect(errors).toEqual([])
  })
})
