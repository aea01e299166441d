import { AffiliateError } from '../errors.js'

/** @default 100 KiB */
export const DEFAULT_MAX_BODY_BYTES = 100 * 1024
/** @default 10 s */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000

const isJsonType = (header: string | null): boolean => {
  if (!header) return false
  const [type = '', ...params] = header
    .toLowerCase()
    .split(';')
    .map((part) => part.trim())
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false
  const charset = params.find((param) => param.startsWith('charset='))
  return !charset || /^charset="?utf-8"?$/.test(charset)
}

/**
 * 408: the rest of the body may still be coming (or never will), so the answer closes the
 * connection rather than keep it alive with an unread body in it.
 */
export const bodyTimeout = () => new AffiliateError(408, 'Request body timeout', { headers: { connection: 'close' } })

const tooLarge = (limit: number) => new AffiliateError(413, `Request body is larger than the limit of ${limit} bytes`)

/**
 * Thrown when the client goes away before its body has come: routine (it frees the request's
 * slot like any answer) and never reported as an unexpected error. Nobody reads this answer.
 */
export const clientGone = () => new AffiliateError(400, 'The client closed the request before its body ended', { code: 'client_closed' })

const decoder = new TextDecoder('utf-8', { fatal: true })

export interface BodyLimits {
  maxBytes: number
  timeoutMs: number
}

/**
 * One deadline for a whole read: `race` answers what a read step answers, or rejects with 408 once
 * `timeoutMs` has passed since the deadline was set, and turns any other failure of the step (the
 * client went away) into `clientGone`. `clear` when done.
 */
function deadline(timeoutMs: number) {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimeout()), timeoutMs)
  })
  return {
    race: <T>(step: Promise<T>): Promise<T> =>
      Promise.race([step, expired]).catch((error: unknown) => {
        throw error instanceof AffiliateError ? error : clientGone()
      }),
    clear: () => clearTimeout(timer),
  }
}

/**
 * Reads the body, stopping (and cancelling it) once it passes `maxBytes`: 413. A body that has not
 * ended `timeoutMs` after the read began is 408; a stream that fails (the client went away) is
 * `clientGone`.
 */
async function readCapped(body: ReadableStream<Uint8Array>, { maxBytes, timeoutMs }: BodyLimits): Promise<Uint8Array> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  const time = deadline(timeoutMs)
  try {
    for (;;) {
      const { done, value } = await time.race(reader.read())
      if (done) break
      size += value.byteLength
      if (size > maxBytes) throw tooLarge(maxBytes)
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => undefined)
    throw error
  } finally {
    time.clear()
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

/**
 * The body of a request whose size is declared: all of it at once, still within `timeoutMs` and
 * `maxBytes`, through one promise (a timer and the read, no race): a read that fails (the client
 * went away, before or while it was read) is `clientGone`.
 */
function readDeclared(request: Request, { maxBytes, timeoutMs }: BodyLimits): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(bodyTimeout()), timeoutMs)
    request.arrayBuffer().then(
      (buffer) => {
        clearTimeout(timer)
        // Only a caller in this process can send more than it declared; it is refused all the same.
        if (buffer.byteLength > maxBytes) reject(tooLarge(maxBytes))
        else resolve(new Uint8Array(buffer))
      },
      () => {
        clearTimeout(timer)
        reject(clientGone())
      },
    )
  })
}

/**
 * The request's body as bytes: 413 over `maxBytes` (by Content-Length before reading anything,
 * else once that many bytes have come), 408 when it does not arrive within `timeoutMs`.
 */
export async function readBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  const size = declared === null ? Number.NaN : Number(declared)
  if (size > limits.maxBytes) throw tooLarge(limits.maxBytes)
  // A declared size within the limit is read in one piece (HTTP framing holds the body to it); an
  // undeclared one (chunked) as a stream, stopped once it passes the limit.
  if (Number.isSafeInteger(size)) return readDeclared(request, limits)
  if (request.signal.aborted) throw clientGone()
  return request.body ? readCapped(request.body, limits) : new Uint8Array()
}

/**
 * The request's JSON object body: 415 unless the content type is JSON, 413 over the limit (by
 * Content-Length before reading anything, else once that many bytes have come), 408 when it does
 * not arrive in time, 400 `Invalid JSON body` when it does not parse (an empty body included),
 * and 400 when it is not an object.
 */
export async function readJsonBody(request: Request, limits: BodyLimits): Promise<Record<string, unknown>> {
  if (!isJsonType(request.headers.get('content-type'))) throw new AffiliateError(415, 'Content-Type must be application/json')
  const bytes = await readBody(request, limits)
  let value: unknown
  try {
    value = JSON.parse(decoder.decode(bytes))
  } catch {
    throw new AffiliateError(400, 'Invalid JSON body', { code: 'invalid_json' })
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new AffiliateError(400, 'Request body must be a JSON object', { code: 'invalid_body' })
  return value as Record<string, unknown>
}
