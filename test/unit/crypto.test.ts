import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { base64, base64url, sha256Hex, sha256HexPortable } from '../../src/crypto.js'

describe('sha256Hex', () => {
  it('gives the known digests', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('answers exactly as the portable @noble/hashes path, for any text (native on Node)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => sha256Hex(text) === sha256HexPortable(text)), { numRuns: 500 })
  })
})

describe('base64 and base64url', () => {
  it('encode any bytes exactly as Node does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(base64(bytes)).toBe(Buffer.from(bytes).toString('base64'))
        expect(base64url(bytes)).toBe(Buffer.from(bytes).toString('base64url'))
      }),
      { numRuns: 500 },
    )
  })
})
