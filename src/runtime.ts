import { base64url, hmacSha256, sha256Bytes, sha256Hex } from './crypto.js'

/**
 * What a runtime does faster than the portable code the service runs everywhere. An adapter hands
 * it to the service with each request (`FetchContext.runtime`): the Node and Express adapters pass
 * `nodeRuntime` from `affiliate-service/node` (node:crypto's hashes, and answers the adapter writes
 * without reading a stream). Without one, the service uses `@noble/hashes`, `btoa` and real
 * Responses, which run on Node, Bun, Deno and workers alike. Each function gives exactly the bytes
 * the portable one gives: visitor hashes and click ids are stored, and every instance must agree.
 */
export interface Runtime {
  /** HMAC-SHA256 of `text` (UTF-8) under `key`: every click's visitor hash. */
  hmacSha256(key: Uint8Array, text: string): Uint8Array
  /** SHA-256 of `text` (UTF-8): a repeated visitor's click id. */
  sha256(text: string): Uint8Array
  /** SHA-256 of `text` (UTF-8) as lowercase hex: every API key presented (see `KeyStore.resolve`). */
  sha256Hex(text: string): string
  /** `bytes` as unpadded base64url (RFC 4648 §5). */
  base64url(bytes: Uint8Array): string
  /**
   * An answer of the API: `headers` with lower-case names, `body` the text (null for none). The
   * service never reads it back; whoever called `fetch` gets it.
   */
  response(status: number, headers: Record<string, string>, body: string | null): Response
}

/** The runtime every host has: the service's default. */
export const portableRuntime: Runtime = {
  hmacSha256,
  sha256: sha256Bytes,
  sha256Hex,
  base64url,
  response: (status, headers, body) => new Response(body, { status, headers }),
}

/** The runtime a `fetch` caller passed in its context (`{ runtime }`), else the portable one. */
export function runtimeOf(context: unknown): Runtime {
  const given = typeof context === 'object' && context !== null ? (context as { runtime?: unknown }).runtime : undefined
  return typeof given === 'object' && given !== null ? (given as Runtime) : portableRuntime
}
