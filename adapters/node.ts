import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { OnError } from '../src/on-error.js'
import type { AffiliateService } from '../src/service.js'
import { clientBehindProxies, protocolBehindProxies, proxyHops, type TrustProxy } from './forwarded.js'
import { answer, type ClientAddressOf, type ProtocolOf } from './node/answer.js'
import { createNodeWebhookSender } from './node/webhook-delivery.js'

export { fileJournal, type FileJournalOptions } from './node/file-journal.js'
export type { TrustProxy } from './forwarded.js'
export type { ClientAddressOf } from './node/answer.js'
export { createNodeWebhookSender } from './node/webhook-delivery.js'
export { nodeRuntime } from './node/runtime.js'
export type { NodeWebhookSenderOptions, ResolveHost } from './node/webhook-delivery.js'

type Fetch = Pick<AffiliateService, 'fetch'> & {
  readonly basePath?: string
  /** Where the adapter's own errors go (`source: 'adapter'`). @default the default onError */
  readonly onError?: OnError
  /** The service's background work: `serve()` starts it once listening and closes it on `close()`. */
  start?: AffiliateService['start']
  close?: AffiliateService['close']
}

export interface NodeListenerOptions {
  /**
   * Proxies of your own in front of this server, for the client address the per-address limits
   * use and the scheme the client used (`X-Forwarded-Proto`: https gives the portal's and the
   * admin's pages `Secure` cookies and https URLs); see `TrustProxy`. @default false: the socket's
   * peer is the client, the connection's scheme is the scheme
   */
  trustProxy?: TrustProxy
}

function addressOf(trustProxy: TrustProxy | undefined): ClientAddressOf {
  const hops = proxyHops(trustProxy) // a bad value throws now, not per request
  if (hops === 0) return (req) => req.socket.remoteAddress // X-Forwarded-For is not read at all
  return (req) => {
    const forwarded = req.headers['x-forwarded-for']
    return clientBehindProxies(Array.isArray(forwarded) ? forwarded.join(',') : forwarded, req.socket.remoteAddress, hops)
  }
}

/** The scheme a trusted proxy says the client used; nothing to read without one. */
function protocolOf(trustProxy: TrustProxy | undefined): ProtocolOf | undefined {
  const hops = proxyHops(trustProxy)
  if (hops === 0) return undefined // X-Forwarded-Proto is not read at all
  return (req) => {
    const forwarded = req.headers['x-forwarded-proto']
    return protocolBehindProxies(Array.isArray(forwarded) ? forwarded.join(',') : forwarded, hops)
  }
}

/**
 * A `node:http` request listener that serves the service through its public `fetch`. The Request
 * it passes is a lazy view of the IncomingMessage: the upload is read only as the service asks for
 * it, so the size cap holds before anything is buffered, and its `signal` aborts when the client
 * disconnects. An answer in memory is written with one `end()`, a streamed one with backpressure.
 *
 * @example
 * import { createServer } from 'node:http'
 * import { toNodeListener } from 'affiliate-service/node'
 *
 * createServer(toNodeListener(service)).listen(3000)
 */
export function toNodeListener(service: Fetch, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const clientAddress = addressOf(options.trustProxy)
  const protocol = protocolOf(options.trustProxy)
  return (req, res) => void answer(service, req, res, { clientAddress, protocol })
}

export interface ServeOptions extends NodeListenerOptions {
  /** @default 3000; 0 picks a free port */
  port?: number
  /** @default '127.0.0.1' */
  hostname?: string
  /**
   * Deliver webhooks from this process: `service.start()` is called with `createNodeWebhookSender`
   * (or `webhooks: false`: the rest of the background work only). @default true
   */
  webhooks?: boolean
}

export interface RunningServer {
  server: Server
  /** `http://<host>:<port><basePath>` */
  url: string
  /**
   * Stops accepting, lets requests in flight finish, then closes the service's background work
   * (`service.close()`: clicks written, webhook attempts in flight recorded), and resolves.
   */
  close(): Promise<void>
}

/**
 * Starts an http server for the service and resolves once it listens.
 *
 * @example
 * const running = await serve(service, { port: 3000 })
 * console.log(`listening on ${running.url}`)
 * process.once('SIGTERM', () => running.close().then(() => process.exit(0)))
 */
export async function serve(service: Fetch, options: ServeOptions = {}): Promise<RunningServer> {
  const hostname = options.hostname ?? '127.0.0.1'
  const clientAddress = addressOf(options.trustProxy)
  const protocol = protocolOf(options.trustProxy)
  let closing = false
  // An answer written once shutting down tells its keep-alive client to go (`Connection: close`).
  const beforeWrite = (res: ServerResponse) => {
    if (closing) res.shouldKeepAlive = false
  }
  const server = createServer((req, res) => void answer(service, req, res, { clientAddress, protocol, beforeWrite }))
  // `Expect: 100-continue`: the client waits before uploading. `100 Continue` goes out only when the
  // service starts reading the body, so an upload it refuses first (401, 413 by Content-Length) is
  // never sent; the connection then closes, as the client may or may not send the body after all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const keepAlive = res.shouldKeepAlive
    res.shouldKeepAlive = false
    const beforeRead = () => {
      res.writeContinue()
      res.shouldKeepAlive = keepAlive
    }
    void answer(service, req, res, { clientAddress, protocol, beforeRead, beforeWrite })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 3000, hostname, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  service.start?.({ sender: createNodeWebhookSender, webhooks: options.webhooks !== false })
  const host = hostname.includes(':') ? `[${hostname}]` : hostname
  return {
    server,
    url: `http://${host}:${port}${service.basePath ?? '/api/v1'}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true
        server.close((error) => {
          Promise.resolve(service.close?.()).then(() => (error ? reject(error) : resolve()), reject)
        })
        server.closeIdleConnections()
      }),
  }
}
