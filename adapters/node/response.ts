import type { ServerResponse } from 'node:http'
import { untouchedParts } from './light-response.js'

/**
 * undici keeps the value a Response was built from (`new Response(string)`) beside its stream.
 * Writing that value with one `res.end()` skips reading a web stream for a body already in
 * memory, which costs more than the rest of the write. It is an internal of undici, so it is found
 * by probing once and every use is checked; anything unexpected takes the streaming path.
 */
const stateKey = Object.getOwnPropertySymbols(new Response('')).find((symbol) => symbol.description === 'state')

interface UndiciState {
  body?: { source?: unknown; stream?: ReadableStream } | null
}

/** The string or bytes a Response was made from, when it is known and its body is untouched. */
export function knownBody(response: Response): string | Uint8Array | undefined {
  if (stateKey === undefined || response.bodyUsed) return undefined
  const body = (response as unknown as Record<symbol, UndiciState | undefined>)[stateKey]?.body
  const source = body?.source
  if (typeof source !== 'string' && !(source instanceof Uint8Array)) return undefined
  return body?.stream?.locked ? undefined : source
}

/**
 * Status line and headers as one flat list, the cheapest form `writeHead` takes; `Set-Cookie` kept
 * apart, as one entry holding every cookie: when headers were set before (Express sets
 * `X-Powered-By`), `writeHead` merges the list through `setHeader`, where a second `Set-Cookie`
 * entry would replace the first.
 */
function head(response: Response, contentLength: number | undefined): (string | string[])[] {
  const list: (string | string[])[] = []
  let hasLength = false
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') return
    if (name === 'content-length') hasLength = true
    list.push(name, value)
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length) list.push('set-cookie', cookies)
  if (contentLength !== undefined && !hasLength) list.push('content-length', String(contentLength))
  return list
}

/** Resolves once the socket can take more, or with false when the client has gone. */
const writable = (res: ServerResponse): Promise<boolean> =>
  new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain).off('close', onClose)
      resolve(ok)
    }
    const onDrain = done(true)
    const onClose = done(false)
    res.on('drain', onDrain).on('close', onClose)
  })

async function pipeBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  const reader = body.getReader()
  // A client that goes away reads nothing more: cancelling tells the producer (and frees what it holds).
  const onClose = () => {
    if (!res.writableFinished) reader.cancel(new Error('The client closed the connection')).catch(() => undefined)
  }
  res.once('close', onClose)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (res.destroyed) return
      if (!res.write(value) && !(await writable(res))) return
    }
    res.end()
  } catch (error) {
    // Headers (and maybe part of the body) are out: all that is left is to cut the connection.
    res.destroy(error instanceof Error ? error : new Error(String(error)))
  } finally {
    res.off('close', onClose)
  }
}

/**
 * Writes a Response to a ServerResponse: a body known in memory with one `end()` and a
 * `Content-Length`, any other body streamed with backpressure and cancelled if the client leaves.
 *
 * @example
 * await writeResponse(await service.fetch(request), res)
 */
export function writeResponse(response: Response, res: ServerResponse): Promise<void> | undefined {
  const parts = untouchedParts(response)
  if (parts !== undefined) {
    // The service's own answer, untouched: status, headers and text as they are, with one `end()`.
    // Names in the order `Headers` would give them (sorted), then `content-length`.
    const list: string[] = []
    for (const name of Object.keys(parts.headers).sort()) list.push(name, parts.headers[name]!)
    const body = parts.body ?? ''
    list.push('content-length', String(Buffer.byteLength(body)))
    res.writeHead(parts.status, list)
    res.end(body)
    return undefined
  }
  const known = knownBody(response)
  if (known !== undefined) {
    const length = typeof known === 'string' ? Buffer.byteLength(known) : known.byteLength
    res.writeHead(response.status, head(response, length))
    res.end(known)
    return undefined
  }
  if (response.body === null) {
    const empty = response.status === 204 || response.status === 304 || response.status < 200
    res.writeHead(response.status, head(response, empty ? undefined : 0))
    res.end()
    return undefined
  }
  res.writeHead(response.status, head(response, undefined))
  return pipeBody(response.body, res)
}
