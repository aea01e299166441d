// The handler takes a request's query from the one itty-router reads while routing, reading the URL
// again only when that one could differ (an empty or repeated value). Whatever the query string,
// the operations must see exactly what URLSearchParams says: name -> value, a repeated name -> its
// values in order, every name an own property of an object without a prototype.
import fc from 'fast-check'
import { Router } from 'itty-router'
import { describe, expect, it } from 'vitest'
import { queryOf } from '../../src/http/handler.js'

/** What URLSearchParams says of `search`, built independently of the handler. */
function expected(search: string): Record<string, string | string[]> {
  const values = new Map<string, string[]>()
  for (const [name, value] of new URLSearchParams(search)) values.set(name, [...(values.get(name) ?? []), value])
  const out = Object.create(null) as Record<string, string | string[]>
  for (const [name, list] of values) out[name] = list.length === 1 ? list[0]! : list
  return out
}

const router = Router()
router.get('*', (request) => ({ query: queryOf(request) }))

const urlOf = (search: string) => `http://localhost/api/v1/campaigns${search}`

async function routed(search: string) {
  const answer = (await router.fetch(new Request(urlOf(search)))) as { query: Record<string, unknown> }
  return answer.query
}

// Few names, so names repeat; values often empty; names and values with characters that need encoding.
const name = fc.oneof(
  fc.constantFrom('a', 'b', 'page', '__proto__', 'constructor', 'toString', '', 'a b', 'é', '%'),
  fc.string({ maxLength: 4 }),
)
const value = fc.oneof(fc.constant(''), fc.constantFrom('0', 'x', '+', ' ', '%zz', '=', '&', 'ü'), fc.string({ maxLength: 6 }))
const part = fc.record({ name, value, encode: fc.boolean(), equals: fc.boolean() }).map(({ name, value, encode, equals }) => {
  const code = (text: string) => (encode ? encodeURIComponent(text) : text.replace(/[&=#]/g, encodeURIComponent))
  return value === '' && !equals ? code(name) : `${code(name)}=${code(value)}`
})
const search = fc.array(part, { maxLength: 8 }).map((parts) => (parts.length === 0 ? '' : `?${parts.join('&')}`))

describe('the query the operations see', () => {
  it('is what URLSearchParams reads, for any query string', async () => {
    await fc.assert(
      fc.asyncProperty(search, async (text) => {
        const query = await routed(text)
        // The query string as the URL parser leaves it (it drops trailing spaces, encodes others).
        const want = expected(new URL(urlOf(text)).search)
        expect(Object.getPrototypeOf(query)).toBe(null)
        expect({ ...query }).toEqual({ ...want })
        expect(Object.keys(query)).toEqual(Object.keys(want))
      }),
      { numRuns: 2000 },
    )
  })

  it('keeps an empty first value of a repeated name, which itty-router drops', async () => {
    expect({ ...(await routed('?a=&a=x')) }).toEqual({ a: ['', 'x'] })
    expect({ ...(await routed('?a&a')) }).toEqual({ a: ['', ''] })
    expect({ ...(await routed('?__proto__=1&b=2')) }).toEqual({ ['__proto__']: '1', b: '2' })
  })
})
