import type { IncomingMessage, ServerResponse } from 'node:http'
import type { OnError } from '../src/on-error.js'
import type { AffiliateService } from '../src/service.js'
import { answer } from './node/answer.js'
import type { BodyOverride } from './node/request.js'

type Fetch = Pick<AffiliateService, 'fetch'> & {
  readonly basePath?: string
  readonly portalPath?: string | null
  /** Where the adapter's own errors go (`source: 'adapter'`). @default the default onError */
  readonly onError?: OnError
}

/** The parts of Express's request this adapter reads; any Express 4 or 5 request has them. */
interface MaybeParsed extends IncomingMessage {
  /** Set by a body parser that ran before this middleware. */
  body?: unknown
  /** Set by body-parser 1.x (Express 4's `express.json()`) once it has read the stream. */
  _body?: boolean
  /** Express's client address, which follows the app's `trust proxy` setting. */
  ip?: string
}

/** A middleware with Express's `(req, res, next)` shape, typed without depending on Express. */
export type ExpressMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

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

const under = (basePath: string) => (path: string) =>
  path.startsWith(basePath) && (path.length === basePath.length || path[basePath.length] === '/' || path[basePath.length] === '?')

/**
 * Express middleware serving the service, for Express 4 and 5. Mount it anywhere: under
 * `app.use('/affiliates', ...)` the API answers at `/affiliates/api/v1/...`. Requests outside the
 * service's `basePath` (default `/api/v1`) and its portal's path (when on) go on to `next()`, so it can sit beside the app's own
 * routes, at the root included. The client address for the per-address limits is `req.ip`, so
 * Express's own `app.set('trust proxy', ...)` decides whether `X-Forwarded-For` is believed.
 *
 * It works with or without `express.json()` before it. Without, the service reads the stream
 * itself, with its own limit (413), content-type (415) and JSON (400) answers. After a parser, the
 * parsed body is re-serialized as JSON for the service; the parser's own limit and errors then
 * apply first, answered by Express's error handler. Mount the adapter before `express.json()` to
 * keep the service's error envelope for every request.
 *
 * @example
 * import express from 'express'
 * import { expressAdapter } from 'affiliate-service/express'
 *
 * const app = express()
 * app.use('/affiliates', expressAdapter(service))
 * app.listen(3000) // http://localhost:3000/affiliates/api/v1/health
 */
export function expressAdapter(service: Fetch): ExpressMiddleware {
  const api = under(service.basePath ?? '/api/v1')
  const portal = service.portalPath ? under(service.portalPath) : () => false
  const servesPath = (path: string) => api(path) || portal(path)
  const clientAddress = (req: MaybeParsed) => req.ip ?? req.socket.remoteAddress
  return (req, res, next) => {
    // Inside a mount, `req.url` is the path below the mount point (Express keeps the rest in `originalUrl`).
    const path = req.url ?? '/'
    if (!servesPath(path)) {
      next()
      return
    }
    const body = parsedBody(req)
    answer(service, req, res, body === undefined ? { path, clientAddress } : { path, body, clientAddress }).catch(next)
  }
}
