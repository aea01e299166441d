import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { withClickId } from '../../src/http/tracking.js'

// The redirect's target: the link's url with clickId set, as URL.searchParams.set sets it, from the
// text kept around the id after the first time.
const bySearchParams = (url: string, clickId: string) => {
  const location = new URL(url)
  location.searchParams.set('clickId', clickId)
  return location.toString()
}

describe('withClickId', () => {
  it.each([
    'https://shop.example.com/',
    'https://shop.example.com/pricing?plan=pro&ref=a%20b',
    'https://shop.example.com/?clickId=old&x=1&clickId=older',
    'https://shop.example.com/p?q=a b+c#section',
    'https://shop.example.com/#00000000-0000-7000-8000-000000000000',
    'https://xn--bcher-kva.example/ä?ü=ö',
  ])('sets the clickId of %s exactly as URLSearchParams does, every time', (url) => {
    for (const id of [crypto.randomUUID(), crypto.randomUUID()]) expect(withClickId(url, id)).toBe(bySearchParams(url, id))
  })

  it('agrees with URLSearchParams for any web url', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.uuid(), (url, id) => {
        expect(withClickId(url, id)).toBe(bySearchParams(url, id))
      }),
      { numRuns: 300 },
    )
  })
})
