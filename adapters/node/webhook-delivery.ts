// Sends one webhook delivery from Node: POST of the signed JSON body, a deadline on the whole
// attempt, no redirect followed, the response body read up to a cap, and SSRF protection on the
// address actually connected to. The host is resolved here, every address it resolves to is
// checked, and the socket is given only those addresses (a `lookup` that answers them and nothing
// else), so a DNS answer that changes between the check and the connect (rebinding) cannot reach
// another address; the connected socket's peer is checked once more.

import type { LookupAddress, LookupOptions } from 'node:dns'
import { lookup as dnsLookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type Socket } from 'node:net'
import {
  canonicalAddress,
  checkAddress,
  checkWebhookUrl,
  ipLiteral,
  WebhookAddressError,
  type WebhookAddressPolicy,
} from '../../src/webhooks/address.js'
import { resultForStatus, type DeliveryResult, type WebhookRequest, type WebhookSender } from '../../src/webhooks/delivery.js'
import { DELIVERY_TIMEOUT_MS, RESPONSE_BODY_LIMIT_BYTES } from '../../src/webhooks/schedule.js'

/** Every address a host name resolves to, as `dns.promises.lookup(host, { all: true })` answers. */
export type ResolveHost = (hostname: string) => Promise<Array<{ address: string; family: number }>>

export interface NodeWebhookSenderOptions extends WebhookAddressPolicy {
  /** The deadline of one attempt, from resolving to the end of the response. @default 15000 */
  timeoutMs?: number
  /** Response body bytes kept; the rest is never read. @default 1024 */
  responseBodyLimit?: number
  /** How host names are resolved. @default the system resolver (`dns.lookup`, all addresses) */
  resolve?: ResolveHost
  /** Certificate authorities to trust instead of Node's (tests with a self-signed receiver). */
  ca?: string | Buffer | Array<string | Buffer>
  /** @default 'affiliate-service-webhooks' */
  userAgent?: string
}

const systemResolve: ResolveHost = (hostname) => dnsLookup(hostname, { all: true })

/** A sender for the dispatcher: `send(request)` never throws, every failure is a result. */
export function createNodeWebhookSender(options: NodeWebhookSenderOptions = {}): WebhookSender {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const limit = options.responseBodyLimit ?? RESPONSE_BODY_LIMIT_BYTES
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new RangeError(`timeoutMs must be a positive number, not ${timeoutMs}`)
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`responseBodyLimit must be a non-negative integer, not ${limit}`)
  return (request) => send(request, { ...options, timeoutMs, responseBodyLimit: limit })
}

/** Sends one delivery with `options` (see `createNodeWebhookSender`). */
export function sendWebhook(request: WebhookRequest, options: NodeWebhookSenderOptions = {}): Promise<DeliveryResult> {
  return createNodeWebhookSender(options)(request)
}

type Resolved = Array<{ address: string; family: 4 | 6 }>

/** A `lookup` for `net.connect` that answers only `addresses`, whatever the host name. */
export function pinnedLookup(addresses: Resolved) {
  return (hostname: string, options: LookupOptions | number, callback: (...args: unknown[]) => void): void => {
    const family =
      typeof options === 'number' ? options : options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0)
    const all = typeof options === 'object' && options.all === true
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses
    if (usable.length === 0) {
      callback(Object.assign(new Error(`no checked IPv${family} address for ${hostname}`), { code: 'ENOTFOUND', hostname }))
      return
    }
    if (all)
      callback(
        null,
        usable.map(({ address, family }): LookupAddress => ({ address, family })),
      )
    else callback(null, usable[0]!.address, usable[0]!.family)
  }
}

/**
 * Why the socket's peer may not be talked to: not one of the `checked` addresses (canonical, see
 * `canonicalAddress`), or refused by `policy`; undefined when it may.
 */
export function connectedPeerProblem(
  peer: string | undefined,
  checked: ReadonlySet<string>,
  policy: WebhookAddressPolicy,
): string | undefined {
  if (!peer) return 'the connection has no peer address'
  if (!checked.has(canonicalAddress(peer))) return `connected to ${peer}, which was not checked`
  try {
    checkAddress(peer, policy)
  } catch (error) {
    return (error as Error).message
  }
  return undefined
}

const describe = (error: unknown): string => {
  const e = error as { code?: string; message?: string }
  return e.code && !String(e.message).includes(e.code) ? `${e.code}: ${e.message}` : String(e.message ?? error)
}

async function send(
  request: WebhookRequest,
  options: Required<Pick<NodeWebhookSenderOptions, 'timeoutMs' | 'responseBodyLimit'>> & NodeWebhookSenderOptions,
): Promise<DeliveryResult> {
  const started = performance.now()
  const elapsed = () => Math.max(0, Math.round(performance.now() - started))
  const failed = (error: string, refused = false): DeliveryResult => ({
    outcome: 'retryable',
    status: null,
    durationMs: elapsed(),
    error,
    responseBody: '',
    ...(refused ? { refused: true } : {}),
  })
  const timedOut = `timed out after ${options.timeoutMs} ms`

  let url: URL
  try {
    url = checkWebhookUrl(request.url, options)
  } catch (error) {
    if (error instanceof WebhookAddressError) return failed(error.message, true)
    throw error
  }

  // Resolve once, check every address; the connection may use only these.
  let addresses: Resolved
  const literal = ipLiteral(url.hostname)
  if (literal !== undefined) {
    addresses = [{ address: literal, family: isIP(literal) as 4 | 6 }]
  } else {
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(timedOut)), options.timeoutMs)))
      const found = await Promise.race([(options.resolve ?? systemResolve)(url.hostname), deadline])
      addresses = found
        .map(({ address }) => ({ address, family: isIP(address) as 0 | 4 | 6 }))
        .filter((a): a is Resolved[number] => a.family !== 0)
    } catch (error) {
      return failed(
        (error as Error).message === timedOut
          ? `${timedOut} resolving ${url.hostname}`
          : `could not resolve ${url.hostname}: ${describe(error)}`,
      )
    } finally {
      clearTimeout(timer)
    }
    if (addresses.length === 0) return failed(`${url.hostname} resolves to no IP address`)
    for (const { address } of addresses) {
      try {
        checkAddress(address, options)
      } catch (error) {
        return failed(`${(error as Error).message}; ${url.hostname} resolves to it`, true)
      }
    }
  }
  const checked = new Set(addresses.map((a) => canonicalAddress(a.address)))
  const remaining = options.timeoutMs - (performance.now() - started)
  if (remaining <= 0) return failed(timedOut)

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const finish = (result: DeliveryResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const requestOptions: RequestOptions & { ca?: NodeWebhookSenderOptions['ca'] } = {
      method: 'POST',
      agent: false,
      lookup: pinnedLookup(addresses) as RequestOptions['lookup'],
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': options.userAgent ?? 'affiliate-service-webhooks',
        ...request.headers,
      },
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    }
    let req: ReturnType<typeof httpRequest>
    try {
      req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, requestOptions)
    } catch (error) {
      finish(failed(`could not send to ${url.host}: ${describe(error)}`))
      return
    }
    let response: IncomingMessage | undefined
    const chunks: Buffer[] = []
    let kept = 0
    const answered = () => {
      const body = new TextDecoder().decode(Buffer.concat(chunks, kept))
      finish(resultForStatus(response!.statusCode ?? 0, elapsed(), body, response!.headers.location))
    }

    timer = setTimeout(() => {
      if (response) {
        // The status is in; a body slower than the deadline does not change it.
        answered()
        response.destroy()
        req.destroy()
      } else {
        finish(failed(timedOut))
        req.destroy()
      }
    }, remaining)

    req.on('socket', (socket: Socket) => {
      const refuse = (refusal: string | undefined) => {
        if (!refusal) return
        finish(failed(refusal, true))
        req.destroy()
      }
      // Before connecting: the address the socket is about to use (host names; literals were checked above).
      socket.on('lookup', (error: Error | null, address: string) => {
        if (!error) refuse(connectedPeerProblem(address, checked, options))
      })
      // Once connected, a second line: the peer actually connected to.
      socket.once('connect', () => refuse(connectedPeerProblem(socket.remoteAddress, checked, options)))
    })
    req.on('response', (res) => {
      response = res
      if (options.responseBodyLimit === 0) {
        answered()
        res.destroy()
        return
      }
      res.on('data', (chunk: Buffer) => {
        if (settled) return
        const take = Math.min(chunk.length, options.responseBodyLimit - kept)
        chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take))
        kept += take
        if (kept >= options.responseBodyLimit) {
          // Enough: stop reading, whatever the receiver still sends.
          answered()
          res.destroy()
          req.destroy()
        }
      })
      res.on('end', answered)
      res.on('error', answered)
      res.on('close', answered)
    })
    req.on('error', (error) => {
      if (response) answered()
      else finish(failed(`could not deliver to ${url.host}: ${describe(error)}`))
    })
    req.end(request.body)
  })
}
