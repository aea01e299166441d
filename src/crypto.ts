// Hashing that runs unchanged on Node, Bun, Deno and workers: @noble/hashes, synchronous (keys
// are hashed on the request path, where Web Crypto's promise would cost more than the hash). A
// runtime with a faster hash hands it to the service through its adapter (`Runtime`, runtime.ts):
// the results are the same bytes.
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'

export const newId = (): string => crypto.randomUUID()

/** SHA-256 of a UTF-8 string, as lowercase hex. */
export const sha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)))

/** SHA-256 of a UTF-8 string, as bytes. */
export const sha256Bytes = (text: string): Uint8Array => sha256(utf8ToBytes(text))

/** HMAC-SHA256 of a UTF-8 string under `key`. */
export const hmacSha256 = (key: Uint8Array, text: string): Uint8Array => hmac(sha256, key, utf8ToBytes(text))

/** Bytes as standard base64, padded. */
export function base64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** Bytes as unpadded base64url (RFC 4648 §5). */
export const base64url = (bytes: Uint8Array): string => base64(bytes).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')

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
