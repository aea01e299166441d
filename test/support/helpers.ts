import { expect } from 'vitest'
import { checkAnswer } from './openapi-check.js'
import {
  AffiliateError,
  createAffiliateService,
  memoryKeyStore,
  memoryStorage,
  type AffiliateService,
  type CampaignCreateInput,
  type RateLimitOptions,
  type Storage,
} from '../../src/index.js'

/**
 * Resolves once `service`'s listeners have been called for `count` more events: a `*` listener
 * registered now, which is called after every other listener of each event. Listeners run after the
 * write's answer, so a test waits for this rather than for a turn of the event loop; to show a
 * listener was not called, wait for a later event.
 */
export const listenersHeard = (service: Pick<AffiliateService, 'events'>, count = 1): Promise<void> =>
  new Promise((resolve) => {
    let left = count
    const off = service.events.on('*', () => {
      if (--left > 0) return
      off()
      resolve()
    })
  })

/** A clock tests move by hand. */
export const manualClock = (start = Date.UTC(2026, 0, 1)) => {
  let now = start
  return { now: () => now, advance: (ms: number) => void (now += ms), set: (ms: number) => void (now = ms) }
}

export const KEY_A = 'test-key-a'
export const KEY_B = 'test-key-b'
/** Key A sees workspaces A and A2; key B sees only workspace B. */
export const WS_A = '11111111-1111-4111-8111-111111111111'
export const WS_A2 = '22222222-2222-4222-8222-222222222222'
export const WS_B = '33333333-3333-4333-8333-333333333333'
export const USER_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'
export const USER_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'
export const UNKNOWN_ID = '99999999-9999-4999-8999-999999999999'

/** `rateLimit` defaults to off here, so suites may fire many requests with one key on a still clock. */
export function setup(options: { storage?: Storage; rateLimit?: false | RateLimitOptions } = {}) {
  const clock = manualClock()
  const storage = options.storage ?? memoryStorage()
  const errors: unknown[] = []
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([
      { key: KEY_A, userId: USER_A, workspaceIds: [WS_A, WS_A2], keyId: 'key-a' },
      { key: KEY_B, userId: USER_B, workspaceIds: [WS_B], keyId: 'key-b' },
    ]),
    clock,
    rateLimit: options.rateLimit ?? false,
    onError: (error) => errors.push(error),
  })

  /** One HTTP call through `service.fetch`; answers the status, headers and parsed body. */
  async function call(
    method: string,
    path: string,
    options: { body?: unknown; key?: string | null; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...options.headers }
    const key = options.key === undefined ? KEY_A : options.key
    if (key !== null) headers['x-auth-service'] = key
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const response = await service.fetch(new Request(`http://test.local/api/v1${path}`, { method, headers, body }))
    const text = await response.text()
    checkAnswer({ method, path: `/api/v1${path}`, status: response.status, headers: response.headers, text })
    const json = response.headers.get('content-type')?.startsWith('application/json')
    return { status: response.status, headers: response.headers, text, body: text && json ? JSON.parse(text) : undefined }
  }

  return { service, storage, clock, call, errors, api: service.api }
}

export const campaignInput = (overrides: Record<string, unknown> = {}) => ({
  campaignName: 'Spring launch',
  workspaceId: WS_A,
  commissionType: 'percentage',
  amount: 20,
  url: 'https://shop.example.com/landing',
  ...overrides,
})

/** `campaignInput()` typed for the programmatic API (`api.campaigns.create`). */
export const apiCampaignInput = (overrides: Partial<CampaignCreateInput> = {}): CampaignCreateInput => ({
  campaignName: 'Spring launch',
  workspaceId: WS_A,
  commissionType: 'percentage',
  amount: 20,
  url: 'https://shop.example.com/landing',
  ...overrides,
})

/** The sale fields of a commission made by hand (in a USD campaign): no sale behind it. */
export const NO_SALE = {
  saleAmount: null,
  currency: 'USD',
  customerId: null,
  invoiceId: null,
  chargeId: null,
  stripeSubscriptionId: null,
  paymentIntentId: null,
  holdReasons: [],
}

/** One entry of a `Validation error` body. */
export const fieldError = (path: string, msg: string, location: 'body' | 'query' = 'body') => ({ type: 'field', msg, path, location })

/** Asserts a 400 `Validation error` answer naming exactly `errors` (in any order), one entry per field. */
export function expectValidation(response: { status: number; body: any }, errors: ReturnType<typeof fieldError>[]) {
  const byPath = (list: { path: string }[]) => [...list].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  expect(response.status).toBe(400)
  expect(Object.keys(response.body).sort()).toEqual(['code', 'errors', 'message', 'status'])
  expect(response.body.status).toBe(400)
  expect(response.body.code).toBe('validation_error')
  expect(response.body.message).toBe('Validation error')
  expect(byPath(response.body.errors)).toEqual(byPath(errors))
}

/** The HTTP status an operation of the typed API ended with: 200 when it resolved, the AffiliateError's otherwise. */
export async function outcome(run: () => Promise<unknown>): Promise<number> {
  try {
    await run()
    return 200
  } catch (error) {
    if (error instanceof AffiliateError) return error.status
    throw error
  }
}

/** The API's two-decimal string (`"12.34"`, `"-0.50"`) to minor units, exactly: the tests' own reading, not the service's. */
export function centsOf(amount: string): number {
  const match = /^(-?)(\d+)\.(\d{2})$/.exec(amount)
  if (!match) throw new Error(`not a two-decimal amount: ${amount}`)
  const value = Number(match[2]) * 100 + Number(match[3])
  return match[1] ? -value : value
}

/** Every item of a list, read a page at a time until the last page. */
export async function allPages<T>(read: (page: number) => Promise<{ items: T[]; pagination: { totalPages: number } }>): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const { items, pagination } = await read(page)
    out.push(...items)
    if (page >= pagination.totalPages) return out
  }
}
