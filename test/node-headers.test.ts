// The Node adapter hands the service a view of `req.rawHeaders` as the Request's headers: `get`
// and `has` read the raw list, anything else builds the real Headers. Every answer must be the one
// a Headers built from the same list gives.
import { inspect } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { nodeHeaders, rawHeader } from '../adapters/node/headers.js'

const built = (raw: readonly string[]) => {
  const headers = new Headers()
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  return headers
}

// Few names in mixed case, so names repeat; `cookie` joins with '; ', the others with ', '.
const name = fc.constantFrom('Host', 'host', 'X-Auth-Service', 'x-auth-service', 'Content-Type', 'Cookie', 'cookie', 'Accept', 'X-A', 'Set-Cookie')
const value = fc.stringMatching(/^[!-~]([ -~]{0,10}[!-~])?$/)
const rawList = fc.array(fc.tuple(name, value), { maxLength: 10 }).map((pairs) => pairs.flat())
const asked = ['host', 'HOST', 'x-auth-service', 'content-type', 'cookie', 'Cookie', 'accept', 'x-a', 'set-cookie', 'absent']

describe('the Node adapter request headers', () => {
  it('get and has answer what a Headers built from the same raw list answers', () => {
    fc.assert(
      fc.property(rawList, (raw) => {
        const view = nodeHeaders(raw)
        const headers = built(raw)
        for (const header of asked) {
          expect(view.get(header)).toBe(headers.get(header))
          expect(view.has(header)).toBe(headers.has(header))
        }
        expect([...view]).toEqual([...headers])
      }),
      { numRuns: 500 },
    )
  })

  it('is a Headers: instanceof, changes, iteration, copies, getSetCookie, inspect', () => {
    const raw = ['Host', 'a.example', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-One', '1']
    const view = nodeHeaders(raw)
    expect(view).toBeInstanceOf(Headers)
    expect(view.getSetCookie()).toEqual(['a=1', 'b=2'])
    view.set('x-one', '2')
    view.append('x-two', 'x')
    view.delete('host')
    expect([view.get('x-one'), view.get('x-two'), view.get('host'), view.has('host')]).toEqual(['2', 'x', null, false])
    expect(new Headers(view).get('x-two')).toBe('x')
    expect(Object.fromEntries(view.entries())).toEqual(Object.fromEntries(new Headers(view).entries()))
    expect(inspect(nodeHeaders(['X-A', '1']))).toMatch(/x-a.*1/i)
    expect(raw).toEqual(['Host', 'a.example', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-One', '1'])
  })

  it('refuses a name that is not a header name, as Headers does', () => {
    expect(() => new Headers().get('no good')).toThrow(TypeError)
    expect(() => nodeHeaders(['X-A', '1']).get('no good')).toThrow(TypeError)
    expect(() => nodeHeaders(['X-A', '1']).has('')).toThrow(TypeError)
  })

  it('rawHeader joins repeated values in order', () => {
    expect(rawHeader(['A', '1', 'b', '2', 'a', '3'], 'a')).toBe('1, 3')
    expect(rawHeader(['Cookie', 'x=1', 'cookie', 'y=2'], 'cookie')).toBe('x=1; y=2')
    expect(rawHeader(['A', '1'], 'b')).toBe(null)
  })
})
