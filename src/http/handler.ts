import { Router, type IRequest } from 'itty-router'
import { accessOf } from '../api/access.js'
import type { OperationsOn } from '../api/index.js'
import { isoAt, type Clock } from '../clock.js'
import { AffiliateError } from '../errors.js'
import type { KeyStore, Principal } from '../keys/types.js'
import type { AddressThrottle } from '../limiter/address-throttle.js'
import type { Admission, Limiter } from '../limiter/limiter.js'
import { runtimeOf, type Runtime } from '../runtime.js'
import type { Storage } from '../storage/types.js'
import { readBody, readJsonBody, type BodyLimits } from './body.js'
import { clientAddressOf } from './client-address.js'
import { checkIdempotencyKey, createIdempotency, fingerprintOf, IDEMPOTENCY_HEADER, type IdempotencyOptions } from './idempotency.js'
import { envelope, errorAnswer, toResponse, type Answer } from './respond.js'
import { routes, runRoute, successStatus, type Query, type Route } from './routes.js'
import { Answered } from '../api/shared.js'
import { BEACON_PATH, REDIRECT_PATH, trackingRoutes, type TrackingRoutesOptions } from './tracking.js'

export const SERVICE_NAME = 'affiliate-service'

export interface HandlerOptions {
  /**
   * The service's one factory of operations: requests run `operations(storage)`, and an
   * idempotent one runs it over a storage that also keeps its answer, so both have the same wiring.
   */
  operations: OperationsOn
  /** The storage the operations use: idempotent requests also keep their answers there. */
  storage: Storage
  idempotency: IdempotencyOptions
  keyStore: KeyStore
  clock: Clock
  body: BodyLimits
  /** Admits each keyed request per `principal.keyId`; `noLimiter` when limiting is off. */
  limiter: Limiter
  /** Counts wrong keys per client address; null when off. */
  failedKeys: AddressThrottle | null
  /** Where the routes are: `/api/v1` unless the host says otherwise. */
  basePath: string
  /** The public redirect and beacon (no API key, limited per client address). */
  tracking: TrackingRoutesOptions
  onError: (error: unknown, request: Request) => void
}

/** A Request as itty-router hands it on: the Request, with the fields the router sets. */
type Routed = Request & IRequest

/** The 401 message: the seed's sentence, then where the key goes. */
export const UNAUTHORIZED_MESSAGE =
  'Invalid API key. Please check your API key and try again. Send it in the x-auth-service header (or as Authorization: Bearer <key>).'
const unauthorized = () => new AffiliateError(401, UNAUTHORIZED_MESSAGE)

/** Where a payment provider posts its events for an integration, under `basePath`. */
export const PROVIDER_EVENTS_PATH = '/integrations/:integrationId/events'

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i

/**
 * The API key of a request: `x-auth-service`, or the token of `Authorization: Bearer <key>`. Both
 * present and different is no key at all (a 401); another `Authorization` scheme (say Basic, from
 * a proxy in front) is not a key and is ignored.
 */
export function apiKeyOf(headers: Headers): string | null {
  const key = headers.get('x-auth-service')
  const authorization = headers.get('authorization')
  if (authorization === null) return key
  const bearer = BEARER.exec(authorization)?.[1]
  if (bearer === undefined) return key
  if (key !== null && key !== bearer) return null
  return bearer
}
const endpointNotFound = () => new AffiliateError(404, 'Endpoint not found', { code: 'endpoint_not_found' })
const methodNotAllowed = (allow: readonly string[]) =>
  new AffiliateError(405, 'Method not allowed', { headers: { allow: allow.join(', ') } })

/** The query string as name -> value, a repeated name -> every value in order, every name an own property. */
function searchQuery(params: URLSearchParams): Query {
  // No prototype: `__proto__` or `constructor` in a query is a field like any other (and refused as unknown).
  const query = Object.create(null) as Query
  for (const [name, value] of params) {
    const seen = query[name]
    query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return query
}

/** A query string holding an empty value: a part ending in `=`, or one without `=` (`?a&b=1`). */
const EMPTY_VALUE = /=(?:&|$)|(?:^|[?&])[^=&]+(?:&|$)/

/**
 * The request's query as `searchQuery` reads it, taken from the one itty-router made while routing
 * (also without a prototype, from the same URLSearchParams). itty-router takes an empty value for
 * "not given yet", so a repeated name whose first value is empty loses it there: a query string
 * holding an empty value is read again.
 */
export function queryOf(request: Request & { query?: Record<string, unknown> }): Query {
  const url = request.url
  const at = url.indexOf('?')
  if (request.query !== undefined && (at < 0 || !EMPTY_VALUE.test(url.slice(at)))) return request.query as Query
  return searchQuery(new URL(url).searchParams)
}

const pathAndQuery = (href: string): string => {
  const url = new URL(href)
  return url.pathname + url.search
}

/** What a `csv` route's operation answers (see `PayoutExport`). */
interface FileAnswer {
  filename: string
  contentType: string
  body: ReadableStream<Uint8Array>
}

/**
 * `body`, calling `done` once when it ends, fails (after `onFailure`: the answer is cut short,
 * which an adapter passes on by closing the connection) or is cancelled.
 */
function untilDone(body: ReadableStream<Uint8Array>, done: () => void, onFailure: (error: unknown) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>
        try {
          chunk = await reader.read()
        } catch (error) {
          done()
          onFailure(error)
          return controller.error(error)
        }
        if (!chunk.done) return controller.enqueue(chunk.value)
        done()
        controller.close()
      },
      cancel(reason) {
        done()
        return reader.cancel(reason)
      },
    },
    { highWaterMark: 0 },
  )
}

/**
 * The request path, one for every request: itty-router finds the route under `basePath`; a keyed
 * route checks the key (wrong keys counted per client address), admits the request under the
 * key's limits, reads and checks the body, runs the operation (through `Idempotency-Key` when
 * sent) and answers; every error becomes an answer in `errorAnswer`. The in-flight slot is given
 * back as soon as the answer is complete (a file's once its stream ends or is cancelled).
 */
export function createHandler(options: HandlerOptions): (request: Request, context?: unknown) => Promise<Response> {
  const { operations, keyStore, clock, limiter, failedKeys, basePath, onError } = options
  const ops = operations(options.storage)
  const idempotency = createIdempotency(options.storage, clock, options.idempotency)

  // Every answer of ours that is a 5xx is reported: an unexpected error, or one the host must fix
  // (a provider's package missing).
  const fail = (error: unknown, request: Request, runtime: Runtime, extra?: Record<string, string>): Response => {
    if (!(error instanceof AffiliateError) || error.status >= 500) onError(error, request)
    return toResponse(errorAnswer(error), extra, runtime)
  }

  /**
   * A keyed route, in one async function (each step it awaits is a promise hop on every request):
   * the key (wrong keys counted per client address), the key's limits, then the body, the
   * operation (through `Idempotency-Key` when sent) and the answer.
   */
  const keyed = (route: Route) => async (request: Routed, context: unknown, runtime: Runtime) => {
    const address = failedKeys ? clientAddressOf(request, context) : undefined
    if (address !== undefined) failedKeys!.check(address)
    const key = apiKeyOf(request.headers)
    const principal = key ? await keyStore.resolve(key, runtime) : null
    // A publishable key is public (it sits in web pages): on a keyed route it is no key at all.
    if (!principal || principal.publishable) {
      if (address !== undefined) failedKeys!.spend(address)
      throw unauthorized()
    }
    // From here on every answer, error or not, carries the key's RateLimit headers.
    const admission = await limiter.admit(principal.keyId, (error) => onError(error, request))
    if (route.answer === 'csv') return file(route, request, principal, admission, runtime)
    try {
      const idempotencyKey = route.method === 'POST' ? request.headers.get(IDEMPOTENCY_HEADER) : null
      if (idempotencyKey !== null) checkIdempotencyKey(idempotencyKey)
      const body = route.method === 'POST' || route.method === 'PUT' ? await readJsonBody(request, options.body) : undefined
      const call = { access: accessOf(principal), query: queryOf(request), body }
      // The operation's answer, or (with Idempotency-Key) the value of its write transaction, which
      // is its answer: its data, sent with the status it chose (`Answered`) or the route's own.
      const answered = (value: unknown) =>
        value instanceof Answered
          ? envelope(value.status, route.message, value.data)
          : envelope(successStatus(route, body), route.message, value)
      const answer: Answer =
        idempotencyKey === null
          ? answered(await runRoute(route, ops, call))
          : await idempotency.run({
              keyId: principal.keyId,
              key: idempotencyKey,
              fingerprint: fingerprintOf(route.method, pathAndQuery(request.url), body),
              envelope: answered,
              execute: (storage) => runRoute(route, operations(storage), call),
            })
      return toResponse(answer, admission.headers, runtime)
    } catch (error) {
      return fail(error, request, runtime, admission.headers)
    } finally {
      admission.release()
    }
  }

  /**
   * A file route: the operation's stream as the body, no envelope. Errors before the stream
   * starts are the usual JSON errors; the in-flight slot is kept until the stream ends, fails
   * or is cancelled (the client went away), as the file is still being made until then.
   */
  async function file(route: Route, request: Request, principal: Principal, admission: Admission, runtime: Runtime): Promise<Response> {
    let made: FileAnswer
    try {
      const call = { access: accessOf(principal), query: queryOf(request), body: undefined }
      made = (await runRoute(route, ops, call)) as FileAnswer
    } catch (error) {
      admission.release()
      return fail(error, request, runtime, admission.headers)
    }
    const headers: Record<string, string> = {
      'content-type': made.contentType,
      'content-disposition': `attachment; filename="${made.filename}"`,
    }
    for (const name in admission.headers) headers[name.toLowerCase()] = admission.headers[name]!
    const body = untilDone(made.body, admission.release, (error) => onError(error, request))
    return new Response(body, { status: successStatus(route), headers })
  }

  // The storage says whether it is open: until then every other route would fail, so health is 503.
  const health = (request: Routed, _context: unknown, runtime: Runtime) => {
    const storage = options.storage.health?.() ?? { ok: true }
    const body = storage.ok
      ? { status: 'ok', service: SERVICE_NAME, timestamp: isoAt(clock) }
      : { status: 'unavailable', service: SERVICE_NAME, timestamp: isoAt(clock), reason: `storage: ${storage.reason ?? 'not available'}` }
    return toResponse({ status: storage.ok ? 200 : 503, body: JSON.stringify(body) }, undefined, runtime, request.method !== 'HEAD')
  }

  // The document is made on first request (its module loads then), then kept: it depends only on
  // the route table and basePath.
  let openapi: Promise<string> | undefined
  const openApi = async (_request: Routed, _context: unknown, runtime: Runtime) => {
    openapi ??= import('./openapi.js').then(({ openApiDocument }) => JSON.stringify(openApiDocument(basePath)))
    return toResponse({ status: 200, body: await openapi }, undefined, runtime)
  }

  /** Path -> the methods it answers, for 405's `Allow`. */
  const methods = new Map<string, string[]>([
    ['/health', ['GET', 'HEAD']],
    ['/openapi.json', ['GET']],
    [BEACON_PATH, ['POST', 'OPTIONS']],
  ])
  const tracking = trackingRoutes(options.tracking)
  // Every route gets the caller's context and the runtime it names (the portable one by default).
  const router = Router<Routed, [unknown, Runtime]>({
    base: basePath,
    catch: (error, request, _context, runtime) => fail(error, request, runtime),
  })
  router.get('/health', health)
  router.head('/health', health)
  router.get('/openapi.json', openApi)
  router.get(REDIRECT_PATH, tracking.redirect)
  router.all(REDIRECT_PATH, () => {
    throw methodNotAllowed(['GET'])
  })
  router.options(BEACON_PATH, tracking.preflight)
  router.post(BEACON_PATH, async (request: Routed, context: unknown, runtime: Runtime) => {
    const cors: Record<string, string> = {}
    try {
      return await tracking.beacon(request, context, runtime, cors)
    } catch (error) {
      return fail(error, request, runtime, cors)
    }
  })
  // A payment provider's events (SPEC wave 3): no key; limited per client address like tracking.
  router.post(PROVIDER_EVENTS_PATH, async (request: Routed, context: unknown, runtime: Runtime) => {
    const address = clientAddressOf(request, context)
    const limit = options.tracking.limit
    if (address !== undefined && limit) {
      limit.check(address)
      limit.spend(address)
    }
    const raw = new TextDecoder().decode(await readBody(request, options.body))
    const status = await ops.integrations.receive(request.params.integrationId ?? '', raw, request.headers)
    return toResponse({ status, body: JSON.stringify({ received: status === 200 }) }, undefined, runtime)
  })
  for (const route of routes) {
    router[route.method.toLowerCase()]!(route.path, keyed(route))
    methods.set(route.path, [...(methods.get(route.path) ?? []), route.method])
  }
  // Unknown paths and methods are answered before any key is looked at, and are not limited.
  router.all('*', (request: Routed) => {
    const path = new URL(request.url).pathname.slice(basePath.length).replace(/\/+$/, '')
    const allowed = methods.get(path)
    throw allowed ? methodNotAllowed(allowed) : endpointNotFound()
  })

  return async (request, context) => {
    const runtime = runtimeOf(context)
    return (await router.fetch(request as Routed, context, runtime)) ?? fail(endpointNotFound(), request, runtime)
  }
}
