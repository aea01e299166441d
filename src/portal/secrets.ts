// Web Crypto and @noble/hashes only, like the rest of the core.
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'

/** 32 bytes from the runtime's cryptographic source, as base64url (43 characters). */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)))
}

/** Bytes as unpadded base64url. */
export function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** HMAC-SHA256 of `text` under `key`, hex: what is stored for a token, never the token itself. */
export const keyedHash = (key: Uint8Array, text: string): string => bytesToHex(hmac(sha256, key, utf8ToBytes(text)))

/** `'sha256-…'` of a text, as a Content-Security-Policy source for an inline style or script. */
export const cspHash = (text: string): string => `'sha256-${btoa(String.fromCharCode(...sha256(utf8ToBytes(text))))}'`
