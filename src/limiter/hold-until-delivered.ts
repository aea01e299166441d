const encoder = new TextEncoder()

/**
 * A body that calls `release` once it has been read to the end, has failed, or has been
 * cancelled: the request stays in flight while its body streams. A null source has nothing to
 * deliver, so it releases at once. The stream pulls only when its reader asks (high-water mark 0),
 * so nothing reads ahead of the client and the release cannot come before the last chunk has been
 * taken. A string source is sent as one chunk.
 */
export function heldBody(source: ReadableStream<Uint8Array> | string | null, release: () => void): ReadableStream<Uint8Array> | null {
  if (source === null) {
    release()
    return null
  }
  if (typeof source === 'string') {
    let bytes: Uint8Array | null = encoder.encode(source)
    return new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (bytes !== null && bytes.byteLength > 0) {
            controller.enqueue(bytes)
            bytes = null
            return
          }
          release()
          controller.close()
        },
        cancel() {
          release()
        },
      },
      { highWaterMark: 0 },
    )
  }
  const reader = source.getReader()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            release()
            controller.close()
          } else {
            controller.enqueue(value)
          }
        } catch (error) {
          release()
          controller.error(error)
        }
      },
      cancel(reason) {
        release()
        return reader.cancel(reason)
      },
    },
    { highWaterMark: 0 },
  )
}

/**
 * The Response `respond` makes of a body that releases an in-flight slot when delivered (see
 * `heldBody`). A client that goes away (`request.signal`) will read no body, so its slot is freed
 * then, or at once when it has gone already: the work is done by the time this is called, and not
 * sooner, or aborting requests would let a key run more than the cap at once.
 */
export function deliverThenRelease<S extends ReadableStream<Uint8Array> | string | null>(
  request: Request,
  source: S,
  respond: (body: S | ReadableStream<Uint8Array> | null) => Response,
  release: () => void,
): Response {
  const { signal } = request
  if (signal.aborted) {
    release()
    return respond(source)
  }
  const onAbort = () => done()
  const done = () => {
    signal.removeEventListener('abort', onAbort)
    release()
  }
  signal.addEventListener('abort', onAbort)
  return respond(heldBody(source, done))
}

/** The same response with `headers` added; the body is passed on untouched. */
export function withHeaders(response: Response, body: BodyInit | null, headers: Record<string, string>): Response {
  const merged = new Headers(response.headers)
  for (const [name, value] of Object.entries(headers)) merged.set(name, value)
  return new Response(body, { status: response.status, statusText: response.statusText, headers: merged })
}
