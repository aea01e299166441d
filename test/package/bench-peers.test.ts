// The peer benchmark (`npm run bench -- peers`) compares our service with Hono, Express and bare
// node:http peers on three routes. Each must answer those routes with exactly our bytes, or the
// comparison would drift into measuring different work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY, ROUTES, SERVERS, requestHeaders, type Fixture, type Running, type ServerName } from '../../bench/peers/common.js'
import { startServer } from '../../bench/peers/servers.js'
import { seed, type Store } from '../../bench/peers/store.js'

const servers = new Map<ServerName, Running & { fixture: Fixture; store: Store }>()

beforeAll(async () => {
  const shared = await seed()
  for (const name of SERVERS) servers.set(name, await startServer(name, shared))
})

afterAll(async () => {
  await Promise.all([...servers.values()].map((running) => running.close()))
})

async function call(name: ServerName, route: (typeof ROUTES)[number], headers: Record<string, string> = requestHeaders) {
  const running = servers.get(name)!
  const response = await fetch(running.origin + route.path(running.fixture), {
    method: route.method,
    headers,
    ...(route.body ? { body: route.body(running.fixture) } : {}),
  })
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() }
}

describe('bench peers answer our bytes', () => {
  for (const route of ROUTES) {
    it(route.name, async () => {
      const ours = await call('ours', route)
      expect(ours.status).toBe(200)
      expect(JSON.parse(ours.body).data).toBeTruthy()
      for (const peer of SERVERS.filter((name) => name !== 'ours')) {
        const answer = await call(peer, route)
        expect({ peer, status: answer.status, body: answer.body }).toEqual({ peer, status: ours.status, body: ours.body })
        expect(answer.type?.startsWith('application/json')).toBe(true)
      }
    })
  }

  it('every server counts a tracked event in the report rollups as ours does', async () => {
    const track = ROUTES.find((route) => route.method === 'POST')!
    // Clicks per level (affiliate, campaign, workspace), its hour and day rows summed: the same whichever hour each request fell in.
    const clicksOf = async (name: ServerName) => {
      const rows = await servers.get(name)!.store.storage.transaction((tx) => tx.find('rollups', {}))
      const sums: Record<string, number> = {}
      for (const row of rows) {
        const level = row.id.slice(0, row.id.lastIndexOf('|'))
        sums[level] = (sums[level] ?? 0) + row.clicks
      }
      return sums
    }
    const before = await clicksOf('ours')
    for (const name of SERVERS) expect({ name, status: (await call(name, track)).status }).toEqual({ name, status: 200 })
    const ours = await clicksOf('ours')
    expect(ours).not.toEqual(before)
    for (const peer of SERVERS.filter((name) => name !== 'ours' && name !== 'bare'))
      expect({ peer, rows: await clicksOf(peer) }).toEqual({ peer, rows: ours })
  })

  it('the keyed peers refuse a wrong key and a bad query as ours does', async () => {
    const [byId] = ROUTES
    for (const name of ['ours', 'hono', 'express'] as const) {
      const wrongKey = await call(name, byId!, { 'x-auth-service': `${KEY}-wrong` })
      expect({ name, status: wrongKey.status, body: wrongKey.body }).toEqual({
        name,
        status: 401,
        body: JSON.stringify({
          status: 401,
          code: 'invalid_api_key',
          message:
            'Invalid API key. Please check your API key and try again. Send it in the x-auth-service header (or as Authorization: Bearer <key>).',
        }),
      })
      const running = servers.get(name)!
      const badQuery = await fetch(`${running.origin}/api/v1/campaigns?campaignId=nope`, { headers: requestHeaders })
      expect({ name, status: badQuery.status }).toEqual({ name, status: 400 })
      expect((await badQuery.json()).errors[0].path).toBe('campaignId')
    }
  })
})
