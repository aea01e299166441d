import type { AffiliateService } from '../src/service.js'
import { clientBehindProxies, proxyHops, withForwardedScheme, type TrustProxy } from './forwarded.js'

export type { TrustProxy } from './forwarded.js'

type Fetch = Pick<AffiliateService, 'fetch'> & {
  readonly basePath?: string
  /** The service's background work: `serve()` starts it and closes it on `close()`. */
  start?: AffiliateService['start']
  close?: AffiliateService['close']
}

/** The part of `Deno.serve`'s server this adapter uses, declared here so the package needs no Deno types. */
interface DenoServer {
  readonly addr: { hostname: string; port: number }
  readonly finished: Promise<void>
  shutdown(): Promise<void>
}
declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { hostname: string; port: number }) => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): DenoServer
}

export interface DenoServeOptions {
  /** @default 3000; 0 picks a free port */
  port?: number
  /** @default '127.0.0.1' */
  hostname?: string
  /** Proxies of your own in front of Deno, for the client address and the scheme the client used (see `TrustProxy`). @default false */
  trustProxy?: TrustProxy
}

export interface DenoRunningServer {
  /** What `Deno.serve` returned. */
  server: DenoServer
  /** `http://<host>:<port><basePath>` */
  url: string
  /** Stops accepting, lets requests in flight finish, then closes the service's background work (`service.close()`: clicks written, webhook attempts recorded). */
  close(): Promise<void>
}

/**
 * Serves the service with `Deno.serve` (quietly: the caller prints what it likes). Deno can also
 * serve it with no adapter at all: `export default service` and `deno serve`.
 *
 * @example
 * import { serve } from 'affiliate-service/deno'
 *
 * const running = serve(service, { port: 3000 })
 * console.log(`listening on ${running.url}`)
 */
export function serve(service: Fetch, options: DenoServeOptions = {}): DenoRunningServer {
  const hops = proxyHops(options.trustProxy) // a bad value throws now, not per request
  const server = Deno.serve(
    { port: options.port ?? 3000, hostname: options.hostname ?? '127.0.0.1', onListen: () => undefined },
    (request, info) =>
      service.fetch(withForwardedScheme(request, hops), {
        clientAddress: clientBehindProxies(request.headers.get('x-forwarded-for'), info.remoteAddr.hostname, hops),
      }),
  )
  const { hostname, port } = server.addr
  const host = hostname.includes(':') ? `[${hostname}]` : hostname
  // The background work starts with the server. Webhooks are delivered when the service has a
  // sender (`webhooks.send`): the SSRF-pinned sender of this package is Node's
  // (adapters/node/webhook-delivery.ts); without one, `onError` says delivery is not started.
  service.start?.()
  return {
    server,
    url: `http://${host}:${port}${service.basePath ?? '/api/v1'}`,
    close: async () => {
      await server.shutdown()
      await service.close?.()
    },
  }
}
