import type { AffiliateService } from '../src/service.js'

type Fetch = Pick<AffiliateService, 'fetch'>

/** The part of Bun's `Bun.serve` this adapter uses, declared here so the package needs no Bun types. */
interface BunServer {
  readonly hostname: string
  readonly port: number
  stop(closeActiveConnections?: boolean): Promise<void> | void
}
declare const Bun: {
  serve(options: { port: number; hostname: string; fetch(request: Request): Promise<Response> }): BunServer
}

export interface BunServeOptions {
  /** @default 3000; 0 picks a free port */
  port?: number
  /** @default '127.0.0.1' */
  hostname?: string
}

export interface BunRunningServer {
  /** What `Bun.serve` returned. */
  server: BunServer
  /** `http://<host>:<port>/api/v1` */
  url: string
  /** Stops accepting and lets requests in flight finish. */
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
  const server = Bun.serve({
    port: options.port ?? 3000,
    hostname: options.hostname ?? '127.0.0.1',
    fetch: (request) => service.fetch(request),
  })
  const host = server.hostname.includes(':') ? `[${server.hostname}]` : server.hostname
  return { server, url: `http://${host}:${server.port}/api/v1`, close: async () => void (await server.stop()) }
}
