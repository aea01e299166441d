import type { IncomingMessage } from 'node:http'
import { lazyPrototype } from './lazy-prototype.js'

/** What the request's body is, when it is not the IncomingMessage's own stream (Express after a body parser). */
export type BodyOverride = string | Uint8Array

const kIncoming = Symbol('incoming')
const kUrl = Symbol('url')
const kHeaders = Symbol('headers')
const kBody = Symbol('body')
const kOverride = Symbol('body override')
const kBeforeRead = Symbol('before read')
const kDisturbed = Symbol('disturbed')
const kAbort = Symbol('abort')
const kClosed = Symbol('closed')
const kReal = Symbol('real request')

interface Fields {
  [kIncoming]: IncomingMessage
  [kUrl]: string
  [kHeaders]?: Headers
  [kBody]?: ReadableStream<Uint8Array> | null
  [kOverride]?: BodyOverride
  /** Called once, before the first byte of the upload is asked for (to send `100 Continue`). */
  [kBeforeRead]?: () => void
  [kDisturbed]: boolean
  [kAbort]?: AbortController
  [kClosed]: boolean
  [kReal]?: Request
}

const withBody = (method: string) => method !== 'GET' && method !== 'HEAD'

/**
 * The upload as a stream that reads the socket only while its consumer wants more: the request is
 * paused whenever a chunk is waiting unread (high-water mark 0), so the adapter never holds more
 * than one chunk, and a consumer that stops (the core's size cap) leaves the rest unread.
 */
function bodyStream(self: Fields): ReadableStream<Uint8Array> {
  const req = self[kIncoming]
  let done = false
  const finish = () => {
    done = true
    req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone)
  }
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const onData = (chunk: Buffer) => {
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    if ((controller.desiredSize ?? 0) <= 0) req.pause()
  }
  const onEnd = () => {
    finish()
    controller.close()
  }
  const onGone = () => {
    if (done) return
    finish()
    controller.error(new Error('The client closed the request before its body ended'))
  }
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c
        if (req.readableEnded) {
          done = true
          c.close()
          return
        }
        if (req.destroyed && !req.complete) {
          // Gone before the body was asked for: no event is left to come, so waiting would hang.
          done = true
          c.error(new Error('The client closed the request before its body ended'))
          return
        }
        req.pause()
        req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone)
      },
      pull() {
        if (!self[kDisturbed]) self[kBeforeRead]?.()
        self[kDisturbed] = true
        if (done) return
        if (req.complete) {
          // The whole message is parsed: what is left sits in the request's buffer, which Node
          // keeps small by pausing the socket. Take it in one read instead of a resume per chunk.
          finish()
          const rest = req.read() as Buffer | null
          if (rest !== null) controller.enqueue(new Uint8Array(rest.buffer, rest.byteOffset, rest.byteLength))
          controller.close()
          return
        }
        req.resume()
      },
      cancel() {
        if (done) return
        finish()
        req.pause()
      },
    },
    { highWaterMark: 0 },
  )
}

function real(self: Fields & Request): Request {
  if (self[kReal]) return self[kReal]
  const method = self.method
  const init: RequestInit & { duplex?: 'half' } = { method, headers: self.headers, signal: self.signal }
  if (withBody(method)) {
    init.body = self.body
    init.duplex = 'half'
  }
  return (self[kReal] = new Request(self[kUrl], init))
}

// Everything not answered below is the real Request's, built on first use.
const proto = lazyPrototype<Fields & Request>(Request.prototype, real)
Object.defineProperties(proto, {
  method: {
    get(this: Fields) {
      return this[kIncoming].method ?? 'GET'
    },
  },
  url: {
    get(this: Fields) {
      return this[kUrl]
    },
  },
  headers: {
    get(this: Fields) {
      if (this[kReal]) return this[kReal].headers
      if (this[kHeaders]) return this[kHeaders]
      const raw = this[kIncoming].rawHeaders
      const headers = new Headers()
      for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
      if (this[kOverride] !== undefined) {
        // The body was parsed and re-serialized upstream: its size is that of what we pass on.
        headers.delete('transfer-encoding')
        headers.set('content-length', String(bodyBytes(this[kOverride]).byteLength))
      }
      return (this[kHeaders] = headers)
    },
  },
  body: {
    get(this: Fields & Request) {
      if (this[kReal]) return this[kReal].body
      if (this[kBody] !== undefined) return this[kBody]
      if (!withBody(this.method)) return (this[kBody] = null)
      const override = this[kOverride]
      if (override === undefined) return (this[kBody] = bodyStream(this))
      const bytes = bodyBytes(override)
      return (this[kBody] = new ReadableStream<Uint8Array>({
        pull: (controller) => {
          this[kDisturbed] = true
          if (bytes.byteLength > 0) controller.enqueue(bytes)
          controller.close()
        },
      }))
    },
  },
  bodyUsed: {
    get(this: Fields) {
      return this[kReal] ? this[kReal].bodyUsed : this[kDisturbed]
    },
  },
  // The whole body at once, read from the IncomingMessage without a web stream in between (what
  // `text()` and `json()` of undici would do through one): the service reads a body whose size is
  // declared this way. Anything already touched goes through the real Request.
  arrayBuffer: {
    value(this: Fields & Request): Promise<ArrayBuffer> {
      if (this[kReal] || this[kBody] !== undefined || this[kDisturbed]) return real(this).arrayBuffer()
      // A client already gone is told the way an aborted `signal` would tell it, without making one.
      if (this[kClosed]) return Promise.reject(new Error('The client closed the request before its body ended'))
      this[kDisturbed] = true
      this[kBody] = null
      if (!withBody(this.method)) return Promise.resolve(new ArrayBuffer(0))
      const override = this[kOverride]
      if (override !== undefined) return Promise.resolve(copy(bodyBytes(override)))
      this[kBeforeRead]?.()
      return readWhole(this[kIncoming])
    },
  },
  text: {
    value(this: Fields & Request): Promise<string> {
      return (this as unknown as Request).arrayBuffer().then((buffer) => new TextDecoder().decode(buffer))
    },
  },
  signal: {
    get(this: Fields) {
      if (this[kAbort]) return this[kAbort].signal
      const controller = (this[kAbort] = new AbortController())
      if (this[kClosed]) controller.abort()
      return controller.signal
    },
  },
})

/** The bytes in an ArrayBuffer of their own (a Buffer is often a view into a larger, shared one). */
function copy(bytes: Uint8Array): ArrayBuffer {
  const out = new Uint8Array(bytes.byteLength)
  out.set(bytes)
  return out.buffer
}

/** Every byte of the upload, or a rejection when the client goes away before it ends. */
function readWhole(req: IncomingMessage): Promise<ArrayBuffer> {
  return new Promise((resolve, reject) => {
    if (req.readableEnded) return resolve(new ArrayBuffer(0))
    if (req.destroyed && !req.complete) return reject(new Error('The client closed the request before its body ended'))
    if (req.complete) {
      // The whole message is parsed (a small upload comes with its headers): it all sits in the
      // request's buffer, taken in one read instead of through data and end events.
      const rest = req.read() as Buffer | null
      return resolve(rest === null ? new ArrayBuffer(0) : copy(rest))
    }
    const chunks: Buffer[] = []
    const done = () => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone)
    }
    const onData = (chunk: Buffer) => void chunks.push(chunk)
    const onEnd = () => {
      done()
      const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      resolve(copy(whole))
    }
    const onGone = () => {
      done()
      reject(new Error('The client closed the request before its body ended'))
    }
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone)
    req.resume()
  })
}

const encoder = new TextEncoder()
/** The bytes of a body read upstream. */
export const bodyBytes = (body: BodyOverride): Uint8Array => (typeof body === 'string' ? encoder.encode(body) : body)

// A Host header is the client's to choose; one that is not a host[:port] must not break URL parsing.
const HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i

/**
 * The absolute URL of the request: origin from the scheme (the connection's, or `protocol` when a
 * trusted proxy said it) and the Host header (or `localhost`), then the path as sent.
 */
export function requestUrl(req: IncomingMessage, path = req.url ?? '/', protocol?: 'http' | 'https'): string {
  const host = req.headers.host
  const scheme = protocol ?? ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http')
  const origin = `${scheme}://${host && HOST.test(host) ? host : 'localhost'}`
  if (path.startsWith('/')) return origin + path
  // Absolute-form targets (`GET http://host/path`, sent to proxies) and `*`: keep only the path.
  try {
    const url = new URL(path)
    return origin + url.pathname + url.search
  } catch {
    return `${origin}/`
  }
}

export interface NodeRequestOptions {
  /** The absolute URL the service sees. @default from the Host header and `req.url` */
  url?: string
  /** The body, when a parser upstream already read the stream. */
  body?: BodyOverride
  /** Called once, just before the upload is first read: where `100 Continue` is sent. */
  beforeRead?: () => void
}

/** Marks the client of a request made by `nodeRequest` as gone: its `signal` aborts, now or when first read. */
export function clientGone(request: Request): void {
  const self = request as unknown as Fields
  self[kClosed] = true
  self[kAbort]?.abort()
}

/**
 * Wraps an IncomingMessage as a Request, reading nothing yet. Building a real undici Request costs
 * more than a bare node:http server spends on a whole request, and the service reads only `method`,
 * `url`, `headers`, `body` and `signal`: those five are served from the IncomingMessage, and a real
 * Request is built only when anything else is touched (`clone()`, `text()`, `cache`...).
 *
 * @example
 * const request = nodeRequest(req)
 * res.once('close', () => { if (!res.writableFinished) clientGone(request) })
 */
export function nodeRequest(req: IncomingMessage, options: NodeRequestOptions = {}): Request {
  const self = Object.create(proto) as Fields
  self[kIncoming] = req
  self[kUrl] = options.url ?? requestUrl(req)
  self[kDisturbed] = false
  self[kClosed] = false
  if (options.body !== undefined) self[kOverride] = options.body
  if (options.beforeRead) self[kBeforeRead] = options.beforeRead
  return self as unknown as Request
}
