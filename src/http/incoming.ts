/**
 * A request as the handler reads it: the few things it asks of a request, without requiring a web
 * `Request`. `service.fetch` makes one from a Request; the Node adapter makes one straight from an
 * IncomingMessage, so a request over node:http builds no Request, Headers or stream at all.
 */
export interface Incoming {
  readonly method: string
  /** The request target: a path with its query (`/api/v1/campaigns?campaignId=…`) or an absolute URL. */
  readonly url: string
  /** The header's value (repeats joined with `, `, as `Headers#get`), or null. `name` is lower case. */
  header(name: string): string | null
  /**
   * The body's bytes, read to the end; or `undefined` as soon as more than `limit` bytes have come,
   * leaving the rest unread. Rejects when the client goes away before the end.
   */
  readBody(limit: number): Promise<Uint8Array | undefined>
  /** The same request as a web Request, for `onError`; built only when asked. */
  request(): Request
}

/** Reads a web body stream, stopping (and cancelling it) once it passes `limit` bytes. */
async function readCapped(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | undefined> {
  if (!body) return new Uint8Array()
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => undefined)
      return undefined
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/** A web Request as an Incoming: a class, so its methods are made once rather than per request. */
class RequestIncoming implements Incoming {
  readonly method: string
  readonly url: string
  constructor(private readonly source: Request) {
    this.method = source.method
    this.url = source.url
  }

  header(name: string): string | null {
    return this.source.headers.get(name)
  }

  readBody(limit: number): Promise<Uint8Array | undefined> {
    return readCapped(this.source.body, limit)
  }

  request(): Request {
    return this.source
  }
}

/** A web Request as an Incoming. */
export const incomingOf = (request: Request): Incoming => new RequestIncoming(request)

/**
 * Where an adapter of this package finds a service's answer path for an Incoming: a function on
 * the service under this key answers `(incoming) => Promise<Reply>`. Not part of the public shape
 * (the service's own properties stay `fetch` and `api`). A registered symbol, so the CommonJS and
 * ESM builds of the package agree on it; the version in its name keeps another copy of the package
 * with a different contract from matching.
 */
export const REPLY = Symbol.for('affiliate-service/reply@1')
