import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { queryOf, targetOf } from '../src/http/target.js'

// The handler takes a request target apart without the URL API when it can: it must always answer
// what the URL API answers.

/** What `new URL` answers for a target, and its query grouped as the handler groups it. */
function viaUrl(target: string) {
  const url = new URL(target.startsWith('/') ? `http://localhost${target}` : target)
  const query: Record<string, string | string[]> = {}
  for (const [name, value] of url.searchParams) {
    const seen = Object.hasOwn(query, name) ? query[name] : undefined
    const next = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
    Object.defineProperty(query, name, { value: next, writable: true, enumerable: true, configurable: true })
  }
  return { path: url.pathname, search: url.search, query }
}

const parts = fc.constantFrom(
  '/', '/api/v1', '/campaigns', '/list', '.', '..', '/./', '/../', '%2e', '%2E%2e', '//', '\\', '?', '??', '#', '#x', '&', '=', '==',
  'a', 'b', '+', '%20', '%zz', '%', ' ', '"', "'", '<', '>', '`', '{', '}', 'é', '\u2028', '\t', '__proto__', 'toString', 'constructor',
  'campaignId', '11111111-1111-4111-8111-111111111111', ';', ':', '@', '$', '!', '*', '(', ')', '~', '|', '^', '[', ']',
)

describe('request targets', () => {
  it('takes a path target apart as the URL API does', () => {
    fc.assert(
      fc.property(fc.array(parts, { maxLength: 12 }), (pieces) => {
        const target = `/${pieces.join('')}`
        const expected = viaUrl(target)
        const { path, search } = targetOf(target)
        expect({ path, search }).toEqual({ path: expected.path, search: expected.search })
        expect(queryOf(search)).toEqual(expected.query)
      }),
      { numRuns: 2000 },
    )
  })

  it('takes a web Request URL apart as the URL API does', () => {
    fc.assert(
      fc.property(fc.array(parts, { maxLength: 12 }), (pieces) => {
        let url: string
        try {
          url = new Request(`http://test.local/${pieces.join('')}`).url
        } catch {
          return
        }
        const expected = viaUrl(url)
        const { path, search } = targetOf(url)
        expect({ path, search }).toEqual({ path: expected.path, search: expected.search })
        expect(queryOf(search)).toEqual(expected.query)
      }),
      { numRuns: 2000 },
    )
  })

  it('keeps every value of a repeated name, empty ones too, and names that Object.prototype has', () => {
    const query = queryOf('?a=&a=1&toString=x&__proto__=y&b')
    expect(Object.getPrototypeOf(query)).toBe(Object.prototype)
    expect(Object.keys(query)).toEqual(['a', 'toString', '__proto__', 'b'])
    expect(query.a).toEqual(['', '1'])
    expect(query.toString).toBe('x')
    expect(Object.getOwnPropertyDescriptor(query, '__proto__')?.value).toBe('y')
    expect(query.b).toBe('')
  })
})
