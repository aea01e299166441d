import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '../src/crypto.js'
import { sha256HexOf } from '../src/sha256.js'

const encoder = new TextEncoder()
const webCrypto = async (data: Uint8Array) => Buffer.from(await crypto.subtle.digest('SHA-256', new Uint8Array(data))).toString('hex')

describe('sha256', () => {
  it('matches the FIPS 180-4 examples', () => {
    expect(sha256HexOf(encoder.encode('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(sha256HexOf(new Uint8Array())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256HexOf(encoder.encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    )
  })

  it('matches Web Crypto at every length around the block and padding boundaries', async () => {
    for (let length = 0; length <= 200; length++) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 131 + length) & 0xff)
      expect(sha256HexOf(data), `length ${length}`).toBe(await webCrypto(data))
    }
  })

  it('matches Web Crypto on any bytes, and sha256Hex on any text, short or long', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), async (data) => {
        expect(sha256HexOf(data)).toBe(await webCrypto(data))
      }),
    )
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 800 }), async (text) => {
        expect(await sha256Hex(text)).toBe(await webCrypto(encoder.encode(text)))
      }),
    )
  })
})
