import type { IncomingMessage, ServerResponse } from 'node:http'
import type { OnError } from '../src/on-error.js'
import { AffiliateError } from '../src/errors.js'
import { errorAnswer, toResponse } from '../src/http/respond.js'
import type { AffiliateService } from '../src/service.js'
import { surfaceOf } from '../src/surfaces.js'
import { answer } from './node/answer.js'
import type { BodyOverride } from './node/request.js'
import { writeResponse } from './node/response.js'
import { createNodeWebhookSender } from './node/webhook-delivery.js'

type Fetch = Pick<AffiliateService, 'fetch'> & {
  readonly basePath?: string
  /** What the service answers, and where (the API, tracking, the portal, the admin). @default the API at `basePath` */
  readonly surfaces?: AffiliateService['surfaces']
  /** Where the adapter's own errors go (`source: 'adapter'`). @default the default onError */
  readonly onError?: OnError
  /** The service's background work: `expressAdapter` starts it when made. */
  start?: AffiliateService['start']
}

/** The parts of Express's request this adapter reads; any Express 4 or 5 request has them. */
interface MaybeParsed extends IncomingMessage {
  /** Set by a body parser that ran before this middleware. */
  body?: unknown
  /** Set by body-parser 1.x (Express 4's `express.json()`) once it has read the stream. */
  _body?: boolean
  /** Express's client address, which follows the app's `trust proxy` setting. */
  ip?: string
  /** Express's scheme: `X-Forwarded-Proto` only from a proxy the app's `trust proxy` setting trusts. */
  protocol?: string
}

/** A middleware with Express's `(req, res, next)` shape, typed without depending on Express. */
export type ExpressMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

/** An error-handling middleware, Express's `(error, req, res, next)` shape (four parameters). */
export type ExpressErrorMiddleware = (error: unknown, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

/** What body-parser (`express.json()`, Express 4 and 5) puts on the errors it hands to `next`. */
interface ParserError {
  type?: unknown
  /** The raw text it could not parse (`entity.parse.failed`). */
  body?: unknown
  /** Its byte limit (`entity.too.large`). */
  limit?: unknown
}

/**
 * The body a parser upstream already took off the stream, in the bytes the service will read:
 * text and bytes as they are, a parsed value re-serialized as JSON. Undefined when the stream is
 * still unread (no parser ran, or it skipped this content type), so the service reads it itself.
 */
function parsedBody(req: MaybeParsed): BodyOverride | undefined {
  if (req.body === undefined) return undefined
  const consumed = req._body === true || req.readableEnded || (req.complete && !req.readable)
  if (!consumed) return undefined
  if (typeof req.body === 'string' || req.body instanceof Uint8Array) return req.body
  return JSON.stringify(req.body)
}

/** Whether a path (below the mount) is the service's: under one of its surfaces (the API, tracking, the portal, the admin). */
function pathsOf(service: Fetch): (path: string) => boolean {
  const surfaces = service.surfaces ?? [{ name: 'api', path: service.basePath ?? '/api/v1' }]
  return (path) => surfaceOf(surfaces, path) !== undefined
}

const clientAddress = (req: MaybeParsed) => req.ip ?? req.socket.remoteAddress
const protocol = (req: MaybeParsed) => (req.protocol === 'https' || req.protocol === 'http' ? req.protocol : undefined)

/**
 * Express middleware serving the service, for Express 4 and 5. Requests under one of the service's
 * `surfaces` (the API at `basePath`, its tracking routes, the portal and the admin when on) are the
 * service's; every other request goes on to `next()`, so it can sit beside the app's own routes,
 * at the root included. Mount it anywhere: under `app.use('/affiliates', ...)` the API answers at
 * `/affiliates/api/v1/...`. The portal's and the admin's pages link to their own `path`: with them
 * on, mount it at the root (`app.use(expressAdapter(service))`), and give their `path` a prefix if
 * you want one. The client address for the per-address limits is `req.ip`, and the scheme
 * `req.protocol`, so Express's own `app.set('trust proxy', ...)` decides whether
 * `X-Forwarded-For` and `X-Forwarded-Proto` are believed.
 *
 * It works with or without `express.json()` before it. Without, the service reads the stream
 * itself, with its own limit (413), content-type (415) and JSON (400) answers. After a parser
 * (`req.body` set and the stream read), the parsed body is re-serialized as JSON for the service;
 * the parser's own limit and errors then apply first. Mount `expressErrorHandler(service)` right
 * after the adapter, at the same path, so those are answered in the service's JSON envelope too.
 *
 * Making it starts the service's background work (`service.start()` with the Node webhook sender:
 * webhook delivery, click pruning), as Express owns no server lifecycle to hook: a host calls
 * nothing else. On shutdown, `await service.close()` writes the clicks waiting and records the
 * webhook attempts in flight. `expressAdapter(service, { webhooks: false })` leaves webhook
 * delivery to another process.
 *
 * @example
 * import express from 'express'
 * import { expressAdapter } from 'affiliate-service/express'
 *
 * const app = express()
 * app.use(express.json()) // optional
 * app.use('/affiliates', expressAdapter(service), expressErrorHandler(service))
 * app.listen(3000) // http://localhost:3000/affiliates/api/v1/health
 */
export function expressAdapter(service: Fetch, options: { webhooks?: boolean } = {}): ExpressMiddleware {
  const servesPath = pathsOf(service)
  service.start?.({ sender: createNodeWebhookSender, webhooks: options.webhooks !== false })
  return (req, res, next) => {
    // Inside a mount, `req.url` is the path below the mount point (Express keeps the rest in `originalUrl`).
    const path = req.url ?? '/'
    if (!servesPath(path)) {
      next()
      return
    }
    const body = parsedBody(req)
    answer(service, req, res, body === undefined ? { path, clientAddress, protocol } : { path, body, clientAddress, protocol }).catch(next)
  }
}

/**
 * Express error middleware answering a body parser's errors on the service's paths in the
 * service's JSON envelope, as it answers them when it reads the body itself: malformed JSON goes
 * through the service with the text the parser could not parse (so the key is checked first, then
 * 400 `Invalid JSON body`); a body over the parser's limit is 413, an unsupported charset or
 * encoding 415. Every other error, and errors on other paths, go on to `next(error)`. Mount it
 * right after `expressAdapter`, at the same path.
 *
 * @example app.use('/affiliates', expressAdapter(service), expressErrorHandler(service))
 */
export function expressErrorHandler(service: Fetch): ExpressErrorMiddleware {
  const servesPath = pathsOf(service)
  // Four parameters: Express tells error middleware by its arity.
  return function affiliateErrors(error, req, res, next) {
    const path = req.url ?? '/'
    const parser = (typeof error === 'object' && error !== null ? error : {}) as ParserError
    if (!servesPath(path) || res.headersSent || typeof parser.type !== 'string') {
      next(error)
      return
    }
    if (parser.type === 'entity.parse.failed' && typeof parser.body === 'string') {
      answer(service, req, res, { path, body: parser.body, clientAddress, protocol }).catch(next)
      return
    }
    let refusal: AffiliateError
    if (parser.type === 'entity.too.large') {
      refusal = new AffiliateError(
        413,
        typeof parser.limit === 'number' ? `Request body is larger than the limit of ${parser.limit} bytes` : 'Request body is too large',
      )
    } else if (parser.type === 'charset.unsupported' || parser.type === 'encoding.unsupported') {
      refusal = new AffiliateError(415, 'Content-Type must be application/json')
    } else {
      next(error)
      return
    }
    // The rest of the body is unread: the connection cannot carry another request.
    res.shouldKeepAlive = false
    void writeResponse(toResponse(errorAnswer(refusal)), res)?.catch(next)
  }
}
