// Web Crypto and @noble/hashes only, like the rest of the core.
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'
import { base64, base64url } from '../crypto.js'

/** 32 bytes from the runtime's cryptographic source, as base64url (43 characters). */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)))
}

/** HMAC-SHA256 of `text` under `key`, hex: what is stored for a token, never the token itself. */
export const keyedHash = (key: Uint8Array, text: string): string => bytesToHex(hmac(sha256, key, utf8ToBytes(text)))

/** `'sha256-…'` of a text, as a Content-Security-Policy source for an inline style or script. */
export const cspHash = (text: string): string => `'sha256-${base64(sha256(utf8ToBytes(text)))}'`
