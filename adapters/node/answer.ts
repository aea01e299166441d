import type { IncomingMessage, ServerResponse } from 'node:http'
import { REPLY, type Incoming } from '../../src/http/incoming.js'
import type { Reply } from '../../src/http/respond.js'
import type { AffiliateService } from '../../src/service.js'
import { nodeIncoming, type NodeIncomingOptions } from './incoming.js'
import { clientGone, nodeRequest, requestUrl } from './request.js'
import { writeReply, writeResponse } from './response.js'

type Fetch = Pick<AffiliateService, 'fetch'>

/** A service of this package: besides `fetch`, it answers an Incoming with a Reply. */
type ReplyingService = Fetch & { [REPLY]: (incoming: Incoming) => Promise<Reply> }

const replies = (service: Fetch): service is ReplyingService => typeof (service as Partial<ReplyingService>)[REPLY] === 'function'

// An unread request body up to this size is read and dropped so the connection can be reused;
// a larger (or unsized) one closes the connection instead of being read.
const DRAIN_LIMIT = 64 * 1024

const INTERNAL_ERROR = '{"status":500,"message":"Internal server error"}'

/**
 * Answers one IncomingMessage with `service.fetch(request)`: aborts `request.signal` when the
 * client leaves, then writes the Response. What the Node listener and the Express middleware do for
 * a fetch handler that is not a service of this package.
 */
export function answer(service: Fetch, request: Request, req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.once('close', () => {
    if (!res.writableFinished) clientGone(request)
  })
  let pending: Promise<Response>
  try {
    pending = service.fetch(request)
  } catch (error) {
    pending = Promise.reject(error)
  }
  return pending
    .then((response) => {
      if (res.destroyed) {
        // Nobody to send it to; cancelling the body still lets its producer clean up.
        response.body?.cancel().catch(() => undefined)
        return
      }
      keepAliveIfDrainable(req, res)
      return writeResponse(response, res)
    })
    .catch((error: unknown) => failed(error, res))
}

/** An unread request body is drained only when small; a larger one closes the connection instead. */
function keepAliveIfDrainable(req: IncomingMessage, res: ServerResponse): void {
  if (!req.complete) {
    const declared = Number(req.headers['content-length'])
    if (!(declared <= DRAIN_LIMIT)) res.shouldKeepAlive = false
  }
}

function failed(error: unknown, res: ServerResponse): void {
  // The service answers its own errors; this is a fetch that threw, or a write that failed.
  console.error('affiliate-service/node: unexpected error', error)
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

/**
 * Answers one IncomingMessage through the service's own answer path: no web Request, Response or
 * stream is made, and the reply is written with one `end()`. Its in-flight slot (if it holds one)
 * is released once the reply is written, or dropped because the client has gone, and on every
 * failure: exactly once, as `done` itself ignores a second call.
 */
function answerReply(service: ReplyingService, req: IncomingMessage, res: ServerResponse, options?: NodeIncomingOptions): Promise<void> {
  return service[REPLY](nodeIncoming(req, options))
    .then((reply) => {
      try {
        if (res.destroyed) return
        keepAliveIfDrainable(req, res)
        writeReply(reply, res)
      } finally {
        reply.done?.()
      }
    })
    .catch((error: unknown) => failed(error, res))
}

/**
 * Answers one IncomingMessage: through the service's Reply path when it is a service of this
 * package, else through its `fetch` with a Request made over the message.
 */
export function answerOne(service: Fetch, req: IncomingMessage, res: ServerResponse, options: NodeIncomingOptions = {}): Promise<void> {
  if (replies(service)) return answerReply(service, req, res, options)
  const { url, body, beforeRead } = options
  const request = nodeRequest(req, {
    ...(url === undefined ? {} : { url: requestUrl(req, url) }),
    ...(body === undefined ? {} : { body }),
    ...(beforeRead === undefined ? {} : { beforeRead }),
  })
  return answer(service, request, req, res)
}
