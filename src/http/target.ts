/** A request target taken apart: what `new URL(url)` would answer, read once per request. */
export interface Target {
  /** As `URL#pathname`. */
  path: string
  /** As `URL#search`: `?` and the query, or `''` when it is empty. */
  search: string
}

/** The query string as name -> value, a repeated name -> every value in order. */
export type Query = Record<string, string | string[]>

// Query characters the URL parser leaves as they are (it percent-encodes controls, space, " # < > '
// and non-ASCII): a query made only of these is already what `URL#search` would answer.
const CANONICAL_QUERY = /^[\x21\x24-\x26\x28-\x3b\x3d\x3f-\x7e]*$/
// A path of these characters with no dot segment is already what `URL#pathname` would answer.
const CANONICAL_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@]*)+$/

const viaUrl = (url: string): Target => {
  // A path is put after an origin rather than resolved against one: `//a/b` is a path here, not a host.
  const parsed = new URL(url.charCodeAt(0) === 47 ? `http://localhost${url}` : url)
  return { path: parsed.pathname, search: parsed.search }
}

/**
 * Splits a request target (a path with its query, or an absolute URL) as the URL parser would,
 * without building a URL for the common case: a clean path and query need no parsing, only
 * slicing. Anything the parser would rewrite (dot segments, characters it encodes) goes through
 * `new URL`, so the answer is always the parser's.
 */
export function targetOf(url: string): Target {
  let start = 0
  if (url.charCodeAt(0) !== 47 /* / */) {
    // An absolute URL (a web Request's, already serialized by the URL parser): the path starts at
    // the first slash after the authority.
    const scheme = url.indexOf('://')
    start = scheme < 0 ? -1 : url.indexOf('/', scheme + 3)
    if (start < 0) return viaUrl(url)
  }
  const hash = url.indexOf('#', start)
  const end = hash < 0 ? url.length : hash
  const mark = url.indexOf('?', start)
  const pathEnd = mark < 0 || mark > end ? end : mark
  const path = url.slice(start, pathEnd)
  const query = pathEnd < end ? url.slice(pathEnd + 1, end) : ''
  if (!CANONICAL_PATH.test(path) || !CANONICAL_QUERY.test(query)) return viaUrl(url)
  return { path, search: query ? `?${query}` : '' }
}

/** Sets `name` as an own property, `__proto__` included (assigning that one would set the prototype). */
const own = (query: Query, name: string, value: string | string[]) => {
  if (name === '__proto__') Object.defineProperty(query, name, { value, writable: true, enumerable: true, configurable: true })
  else query[name] = value
}

function add(query: Query, name: string, value: string): void {
  if (!Object.hasOwn(query, name)) own(query, name, value)
  else {
    const seen = query[name]!
    own(query, name, Array.isArray(seen) ? [...seen, value] : [seen, value])
  }
}

/**
 * The query of `search` as `URL#searchParams` reads it, in a plain object whose properties are
 * all its own (looked up with `Object.hasOwn`, so `toString` or `__proto__` are names like any
 * other; a null-prototype object costs more to fill than the rest of the parse). Built here rather
 * than taken from itty-router, whose `request.query` drops an empty first value (`?a=&a=1` gives
 * `a: "1"`), so such a repeat would slip past the "must be given once" check.
 */
export function queryOf(search: string): Query {
  const query: Query = {}
  const length = search.length
  if (length <= 1) return query
  if (search.includes('%') || search.includes('+')) {
    // Escapes to decode: URLSearchParams decodes them exactly as the URL API does.
    for (const [name, value] of new URLSearchParams(search)) add(query, name, value)
    return query
  }
  for (let start = 1; start < length; ) {
    let end = search.indexOf('&', start)
    if (end < 0) end = length
    if (end > start) {
      const eq = search.indexOf('=', start)
      if (eq < 0 || eq > end) add(query, search.slice(start, end), '')
      else add(query, search.slice(start, eq), search.slice(eq + 1, end))
    }
    start = end + 1
  }
  return query
}
