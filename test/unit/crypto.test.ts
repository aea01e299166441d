import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { base64, base64url, hmacSha256, sha256Bytes, sha256Hex } from '../../src/crypto.js'

describe('sha256Hex', () => {
  it('gives the known digests', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('answers exactly as node:crypto does, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => sha256Hex(text) === createHash('sha256').update(text, 'utf8').digest('hex')),
      { numRuns: 500 },
    )
  })
})

describe('hmacSha256 and sha256Bytes', () => {
  it('give RFC 4231 test case 2 and the known digest', () => {
    expect(bytesToHex(hmacSha256(utf8ToBytes('Jefe'), 'what do ya want for nothing?'))).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
    expect(bytesToHex(sha256Bytes('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('answer exactly as @noble/hashes does, for any key and text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.string({ unit: 'binary' }), (key, text) => {
        expect(bytesToHex(hmacSha256(key, text))).toBe(bytesToHex(hmac(sha256, key, utf8ToBytes(text))))
        expect(bytesToHex(sha256Bytes(text))).toBe(bytesToHex(sha256(utf8ToBytes(text))))
      }),
      { numRuns: 300 },
    )
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
