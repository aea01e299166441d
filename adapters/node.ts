import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AffiliateService } from '../src/service.js'
import { answerOne } from './node/answer.js'

export { answer } from './node/answer.js'
export { fileJournal } from './node/file-journal.js'

type Fetch = Pick<AffiliateService, 'fetch'>

/**
 * A `node:http` request listener that serves the service. An upload is read only as the service
 * asks for it, so its size cap holds before anything is buffered. A service made by
 * `createAffiliateService` is answered without web Request or Response objects, its answer written
 * with one `end()`; any other `fetch` handler gets a Request whose `signal` aborts when the client
 * disconnects, and a streamed Response is written with backpressure.
 *
 * @example
 * import { createServer } from 'node:http'
 * import { toNodeListener } from 'affiliate-service/node'
 *
 * createServer(toNodeListener(service)).listen(3000)
 */
export function toNodeListener(service: Fetch): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => void answerOne(service, req, res)
}

export interface ServeOptions {
  /** @default 3000; 0 picks a free port */
  port?: number
  /** @default '127.0.0.1' */
  hostname?: string
}

export interface RunningServer {
  server: Server
  /** `http://<host>:<port>/api/v1` */
  url: string
  /** Stops accepting, lets requests in flight finish, then resolves. */
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
  const listener = toNodeListener(service)
  let closing = false
  // Answers not yet started: when shutting down, each tells its keep-alive client to go (`Connection: close`).
  const unanswered = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    if (closing) res.shouldKeepAlive = false
    else {
      unanswered.add(res)
      res.once('close', () => unanswered.delete(res))
    }
    listener(req, res)
  })
  // `Expect: 100-continue`: the client waits before uploading. `100 Continue` goes out only when the
  // service starts reading the body, so an upload it refuses first (401, 413 by Content-Length) is
  // never sent; the connection then closes, as the client may or may not send the body after all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const keepAlive = res.shouldKeepAlive && !closing
    res.shouldKeepAlive = false
    if (keepAlive) {
      unanswered.add(res)
      res.once('close', () => unanswered.delete(res))
    }
    const beforeRead = () => {
      res.writeContinue()
      res.shouldKeepAlive = keepAlive && !closing
    }
    void answerOne(service, req, res, { beforeRead })
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
  const host = hostname.includes(':') ? `[${hostname}]` : hostname
  return {
    server,
    url: `http://${host}:${port}/api/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        closing = true
        for (const res of unanswered) if (!res.headersSent) res.shouldKeepAlive = false
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeIdleConnections()
      }),
  }
}
