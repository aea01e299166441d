import { createHmac, hash } from 'node:crypto'
import type { Runtime } from '../../src/runtime.js'
import { lightResponse } from './light-response.js'

/**
 * What Node does faster than the service's portable code, handed to it with each request by the
 * Node and Express adapters (`FetchContext.runtime`): node:crypto's SHA-256 and HMAC (every keyed
 * request hashes its key, every click its visitor: a tenth and a third of @noble/hashes' cost),
 * Buffer's base64url, and light Responses,
 * which the adapter writes with one `end()` (BENCHMARKS.md, the peers and clicks rows). The same
 * bytes as the portable runtime; an in-process caller on Node may pass it too.
 *
 * @example
 * const response = await service.fetch(request, { runtime: nodeRuntime })
 */
export const nodeRuntime: Runtime = {
  hmacSha256: (key, text) => createHmac('sha256', key).update(text, 'utf8').digest(),
  sha256: (text) => hash('sha256', text, 'buffer'),
  sha256Hex: (text) => hash('sha256', text, 'hex'),
  base64url: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url'),
  response: (status, headers, body) => lightResponse({ status, headers, body }),
}
