import type { ResourceApi } from '../http/typed-api.js'
import { AffiliateError, codeOfStatus, type ErrorCode, type FieldError } from '../errors.js'
import { apiOf, requestOf, type RouteInfo } from '../http/route-table.js'

export { AffiliateError, type ErrorCode, type FieldError } from '../errors.js'
export type { ResourceApi } from '../http/typed-api.js'

/** The typed API over HTTP: the same namespaces, methods and types as `service.api`. */
export type AffiliateClient = ResourceApi

export interface AffiliateClientOptions {
  /** Where the API is, base path included: `https://affiliates.example.com/api/v1`. */
  baseUrl: string
  /** Sent as `x-auth-service`. */
  apiKey: string
  /** @default globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>
  /**
   * How many times one call is sent again: after a 429 (once its `Retry-After` has passed), and
   * after a network error for GET and POST (a POST carries an `Idempotency-Key` the client made,
   * so the server runs it once however many times it arrives). @default 3
   */
  maxRetries?: number
  /** The longest the client waits before one retry; a longer `Retry-After` fails the call instead. @default 60_000 */
  maxRetryDelayMs?: number
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `Retry-After` in milliseconds (seconds or an HTTP date); undefined when absent or unreadable. */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after')
  if (value === null) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

function queryString(query: Record<string, unknown>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item))
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

async function failure(response: Response): Promise<AffiliateError> {
  let body: { code?: unknown; message?: unknown; errors?: unknown } | undefined
  try {
    body = (await response.json()) as typeof body
  } catch {
    body = undefined
  }
  const message = typeof body?.message === 'string' ? body.message : response.statusText || `HTTP ${response.status}`
  const errors = Array.isArray(body?.errors) ? (body.errors as FieldError[]) : undefined
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  // A code this version does not know (a newer server) is kept as sent.
  const code = typeof body?.code === 'string' ? (body.code as ErrorCode) : codeOfStatus(response.status)
  return new AffiliateError(response.status, message, { code, ...(errors ? { errors } : {}), headers })
}

/** A file answer as the typed API gives it: its name, its type and its body, still streaming. */
function fileOf(response: Response): { filename: string; contentType: string; body: ReadableStream<Uint8Array> } {
  const disposition = response.headers.get('content-disposition') ?? ''
  return {
    filename: /filename="([^"]*)"/.exec(disposition)?.[1] ?? '',
    contentType: response.headers.get('content-type') ?? '',
    body: response.body ?? new ReadableStream({ start: (controller) => controller.close() }),
  }
}

/**
 * A client for an affiliate-service over HTTP, for another process or another language's server
 * running it. Works wherever `fetch` does (Node, Bun, Deno, workers, browsers).
 *
 * @example
 * import { createAffiliateClient } from 'affiliate-service/client'
 *
 * const client = createAffiliateClient({ baseUrl: 'https://affiliates.example.com/api/v1', apiKey: process.env.AFFILIATE_KEY! })
 * const campaign = await client.campaigns.create({ campaignName: 'Spring', workspaceId, commissionType: 'percentage', amount: 20, url: 'https://shop.example.com' })
 */
export function createAffiliateClient(options: AffiliateClientOptions): AffiliateClient {
  if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) {
    throw new TypeError('baseUrl must be an http(s) URL, such as "https://affiliates.example.com/api/v1"')
  }
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey must be a non-empty string')
  const maxRetries = options.maxRetries ?? 3
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be a whole number of at least 0')
  const maxDelay = options.maxRetryDelayMs ?? 60_000
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const base = options.baseUrl.replace(/\/+$/, '')

  async function call(route: RouteInfo, args: unknown[]): Promise<unknown> {
    const { query, body } = requestOf(route, args)
    const url = base + route.path + queryString(query)
    const file = route.answer === 'csv'
    const headers: Record<string, string> = {
      'x-auth-service': options.apiKey,
      accept: file ? 'text/csv, application/json' : 'application/json',
    }
    if (body !== undefined) headers['content-type'] = 'application/json'
    // One key for every attempt of this call: a POST that arrived before the connection dropped is not run twice.
    if (route.method === 'POST') headers['idempotency-key'] = globalThis.crypto.randomUUID()
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const retriesOnNetworkError = route.method === 'GET' || route.method === 'POST'

    for (let attempt = 0; ; attempt++) {
      let response: Response
      try {
        response = await send(new Request(url, { method: route.method, headers, ...(payload === undefined ? {} : { body: payload }) }))
      } catch (error) {
        if (!retriesOnNetworkError || attempt >= maxRetries) throw error
        await wait(Math.min(maxDelay, 100 * 2 ** attempt))
        continue
      }
      // 429: not run at all; 409: the same POST still running elsewhere (an earlier attempt).
      if ((response.status === 429 || (response.status === 409 && route.method === 'POST')) && attempt < maxRetries) {
        const delay = retryAfterMs(response) ?? 100 * 2 ** attempt
        if (delay <= maxDelay) {
          await response.body?.cancel()
          await wait(delay)
          continue
        }
      }
      if (!response.ok) throw await failure(response)
      if (file) return fileOf(response)
      const envelope = (await response.json()) as { data: unknown }
      return envelope.data
    }
  }

  return apiOf<AffiliateClient>((route, _operation, args) => call(route, args))
}
