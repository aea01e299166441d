// A Response that is only data until someone needs more. Building an undici Response (Headers,
// a body stream, an abort signal) costs more than the rest of a request, and the Node adapter reads
// the service's answers only as status, headers and text, which it writes with one `end()`. So the
// adapter has the service answer (through `nodeRuntime.response`) with an object whose prototype
// chain is Response's (`instanceof Response` holds) that keeps the status, the headers and the
// text, and builds the real Response the first time anything else is asked for (`body`, `clone()`,
// `arrayBuffer()`...), the same idea as @hono/node-server's light Response. A host's middleware
// that reads or changes the answer still gets a Response that works. Bun, Deno and workers hand
// the service's answer to a server written in another language, which wants a real one: their
// adapters ask for none of this. Measured: BENCHMARKS.md, the peers and clicks rows.

import { lazyPrototype } from './lazy-prototype.js'

const kParts = Symbol('parts')
const kReal = Symbol('real response')
const kHeaders = Symbol('headers')
const kUsed = Symbol('used')

/** What a light Response is made of. */
export interface ResponseParts {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  /** The text of the body; null for none (HEAD). */
  body: string | null
}

interface Light {
  [kParts]: ResponseParts
  [kReal]?: Response
  [kHeaders]?: Headers
  [kUsed]: boolean
}

function real(self: Light): Response {
  if (self[kReal]) return self[kReal]
  const { status, body } = self[kParts]
  if (self[kUsed]) {
    // The text was already taken: the real Response's body is used up as well.
    const used = new Response(body, { status, headers: headersOf(self) })
    void used.text()
    return (self[kReal] = used)
  }
  return (self[kReal] = new Response(body, { status, headers: headersOf(self) }))
}

function headersOf(self: Light): Headers {
  if (self[kReal]) return self[kReal].headers
  return (self[kHeaders] ??= new Headers(self[kParts].headers))
}

const usedError = () => new TypeError('Body is unusable: Body has already been read')

function takeText(self: Light): Promise<string> {
  if (self[kReal]) return self[kReal].text()
  if (self[kUsed]) return Promise.reject(usedError())
  self[kUsed] = true
  return Promise.resolve(self[kParts].body ?? '')
}

// Everything not answered below is the real Response's, built on first use.
const proto = lazyPrototype<Light>(Response.prototype, real)
Object.defineProperties(proto, {
  status: {
    get(this: Light) {
      return this[kReal]?.status ?? this[kParts].status
    },
  },
  ok: {
    get(this: Light) {
      const status = this[kReal]?.status ?? this[kParts].status
      return status >= 200 && status < 300
    },
  },
  headers: {
    get(this: Light) {
      return headersOf(this)
    },
  },
  bodyUsed: {
    get(this: Light) {
      return this[kReal] ? this[kReal].bodyUsed : this[kUsed]
    },
  },
  text: {
    value(this: Light) {
      return takeText(this)
    },
  },
  json: {
    value(this: Light) {
      return takeText(this).then((text) => JSON.parse(text) as unknown)
    },
  },
})

/** A Response holding `parts` until more than status, headers and text is asked of it. */
export function lightResponse(parts: ResponseParts): Response {
  const self = Object.create(proto) as Light
  self[kParts] = parts
  self[kUsed] = false
  // The one object that is a Response without being made by one: its prototype chain ends at
  // Response.prototype, and each getter answers from the parts (or from a real Response once asked more).
  return self as unknown as Response
}

/**
 * The parts of a light Response nobody has read or changed yet (no real Response built, body not
 * taken, headers not touched): what a server can write as it is. Undefined for any other Response.
 */
export function untouchedParts(response: Response): ResponseParts | undefined {
  const self: Response & Partial<Light> = response
  if (self[kParts] === undefined || self[kReal] || self[kUsed] || self[kHeaders]) return undefined
  return self[kParts]
}
