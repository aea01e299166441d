import type { IncomingMessage } from 'node:http'
import type { Incoming } from '../../src/http/incoming.js'
import { bodyBytes, nodeRequest, requestUrl, type BodyOverride } from './request.js'

const EMPTY = new Uint8Array()

/** The header as `Headers#get` answers it: every occurrence, in order, joined with `, `. */
function headerOf(raw: readonly string[], name: string): string | null {
  let value: string | null = null
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i]!
    // Most clients send lower-case names: compared as they are first, lower-cased only when not.
    if (field === name || (field.length === name.length && field.toLowerCase() === name)) {
      value = value === null ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`
    }
  }
  return value
}

const clientLeft = () => new Error('The client closed the request before its body ended')

const asBytes = (chunk: Buffer): Uint8Array => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)

/**
 * Collects an upload from the socket until its end, or until more than `limit` bytes have come
 * (then the rest is left unread, the request paused). Its listeners are bound methods, made
 * without a closure of their own per request.
 */
class BodyCollector {
  private readonly chunks: Buffer[] = []
  private size = 0
  private readonly onData = this.data.bind(this)
  private readonly onEnd = this.end.bind(this)
  private readonly onGone = this.gone.bind(this)

  constructor(
    private readonly req: IncomingMessage,
    private readonly limit: number,
    private readonly resolve: (bytes: Uint8Array | undefined) => void,
    private readonly reject: (error: Error) => void,
  ) {
    req.on('data', this.onData).on('end', this.onEnd).on('error', this.onGone).on('close', this.onGone)
    req.resume()
  }

  private finish(): void {
    this.req.off('data', this.onData).off('end', this.onEnd).off('error', this.onGone).off('close', this.onGone)
  }

  private data(chunk: Buffer): void {
    this.size += chunk.byteLength
    if (this.size > this.limit) {
      this.finish()
      this.req.pause()
      this.resolve(undefined)
      return
    }
    this.chunks.push(chunk)
  }

  private end(): void {
    this.finish()
    const { chunks } = this
    this.resolve(chunks.length === 1 ? asBytes(chunks[0]!) : asBytes(Buffer.concat(chunks, this.size)))
  }

  private gone(): void {
    this.finish()
    this.reject(clientLeft())
  }
}

/**
 * Reads the upload: at once when the whole message is parsed (what is left sits in the request's
 * buffer, which Node keeps small by pausing the socket), else from the socket until the end or
 * until more than `limit` bytes have come; the rest is then left unread, the request paused.
 */
function readBody(req: IncomingMessage, limit: number, beforeRead: (() => void) | undefined): Promise<Uint8Array | undefined> {
  if (req.readableEnded) return Promise.resolve(EMPTY)
  beforeRead?.()
  if (req.complete) {
    const rest = req.read() as Buffer | null
    if (rest === null) return Promise.resolve(EMPTY)
    return Promise.resolve(rest.byteLength > limit ? undefined : asBytes(rest))
  }
  // Gone before the service asked for the body: no event is left to come.
  if (req.destroyed) return Promise.reject(clientLeft())
  return new Promise((resolve, reject) => void new BodyCollector(req, limit, resolve, reject))
}

export interface NodeIncomingOptions {
  /** The request target the service sees, when it is not `req.url` (below an Express mount). */
  url?: string
  /** The body, when a parser upstream already read the stream. */
  body?: BodyOverride
  /** Called once, just before the upload is first read: where `100 Continue` is sent. */
  beforeRead?: () => void
}

/**
 * An IncomingMessage as the service's handler reads it: the target, headers and body straight from
 * the message, with no web Request, Headers or stream in between. A Request is made only if the
 * service reports an error (`onError` takes one). A class rather than an object of closures: its
 * methods are made once, not per request.
 */
class NodeIncoming implements Incoming {
  readonly method: string
  readonly url: string
  /** The body a parser upstream read, as the bytes the service reads instead of the stream. */
  private readonly override: Uint8Array | undefined

  constructor(
    private readonly req: IncomingMessage,
    private readonly options: NodeIncomingOptions,
  ) {
    const target = options.url ?? req.url ?? '/'
    this.method = req.method ?? 'GET'
    // Absolute-form targets and `*` are taken apart the way `nodeRequest` does.
    this.url = target.charCodeAt(0) === 47 ? target : requestUrl(req, target)
    this.override = options.body === undefined ? undefined : bodyBytes(options.body)
  }

  header(name: string): string | null {
    if (this.override !== undefined) {
      // The body was parsed and re-serialized upstream: its size is that of what is passed on.
      if (name === 'content-length') return String(this.override.byteLength)
      if (name === 'transfer-encoding') return null
    }
    return headerOf(this.req.rawHeaders, name)
  }

  readBody(limit: number): Promise<Uint8Array | undefined> {
    if (this.override !== undefined) return Promise.resolve(this.override.byteLength > limit ? undefined : this.override)
    return readBody(this.req, limit, this.options.beforeRead)
  }

  request(): Request {
    const { url, body } = this.options
    return nodeRequest(this.req, {
      ...(url === undefined ? {} : { url: requestUrl(this.req, url) }),
      ...(body === undefined ? {} : { body }),
    })
  }
}

/** The IncomingMessage as an Incoming (see `NodeIncoming`). */
export const nodeIncoming = (req: IncomingMessage, options: NodeIncomingOptions = {}): Incoming => new NodeIncoming(req, options)
