// Hashing that runs unchanged on Node, Bun, Deno and workers: the runtime's own node:crypto and
// Buffer where it has them (found without an import, below), else Web Crypto and @noble/hashes,
// which give the same bytes.
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'

export const newId = (): string => crypto.randomUUID()

interface NativeHash {
  createHash(algorithm: 'sha256'): { update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string; digest(): Uint8Array } }
  createHmac(algorithm: 'sha256', key: Uint8Array): { update(text: string, encoding: 'utf8'): { digest(): Uint8Array } }
  /** One-shot hash (Node 20.12+): no Hash object per call. */
  hash?: ((algorithm: 'sha256', text: string, encoding: 'hex') => string) & ((algorithm: 'sha256', text: string, encoding: 'buffer') => Uint8Array)
}

// The runtime's own SHA-256 where it offers one without an import (Node 20.16+ and Bun through
// `process.getBuiltinModule`): every keyed request hashes its key, and the native hash costs a
// fraction of the JavaScript one (BENCHMARKS.md, peers); its one-shot `hash` where there is one
// (a third of `createHash`'s cost). Elsewhere (Deno, workers, browsers), @noble/hashes.
const native = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
  | NativeHash
  | undefined

/** SHA-256 of a UTF-8 string, as lowercase hex, with @noble/hashes: the same result as `sha256Hex` everywhere. */
export const sha256HexPortable = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)))

/** SHA-256 of a UTF-8 string, as lowercase hex. Synchronous: keys are hashed on the request path. */
export const sha256Hex: (text: string) => string = native
  ? typeof native.hash === 'function'
    ? (text) => native.hash!('sha256', text, 'hex')
    : (text) => native.createHash('sha256').update(text, 'utf8').digest('hex')
  : sha256HexPortable

/**
 * SHA-256 of a UTF-8 string, as bytes: the runtime's own hash where there is one (as `sha256Hex`),
 * else @noble/hashes. Every click derives its id with it (`keyedTimeUuid`).
 */
export const sha256Bytes: (text: string) => Uint8Array = native
  ? typeof native.hash === 'function'
    ? (text) => native.hash!('sha256', text, 'buffer')
    : (text) => native.createHash('sha256').update(text, 'utf8').digest()
  : (text) => sha256(utf8ToBytes(text))

/**
 * HMAC-SHA256 of a UTF-8 string under `key`: the runtime's own where there is one, else
 * @noble/hashes (the same bytes). Every click hashes its visitor with it; the native one costs a
 * third of the JavaScript one (BENCHMARKS.md, row 8c).
 */
export const hmacSha256: (key: Uint8Array, text: string) => Uint8Array = native
  ? (key, text) => native.createHmac('sha256', key).update(text, 'utf8').digest()
  : (key, text) => hmac(sha256, key, utf8ToBytes(text))

/** Bytes as standard base64, padded. */
export function base64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

interface NativeBuffer {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: 'base64url'): string }
}
const NativeBuffer = (globalThis as { Buffer?: NativeBuffer }).Buffer

/**
 * Bytes as unpadded base64url (RFC 4648 §5): the runtime's own encoder where it has `Buffer`
 * (Node, Bun: every click's visitor hash is one; its HMAC and text went from 3.7 to 3.0 µs), else
 * built from `btoa`.
 */
export const base64url: (bytes: Uint8Array) => string = NativeBuffer
  ? (bytes) => NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
  : (bytes) => base64(bytes).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')

/** Compares two strings in time that depends only on their lengths, never on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

/** `count` characters drawn uniformly from `alphabet` (rejection sampling, no modulo bias). */
export function randomString(alphabet: string, count: number): string {
  const limit = 256 - (256 % alphabet.length)
  let out = ''
  while (out.length < count) {
    for (const byte of crypto.getRandomValues(new Uint8Array(count * 2))) {
      if (byte < limit && out.length < count) out += alphabet[byte % alphabet.length]
    }
  }
  return out
}
