import type { IncomingMessage, ServerResponse } from 'node:http'
import { defaultOnError, type OnError } from '../../src/on-error.js'
import type { AffiliateService } from '../../src/service.js'
import { clientGone, nodeRequest, requestUrl, type NodeRequestOptions } from './request.js'
import { writeResponse } from './response.js'
import { nodeRuntime } from './runtime.js'

/** The service, or any fetch handler; errors of the adapter's own go to its `onError` when it has one. */
type Fetch = Pick<AffiliateService, 'fetch'> & { readonly onError?: OnError }

/** Who sent a request, as the host sees it (after any proxy it trusts). */
export type ClientAddressOf = (req: IncomingMessage) => string | undefined

/** The scheme the client used, as the host sees it (a trusted proxy's word), or undefined for the connection's own. */
export type ProtocolOf = (req: IncomingMessage) => 'http' | 'https' | undefined

/** The socket's peer: the default when no proxy stands in front. */
export const socketAddress: ClientAddressOf = (req) => req.socket.remoteAddress

// An unread request body up to this size is read and dropped so the connection can be reused;
// a larger (or unsized) one closes the connection instead of being read.
const DRAIN_LIMIT = 64 * 1024

const INTERNAL_ERROR = '{"status":500,"code":"internal_error","message":"Internal server error"}'

export interface AnswerOptions extends Omit<NodeRequestOptions, 'url'> {
  /** The path (and query) the service sees, when it is not `req.url` (inside an Express mount). */
  path?: string
  /** @default the socket's peer address */
  clientAddress?: ClientAddressOf
  /** The scheme the client used, when a trusted proxy said it (`X-Forwarded-Proto`). @default the connection's */
  protocol?: ProtocolOf
  /** Called just before the answer is written (`serve()` closes the connection of an answer written while it shuts down). */
  beforeWrite?: (res: ServerResponse) => void
}

/**
 * Answers one IncomingMessage with `service.fetch(request, { clientAddress, runtime: nodeRuntime })`:
 * the Request is a lazy view of the message (see `nodeRequest`), its `signal` aborts when the client
 * leaves, the service answers with Node's hashes and light Responses (see `nodeRuntime`), and the
 * Response is written with one `end()` when its body is in memory, streamed otherwise.
 */
export function answer(service: Fetch, req: IncomingMessage, res: ServerResponse, options: AnswerOptions = {}): Promise<void> {
  const { path, clientAddress = socketAddress, protocol, beforeWrite, ...rest } = options
  const scheme = protocol?.(req)
  const request = nodeRequest(req, path === undefined && scheme === undefined ? rest : { ...rest, url: requestUrl(req, path, scheme) })
  res.once('close', () => {
    if (!res.writableFinished) clientGone(request)
  })
  let pending: Promise<Response>
  try {
    pending = service.fetch(request, { clientAddress: clientAddress(req), runtime: nodeRuntime })
  } catch (error) {
    pending = Promise.reject(error)
  }
  return pending
    .then(async (response) => {
      await endOfTurn()
      if (res.destroyed) {
        // Nobody to send it to; cancelling the body still lets its producer clean up.
        response.body?.cancel().catch(() => undefined)
        return
      }
      keepAliveIfDrainable(req, res, response)
      beforeWrite?.(res)
      return writeResponse(response, res)
    })
    .catch((error: unknown) => {
      beforeWrite?.(res)
      // The service answers its own errors; this is a fetch that threw, or a write that failed.
      ;(service.onError ?? defaultOnError)(error, { source: 'adapter', request })
      failed(res)
    })
}

/**
 * Answers ready during one turn of the event loop are written together at its end (`setImmediate`)
 * rather than each the moment it is ready. Under load a turn takes in many requests: writing their
 * answers back to back wakes each peer process on the same machine (a proxy in front, a load
 * generator) once for several answers instead of once per answer, and the next requests come in
 * together, so this process too goes round its loop once for many. On this machine's loopback that
 * is most of a click's cost (BENCHMARKS.md, rows 8c and 8d). Idle, an answer waits for nothing but
 * the rest of its turn. The answers waiting go on in the order they came, right after the
 * `setImmediate` callback and before the loop turns again.
 */
let thisTurn: (() => void)[] = []

const endOfTurn = (): Promise<void> =>
  new Promise((resume) => {
    if (thisTurn.length === 0) setImmediate(resumeAll)
    thisTurn.push(resume)
  })

function resumeAll(): void {
  const waiting = thisTurn
  thisTurn = []
  for (const resume of waiting) resume()
}

/**
 * An unread request body is drained only when small and not refused as too slow; otherwise the
 * answer says `Connection: close` and Node closes the socket once it is written. A 408 (the body
 * did not come in time) always closes, whoever made it: the rest of that body may never come, and
 * draining it would hold the connection for as long as the client likes. (An answer with its own
 * `Connection: close` header, as the service's 408 has, is closed by Node itself.)
 */
function keepAliveIfDrainable(req: IncomingMessage, res: ServerResponse, response: Response): void {
  if (response.status === 408) {
    res.shouldKeepAlive = false
    return
  }
  if (!req.complete) {
    const declared = Number(req.headers['content-length'])
    if (!(declared <= DRAIN_LIMIT)) res.shouldKeepAlive = false
  }
}

/** Answers 500 when nothing is out yet, else cuts the connection. */
function failed(res: ServerResponse): void {
  if (res.headersSent || res.destroyed) {
    res.destroy()
    return
  }
  try {
    res.writeHead(500, ['content-type', 'application/json; charset=utf-8', 'content-length', String(INTERNAL_ERROR.length)])
    res.end(INTERNAL_ERROR)
  } catch {
    res.destroy()
  }
}
