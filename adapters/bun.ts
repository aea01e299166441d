import type { AffiliateService } from '../src/service.js'
import { clientBehindProxies, proxyHops, withForwardedScheme, type TrustProxy } from './forwarded.js'

export type { TrustProxy } from './forwarded.js'

type Fetch = Pick<AffiliateService, 'fetch'> & {
  readonly basePath?: string
  /** The service's background work: `serve()` starts it and closes it on `close()`. */
  start?: AffiliateService['start']
  close?: AffiliateService['close']
}

/** The part of Bun's `Bun.serve` this adapter uses, declared here so the package needs no Bun types. */
interface BunServer {
  readonly hostname: string
  readonly port: number
  stop(closeActiveConnections?: boolean): Promise<void> | void
  requestIP(request: Request): { address: string } | null
}
declare const Bun: {
  serve(options: { port: number; hostname: string; fetch(request: Request, server: BunServer): Promise<Response> }): BunServer
}

export interface BunServeOptions {
  /** @default 3000; 0 picks a free port */
  port?: number
  /** @default '127.0.0.1' */
  hostname?: string
  /** Proxies of your own in front of Bun, for the client address and the scheme the client used (see `TrustProxy`). @default false */
  trustProxy?: TrustProxy
}

export interface BunRunningServer {
  /** What `Bun.serve` returned. */
  server: BunServer
  /** `http://<host>:<port><basePath>` */
  url: string
  /** Stops accepting, lets requests in flight finish, then closes the service's background work (`service.close()`: clicks written, webhook attempts recorded). */
  close(): Promise<void>
}

/**
 * Serves the service with `Bun.serve`. Bun can also serve it with no adapter at all:
 * `export default service` in the entry file (the service has a `fetch`).
 *
 * @example
 * import { serve } from 'affiliate-service/bun'
 *
 * const running = serve(service, { port: 3000 })
 * console.log(`listening on ${running.url}`)
 */
export function serve(service: Fetch, options: BunServeOptions = {}): BunRunningServer {
  const hops = proxyHops(options.trustProxy) // a bad value throws now, not per request
  const server = Bun.serve({
    port: options.port ?? 3000,
    hostname: options.hostname ?? '127.0.0.1',
    fetch: (request, bun) =>
      service.fetch(withForwardedScheme(request, hops), {
        clientAddress: clientBehindProxies(request.headers.get('x-forwarded-for'), bun.requestIP(request)?.address, hops),
      }),
  })
  const host = server.hostname.includes(':') ? `[${server.hostname}]` : server.hostname
  // The background work starts with the server. Webhooks are delivered when the service has a
  // sender (`webhooks.send`): the SSRF-pinned sender of this package is Node's
  // (adapters/node/webhook-delivery.ts); without one, `onError` says delivery is not started.
  service.start?.()
  return {
    server,
    url: `http://${host}:${server.port}${service.basePath ?? '/api/v1'}`,
    close: async () => {
      await server.stop()
      await service.close?.()
    },
  }
}
