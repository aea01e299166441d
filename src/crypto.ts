// Web Crypto only: the core runs unchanged on Node, Bun, Deno and workers.
import { sha256HexOf } from './sha256.js'

export const newId = (): string => crypto.randomUUID()

const encoder = new TextEncoder()

// Up to this size (API keys, idempotency scopes) hashing in JS is far cheaper than a trip through
// `crypto.subtle`; larger inputs (request fingerprints) go to Web Crypto, off the event loop where it can.
const INLINE_HASH_BYTES = 1024

// Where short texts are encoded to be hashed: reused, as hashing never awaits.
const scratch = new Uint8Array(INLINE_HASH_BYTES)

/**
 * SHA-256 of a short UTF-8 string (an API key), as lowercase hex, answered at once; undefined for
 * a text too long to be sure it is short (then use `sha256Hex`).
 */
export function shortSha256Hex(text: string): string | undefined {
  // A UTF-8 encoding takes at most 3 bytes per UTF-16 unit: such a text surely fits the scratch.
  if (text.length * 3 > INLINE_HASH_BYTES) return undefined
  return sha256HexOf(scratch.subarray(0, encoder.encodeInto(text, scratch).written))
}

/** SHA-256 of a UTF-8 string, as lowercase hex. */
export async function sha256Hex(text: string): Promise<string> {
  const short = shortSha256Hex(text)
  if (short !== undefined) return short
  const data = encoder.encode(text)
  if (data.length <= INLINE_HASH_BYTES) return sha256HexOf(data)
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data))
  let hex = ''
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0')
  return hex
}

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
