import { Router, type IRequest } from 'itty-router'
import { accessOf } from '../api/access.js'
import { createOperations, type Operations } from '../api/index.js'
import { isoAt, type Clock } from '../clock.js'
import { AffiliateError, refusal } from '../errors.js'
import type { KeyStore, Principal } from '../keys/types.js'
import type { Limiter } from '../limiter/limiter.js'
import { deliverThenRelease } from '../limiter/hold-until-delivered.js'
import type { Storage } from '../storage/types.js'
import { readJsonBody } from './body.js'
import { checkIdempotencyKey, createIdempotency, IDEMPOTENCY_HEADER, type IdempotencyOptions } from './idempotency.js'
import { incomingOf, type Incoming } from './incoming.js'
import { errorReply, jsonReply, success, type Reply } from './respond.js'
import { routes, type Route } from './routes.js'
import { queryOf, targetOf, type Target } from './target.js'

export const BASE_PATH = '/api/v1'
export const SERVICE_NAME = 'affiliate-service'

export interface HandlerOptions {
  ops: Operations
  /** The storage the operations use: idempotent requests also keep their answers there. */
  storage: Storage
  idempotency: IdempotencyOptions
  keyStore: KeyStore
  clock: Clock
  maxBodyBytes: number
  /** Admits each keyed request per `principal.keyId`; `noLimiter` when limiting is off. */
  limiter: Limiter
  onError: (error: unknown, request: Request) => void
}

export interface Handler {
  /** Answers a web Request with a web Response. */
  fetch(request: Request): Promise<Response>
  /** Answers an Incoming with a Reply: the same answer, with no web objects on the way. */
  reply(incoming: Incoming): Promise<Reply>
}

/** Answers one request to one route; throws AffiliateErrors for the caller to answer. */
type Serve = (incoming: Incoming, target: Target) => Promise<Reply>

/** What itty-router is handed: the fields it reads, and the Incoming beside them. */
interface Routed extends IRequest {
  incoming: Incoming
}

const unauthorized = () => refusal(401, 'Invalid API key. Please check your API key and try again.')
const endpointNotFound = () => refusal(404, 'Endpoint not found')

/**
 * The handler: health, then key check, then the rate limit, then the route's operation, every
 * failure through `errorReply`. Routes are itty-router routes; since every path is static, a
 * request whose path is exactly a route's finds it in a Map first, and only other paths (a
 * trailing slash, an unknown path, a wrong method) walk itty-router's list.
 */
export function createHandler(options: HandlerOptions): Handler {
  const { ops, keyStore, clock, maxBodyBytes, limiter, onError } = options
  const idempotency = createIdempotency(options.storage, clock, options.idempotency)

  const fail = (error: unknown, incoming: Incoming): Reply => {
    if (!(error instanceof AffiliateError)) onError(error, incoming.request())
    return errorReply(error)
  }

  const answer = async (route: Route, incoming: Incoming, target: Target, principal: Principal): Promise<Reply> => {
    const idempotencyKey = route.method === 'POST' ? incoming.header(IDEMPOTENCY_HEADER) : null
    if (idempotencyKey !== null) checkIdempotencyKey(idempotencyKey)
    const hasBody = route.method === 'POST' || route.method === 'PUT'
    const body = hasBody ? await readJsonBody(incoming, maxBodyBytes) : undefined
    const call = { access: accessOf(principal), query: queryOf(target.search), body }
    const status = route.status ?? (route.method === 'POST' ? 201 : 200)
    if (idempotencyKey === null) return success(status, route.message, await route.run(ops, call))
    return idempotency.run({
      keyId: principal.keyId,
      key: idempotencyKey,
      fingerprint: `${route.method} ${target.path}${target.search}\n${JSON.stringify(body)}`,
      envelope: (data) => ({ status, body: JSON.stringify({ status, message: route.message, data }) }),
      execute: (storage) => route.run(createOperations({ storage, clock }), call),
    })
  }

  const health: Serve = async () => jsonReply(200, { status: 'ok', service: SERVICE_NAME, timestamp: isoAt(clock) })

  const keyed =
    (route: Route): Serve =>
    async (incoming, target) => {
      const key = incoming.header('x-auth-service')
      const principal = key ? await keyStore.resolve(key) : null
      if (!principal) throw unauthorized()
      // From here on every answer, error or not, carries the key's RateLimit headers.
      const admission = await limiter.admit(principal.keyId)
      return admission.hold(
        () => answer(route, incoming, target, principal).catch((error) => fail(error, incoming)),
        (error) => onError(error, incoming.request()),
      )
    }

  /** Full path -> method -> serve, for the exact-path look-up. */
  const exact = new Map<string, Map<string, Serve>>()
  const router = Router<Routed, [Incoming]>({ base: BASE_PATH })
  const add = (method: Route['method'], path: string, serve: Serve) => {
    const methods = exact.get(BASE_PATH + path) ?? new Map<string, Serve>()
    methods.set(method, serve)
    exact.set(BASE_PATH + path, methods)
    router[method.toLowerCase()]!(path, (request: Routed, incoming: Incoming) => serve(incoming, targetOf(request.url)))
  }
  add('GET', '/health', health)
  for (const route of routes) add(route.method, route.path, keyed(route))

  router.all('*', (request: Routed) => {
    const path = targetOf(request.url).path.slice(BASE_PATH.length).replace(/\/+$/, '')
    const methods = exact.get(BASE_PATH + path)
    if (!methods) throw endpointNotFound()
    throw refusal(405, 'Method not allowed', undefined, { allow: [...methods.keys()].join(', ') })
  })

  async function reply(incoming: Incoming): Promise<Reply> {
    try {
      const target = targetOf(incoming.url)
      const serve = exact.get(target.path)?.get(incoming.method)
      if (serve) return await serve(incoming, target)
      // itty-router needs an absolute URL; the origin plays no part in routing.
      const url = incoming.url.charCodeAt(0) === 47 ? `http://localhost${incoming.url}` : incoming.url
      const routed: Reply | undefined = await router.fetch({ method: incoming.method, url, incoming } as Routed, incoming)
      return routed ?? errorReply(endpointNotFound())
    } catch (error) {
      return fail(error, incoming)
    }
  }

  return {
    reply,
    async fetch(request) {
      const answered = await reply(incomingOf(request))
      const init = { status: answered.status, headers: answered.headers }
      if (!answered.done) return new Response(answered.body, init)
      // The in-flight slot is held until the body has been read (or the client has gone).
      return deliverThenRelease(request, answered.body, (body) => new Response(body, init), answered.done)
    },
  }
}
