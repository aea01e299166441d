// What every server of the peer benchmark shares: the API key, the routes measured, the limits
// (set where this load never reaches them, so each request pays for being counted and never for
// being refused) and the answers every peer writes the same way.
import { createHash } from 'node:crypto'
import type { Server } from 'node:http'
import type { FieldError } from '../../src/errors.js'
import { routes } from '../../src/http/routes.js'

export const KEY = 'bench-peers-key'
export const WORKSPACE = '11111111-1111-4111-8111-111111111111'
export const USER_ID = '22222222-2222-4222-8222-222222222222'
export const JSON_TYPE = 'application/json; charset=utf-8'

/** Our service's `rateLimit` at limits this load never reaches: each request still takes a token and a slot. */
export const UNREACHED = { capacity: 1_000_000_000, refillPerSecond: 1_000_000_000, maxInFlight: 1_000_000 }
/** The peers' limiters: a window of a second allowing more requests than any run makes. */
export const PEER_LIMIT = { windowMs: 1000, limit: 1_000_000_000 }

export interface Principal {
  keyId: string
  userId: string
  workspaceIds: readonly string[]
}

/** SHA-256 as a peer would write it: node:crypto. */
export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex')

/** The peers' key table: hash of the key -> principal; keys themselves are not kept. */
export function peerKeys(): Map<string, Principal> {
  const hash = sha256Hex(KEY)
  return new Map([[hash, { keyId: hash.slice(0, 12), userId: USER_ID, workspaceIds: [WORKSPACE] }]])
}

/** Our service's key store entries: the same key, user and workspace. */
export const keyEntries = [{ key: KEY, userId: USER_ID, workspaceIds: [WORKSPACE] }]

export const UNAUTHORIZED = {
  status: 401,
  code: 'invalid_api_key',
  message:
    'Invalid API key. Please check your API key and try again. Send it in the x-auth-service header (or as Authorization: Bearer <key>).',
}
export const FORBIDDEN = { status: 403, code: 'forbidden', message: 'You do not have access to this workspace' }
export const RATE_LIMITED = { status: 429, code: 'rate_limited', message: 'Rate limit exceeded. Please retry later.' }
export const notFound = (what: string) => ({ status: 404, code: 'not_found', message: `${what} not found` })
export const validationFailed = (errors: FieldError[]) => ({ status: 400, code: 'validation_error', message: 'Validation error', errors })

const messageOf = (method: string, path: string): string => {
  const route = routes.find((r) => r.method === method && r.path === path)
  if (!route) throw new Error(`bench/peers: the service has no route ${method} ${path}`)
  return route.message
}

/** The envelope's `message` of each measured route, from the service's own route table. */
export const MESSAGES = {
  campaign: messageOf('GET', '/campaigns'),
  commissions: messageOf('GET', '/commissions/list'),
  track: messageOf('POST', '/links/track'),
} as const

/** The ids a route's request needs, read from the server's own seed. */
export interface Fixture {
  campaignId: string
  referralCode: string
}

export interface Route {
  name: string
  method: 'GET' | 'POST'
  path(fixture: Fixture): string
  body?(fixture: Fixture): string
}

export const ROUTES: Route[] = [
  { name: 'GET /campaigns?campaignId= (by id)', method: 'GET', path: (f) => `/api/v1/campaigns?campaignId=${f.campaignId}` },
  { name: 'GET /commissions/list?page=2&limit=10', method: 'GET', path: () => '/api/v1/commissions/list?page=2&limit=10' },
  {
    name: 'POST /links/track (body)',
    method: 'POST',
    path: () => '/api/v1/links/track',
    body: (f) => JSON.stringify({ referralCode: f.referralCode, event: 'click' }),
  },
]

export const requestHeaders = { 'x-auth-service': KEY, 'content-type': 'application/json' }

export const SERVERS = ['ours', 'hono', 'express', 'bare'] as const
export type ServerName = (typeof SERVERS)[number]

/** A server listening on 127.0.0.1. */
export interface Running {
  server: Server
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** How "ours" is served: the Node adapter, or the bench's own bridge when the adapter does not load. */
  note?: string
  close(): Promise<void>
}

/** Starts `server` on a free port of 127.0.0.1. */
export function listen(server: Server, note?: string): Promise<Running> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      const close = () =>
        new Promise<void>((closed) => {
          server.close(() => closed())
          server.closeAllConnections()
        })
      resolve({ server, origin: `http://127.0.0.1:${port}`, ...(note ? { note } : {}), close })
    })
  })
}
