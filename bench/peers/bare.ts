// The ceiling: bare node:http answering each route with bytes computed once at start (the answers
// the other servers give, the link as after its first tracked click). No key, no limit, no
// validation, no storage: what answering over HTTP costs at all on this machine.
import { createServer } from 'node:http'
import { JSON_TYPE, listen, MESSAGES, WORKSPACE, type Fixture, type Running } from './common.js'
import type { Store } from './store.js'

export async function startBare(store: Store, fixture: Fixture): Promise<Running> {
  const answer = (message: string, data: unknown) => Buffer.from(JSON.stringify({ status: 200, message, data }))
  const answers = new Map<string, Buffer>([
    ['GET /api/v1/campaigns', answer(MESSAGES.campaign, await store.campaign([WORKSPACE], fixture.campaignId))],
    ['GET /api/v1/commissions/list', answer(MESSAGES.commissions, await store.commissions([WORKSPACE], { page: 2, limit: 10 }))],
    ['POST /api/v1/links/track', answer(MESSAGES.track, await store.track([WORKSPACE], fixture.referralCode, 'click'))],
  ])
  const missing = Buffer.from(JSON.stringify({ status: 404, code: 'endpoint_not_found', message: 'Endpoint not found' }))
  const server = createServer((req, res) => {
    const url = req.url ?? '/'
    const query = url.indexOf('?')
    const body = answers.get(`${req.method} ${query === -1 ? url : url.slice(0, query)}`)
    res.writeHead(body ? 200 : 404, { 'content-type': JSON_TYPE, 'content-length': (body ?? missing).length })
    res.end(body ?? missing)
  })
  return listen(server)
}
