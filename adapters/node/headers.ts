import { lazyPrototype } from '../../src/http/lazy-prototype.js'

// The service reads a handful of request headers with `get` (the key, the content type and
// length, `Idempotency-Key`); building an undici Headers from every raw header costs a validated
// `append` each. So the Node adapter's Request hands out a view of `req.rawHeaders` that answers
// `get` and `has` by reading that list, and builds the real Headers (cached) the first time
// anything else is asked of it: a change, iteration, `forEach`, `getSetCookie`...

const kRaw = Symbol('raw headers')
const kReal = Symbol('real headers')

interface View {
  [kRaw]: readonly string[]
  [kReal]?: Headers
}

/** A header name as the Fetch standard takes it (an HTTP token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/i

/**
 * Header `name` (lower case) of a raw list (`[name, value, name, value...]`) as `Headers.get`
 * answers it: every value in order, joined by `, ` (`; ` for `cookie`), or null when absent.
 */
export function rawHeader(raw: readonly string[], name: string): string | null {
  let value: string | null = null
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!
    if (key.length !== name.length || key.toLowerCase() !== name) continue
    value = value === null ? raw[i + 1]! : value + (name === 'cookie' ? '; ' : ', ') + raw[i + 1]!
  }
  return value
}

function real(self: View): Headers {
  if (self[kReal]) return self[kReal]
  const headers = new Headers()
  const raw = self[kRaw]
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  return (self[kReal] = headers)
}

/** `get` / `has` of the view: from the raw list while no real Headers exists (a name that is no token throws, as Headers' own does). */
function lookUp(self: View, name: string): string | null {
  if (self[kReal] || typeof name !== 'string' || !TOKEN.test(name)) return real(self).get(name)
  return rawHeader(self[kRaw], name.toLowerCase())
}

// Everything not answered below is the real Headers', built on first use.
const proto = lazyPrototype<View>(Headers.prototype, real)
const delegated = [Symbol.iterator, Symbol.for('nodejs.util.inspect.custom')]
for (const symbol of delegated) {
  Object.defineProperty(proto, symbol, {
    configurable: true,
    value(this: View, ...args: unknown[]) {
      const target = real(this)
      return (Reflect.get(target, symbol) as (...a: unknown[]) => unknown).apply(target, args)
    },
  })
}
Object.defineProperties(proto, {
  get: {
    value(this: View, name: string): string | null {
      return lookUp(this, name)
    },
  },
  has: {
    value(this: View, name: string): boolean {
      if (this[kReal]) return this[kReal].has(name)
      return lookUp(this, name) !== null
    },
  },
})

/** The request headers of `rawHeaders` as a Headers (`instanceof Headers` holds), reading the list until more than `get` / `has` is asked. */
export function nodeHeaders(raw: readonly string[]): Headers {
  const self = Object.create(proto) as View
  self[kRaw] = raw
  return self as unknown as Headers
}
