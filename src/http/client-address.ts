import type { Runtime } from '../runtime.js'

/**
 * The second argument of `service.fetch`, which says who is calling. The adapters of this package
 * pass `{ clientAddress }`; what Bun (`Server`), Deno (`ServeHandlerInfo`) and `@hono/node-server`
 * (`{ incoming }`) pass as that argument is understood as well, so `export default service` under
 * Bun or Deno, and `app.mount(path, service.fetch)` in Hono, know the client's address too.
 */
export interface FetchContext {
  /** The address of the client that sent the request (after any proxy the host trusts). */
  clientAddress?: string | undefined
  /**
   * What the caller's runtime does faster (see `Runtime`): the Node and Express adapters pass
   * `nodeRuntime` from `affiliate-service/node`.
   * @default the portable runtime (@noble/hashes, real Responses)
   */
  runtime?: Runtime | undefined
}

type Loose = {
  clientAddress?: unknown
  requestIP?: (request: Request) => { address?: unknown } | null
  remoteAddr?: { hostname?: unknown }
  incoming?: { socket?: { remoteAddress?: unknown } }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)

/** The client's address, when the host said it; undefined for an in-process call. */
export function clientAddressOf(request: Request, context: unknown): string | undefined {
  if (typeof context !== 'object' || context === null) return undefined
  const given = context as Loose
  if ('clientAddress' in given) return text(given.clientAddress)
  if (typeof given.requestIP === 'function') return text(given.requestIP(request)?.address)
  if (given.remoteAddr) return text(given.remoteAddr.hostname)
  return text(given.incoming?.socket?.remoteAddress)
}
