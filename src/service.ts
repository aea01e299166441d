import { createOperations, type OperationsOn } from './api/index.js'
import { clientAddressOf } from './http/client-address.js'
import { disposableDomainsLoader } from './api/fraud-checks.js'
import type { AffiliateApi } from './http/typed-api.js'
import { systemClock, type Clock } from './clock.js'
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES } from './http/body.js'
import type { FetchContext } from './http/client-address.js'
import { createHandler } from './http/handler.js'
import { createApi } from './http/typed-api.js'
import type { IdempotencyOptions } from './http/idempotency.js'
import type { KeyStore } from './keys/types.js'
import { addressThrottle } from './limiter/address-throttle.js'
import { createLimiter, resolveRule } from './limiter/limiter.js'
import type { RateLimitOptions } from './limiter/types.js'
import type { AdminOptions } from './admin/index.js'
import { resolveAdminOptions } from './admin/options.js'
import type { PortalOptions } from './portal/index.js'
import { resolvePortalOptions } from './portal/options.js'
import { lazySite, withSite } from './site/mount.js'
import { surfacesOf, type ServiceSurface } from './surfaces.js'
import type { Storage } from './storage/types.js'
import { withCommitHook } from './events/outbox.js'
import type { EventRecord } from './domain/records.js'
import { createServiceEvents, type ServiceEvents, type WebhookOptions } from './events/service-events.js'
import type { Tracker } from './tracking/tracker.js'
import { defaultOnError, guarded, type OnError } from './on-error.js'
import { createClickWriter } from './tracking/click-writer.js'
import { jobRunner, periodicJob, type BackgroundJob, type StartOptions } from './jobs.js'
import { resolveNotifyOptions, type NotifyOptions } from './notifications/options.js'
import { noticeWriter, type NoticeWriter } from './notifications/outbox.js'
import { NotificationSender } from './notifications/sender.js'

export type { BackgroundJob, StartOptions } from './jobs.js'

/** How often click records no attribution window reaches are looked for and deleted, in ms: hourly. */
const PRUNE_EVERY_MS = 3_600_000
import type { StripeApiOptions } from './integrations/stripe-promotion-codes.js'

/** Limits on the public tracking routes (redirect and beacon), per client address. */
export interface TrackingLimitOptions {
  /** Requests an address may send in one burst. @default 40 */
  capacity?: number
  /** Requests an address may send per second, on average. @default 20 */
  refillPerSecond?: number
}

/** Limits on wrong API keys, per client address. */
export interface FailedKeyLimitOptions {
  /** Wrong keys an address may send in one burst. @default 10 */
  capacity?: number
  /** Wrong keys an address may send per second, on average. @default 10 */
  refillPerSecond?: number
}

export interface AffiliateServiceOptions {
  /** Where records live: `memoryStorage()`, `sqlJsStorage()`, or your own (see `Storage`). */
  storage: Storage
  /** Resolves `x-auth-service` keys to principals, e.g. `memoryKeyStore([...])`. */
  keyStore: KeyStore
  /** Where time comes from. @default the system clock */
  clock?: Clock
  /**
   * Where the API answers: requests outside it are not the service's (the adapters pass them on;
   * `fetch` answers them 404). @default '/api/v1'
   * @example basePath: '/affiliates/api/v1' // a host that routes `/affiliates/*` to `service.fetch` unchanged
   */
  basePath?: string
  /** Largest request body accepted, in bytes; a larger one is refused with 413. @default 102400 */
  maxBodyBytes?: number
  /** How long a request body may take to arrive, in ms; then 408 `Request body timeout`. @default 10000 */
  bodyTimeoutMs?: number
  /**
   * Per-key limits, counted per API key id: a token bucket (`capacity` tokens, refilled at
   * `refillPerSecond`) and at most `maxInFlight` requests being answered at once. A request over
   * either gets 429 with `Retry-After`; every keyed response carries `RateLimit-Limit`,
   * `RateLimit-Remaining` and `RateLimit-Reset`. `false` turns limiting off.
   * @default { capacity: 5, refillPerSecond: 5, maxInFlight: 5, store: memoryLimiterStore() }
   * @example
   * rateLimit: { capacity: 20, refillPerSecond: 10, store: memoryLimiterStore({ maxKeys: 50_000 }) }
   */
  rateLimit?: false | RateLimitOptions
  /**
   * Wrong API keys, counted per client address (which the adapters supply): past the limit every
   * keyed request from that address is 429 with `Retry-After` until tokens come back. Counted in
   * this process. Calls without a client address (in-process `fetch`) are not counted. `false`
   * turns it off.
   * @default { capacity: 10, refillPerSecond: 10 }
   */
  failedKeyLimit?: false | FailedKeyLimitOptions
  /**
   * The public redirect (`GET {basePath}/r/<referralCode>`) and beacon (`POST {basePath}/track`),
   * counted per client address (which the adapters supply; `trustProxy` to read
   * `X-Forwarded-For`), never per key: past the limit, 429 with `Retry-After`. Calls without a
   * client address (in-process `fetch`) are not limited. `false` turns it off.
   * @default { capacity: 40, refillPerSecond: 20 }
   */
  trackingLimit?: false | TrackingLimitOptions
  /**
   * Repeats of one visitor (client address and user agent) on one link within this many seconds
   * count once and answer the first event's `clickId`. 0 counts every event. At most 7 days.
   * @default 3600
   */
  clickDedupeSeconds?: number
  /**
   * The secret the daily salt of the visitor hashes derives from (HMAC-SHA256 of the UTC day).
   * Leave it out and the service makes one and keeps it in `storage` (the `settings` record
   * `clickSalt`), shared by every instance on that storage. Give it to keep it out of the database.
   * @default a random secret kept in storage
   */
  trackingSecret?: string
  /**
   * The redirect and the beacon answer before their click is written: clicks, their link and
   * affiliate counters and report rollups are written in batches, each in one transaction, at most
   * this many ms after a batch's first click (or at once when it holds 1,000). `close()` and the
   * adapters' `close()` write what waits; a crash loses at most the clicks not yet written. A
   * failed write is reported to `onError` and tried again.
   * @default 250
   */
  clickFlushMs?: number
  /**
   * `Idempotency-Key` on POST: a retry with the same key and body answers the first answer
   * (`Idempotent-Replayed: true`) and changes nothing. Answers are kept in `storage`.
   * @default { ttlMs: 86_400_000, leaseMs: 60_000 }
   */
  idempotency?: IdempotencyOptions
  /**
   * The one error channel: called with every unexpected error, and `context.source` saying where
   * it came from: `request` (answered 500; `context.request` is the Request), `listener` (an
   * `events.on` listener), `dispatcher` (webhook delivery), `adapter` (the Node and Express
   * adapters) or `storage` (e.g. a failed sql.js checkpoint). A response never carries an error's
   * message or stack; a client that goes away is not an error. See `ErrorContext`.
   * @default `console.error`, one line naming the source
   * @example onError: (error, { source }) => logger.error({ err: error, source }, 'affiliate-service')
   */
  onError?: OnError
  /**
   * Webhook delivery: which URLs are allowed (`allowHttp`, `allowPrivateAddresses`: for tests),
   * how long events and deliveries are kept (`retentionDays`, default 30), and the `send`er the
   * dispatcher uses (the Node and Express `serve()` and `npm start` supply `createNodeWebhookSender`).
   */
  webhooks?: WebhookOptions
  /**
   * The affiliate portal: HTML pages under `/portal` (beside `basePath`) where affiliates join a
   * campaign, sign in through an e-mailed link and see their links, stats, commissions and money.
   * Off unless given. See docs/portal.md.
   * @example portal: { secret: process.env.PORTAL_SECRET!, publicUrl: 'https://partners.example.com', sendSignInLink: (email, url) => mailer.send(email, url), sendNotice: (email, subject, text) => mailer.send(email, subject, text) }
   */
  portal?: PortalOptions
  /**
   * The admin dashboard: HTML pages under `/admin` (beside `basePath`) where the program owner
   * runs campaigns, affiliates, commissions, payouts, API keys and webhooks. `authorize` is your
   * own auth: `{ userId, workspaceIds }` or null. Off unless given. See docs/admin.md.
   * @example admin: { authorize: async (request) => (await isOwner(request)) ? { userId: 'me', workspaceIds: [workspaceId] } : null, signInUrl: '/login' }
   */
  admin?: AdminOptions
  /**
   * Where the Stripe SDK sends the calls promo codes make with an integration's API key (making
   * and deactivating promotion codes). Stripe's API unless given: tests point it at a local server.
   * @example stripeApi: { host: '127.0.0.1', port: 12111, protocol: 'http' }
   */
  stripeApi?: StripeApiOptions
  /**
   * E-mails to affiliates and owners (approved, declined, commission earned, payout paid, clawback,
   * new applicant, a failing provider endpoint), written to an outbox in the same transaction as
   * what they tell and sent in the background by `send`: once per kind and record, retried with
   * backoff, a failure never failing the change. Links (the portal, one-click unsubscribe) need the
   * portal. Off unless given. See docs/notifications.md.
   * @example notify: { send: (m) => transport.sendMail(m), from: 'Partners <partners@example.com>', owners: ['me@example.com'] }
   */
  notify?: NotifyOptions
}

/**
 * The notifications' sender (`service.notifications`): one of the jobs `service.start()` starts and
 * `close()` stops, reachable on its own for tests and cron-style hosts (`flush`).
 */
export interface NotificationJob {
  /** Starts the job (idempotent). */
  start(): void
  /** Stops it and waits for the work in flight to be recorded. */
  stop(): Promise<void>
  /** Does now all the work that is due (tests, cron-style hosts); answers how many items it handled. */
  flush(): Promise<number>
  readonly running: boolean
}

export interface AffiliateService {
  /**
   * Answers a web-standard Request; `export default service` serves it under Bun, Deno and workers.
   * `context` says who is calling: `{ clientAddress }` (the adapters pass it), or what Bun, Deno
   * or `@hono/node-server` pass as the handler's second argument.
   */
  fetch(request: Request, context?: FetchContext | unknown): Promise<Response>
  /** The typed programmatic API: the same rules and shapes as HTTP, without HTTP. */
  api: AffiliateApi
  /** Where the API answers, e.g. `/api/v1`: adapters pass requests outside it on to the host. */
  readonly basePath: string
  /** Webhook delivery in the background (`start`/`stop`) and in-process listeners (`on`, not durable). */
  events: ServiceEvents
  /** Where the affiliate portal's pages are (`/portal`), or null when the portal is off. */
  readonly portalPath: string | null
  /** The service's `onError` (or the default): adapters report their own errors to it (`source: 'adapter'`). */
  readonly onError: OnError
  /** Writes every click answered so far (with its counters and rollups), and resolves once they are stored. */
  flush(): Promise<void>
  /**
   * Starts the service's background work (idempotent): webhook delivery (with the service's
   * `webhooks.send`, else `options.send`, else `options.sender(policy)`; without any, delivery is
   * not started and `onError` says so once), and pruning of click records hourly (the first
   * round now). Every adapter calls it: `serve()` of Node, Bun and Deno, and `expressAdapter` when
   * made. A host answering with `fetch` alone calls it once (or uses `events.deliverDue()` and
   * `pruneClicks()` from a scheduled task). See docs/runtimes.md.
   * @example service.start({ sender: createNodeWebhookSender }) // affiliate-service/node
   */
  start(options?: StartOptions): void
  /**
   * Ends the background work and resolves once everything is written: the pruning under way,
   * every click answered so far (as `flush`), and the webhook attempts in flight (the dispatcher
   * stops). Call it before closing the storage; the adapters' `close()` and `npm start`'s SIGTERM
   * do. The service still answers afterwards (clicks are then written as `flush` does), and
   * `start()` starts it all again.
   */
  close(): Promise<void>
  /**
   * Deletes the click records no campaign's attribution window reaches any more, and answers how
   * many: what the background work does hourly, for tests and hosts without background work (a
   * worker's scheduled handler).
   */
  pruneClicks(): Promise<number>
  /** Where the admin's pages are (`/admin`), or null when the admin is off. */
  readonly adminPath: string | null
  /**
   * Everything the service answers, and where: the API, its public tracking routes, the portal and
   * the admin when they are on. An adapter that serves beside a host's own routes (Express) hands
   * `fetch` every request under one of these paths, and only those (see `surfaceOf`).
   * @example [{ name: 'api', path: '/api/v1' }, { name: 'tracking', path: '/api/v1/r' }, { name: 'tracking', path: '/api/v1/track' }, { name: 'admin', path: '/admin' }]
   */
  readonly surfaces: readonly ServiceSurface[]
  /** The sending of notifications from the outbox (`notify`), or null when `notify` is not given. */
  readonly notifications: NotificationJob | null
}

/** The longest `clickDedupeSeconds`: 7 days. */
const MAX_DEDUPE_SECONDS = 7 * 86_400

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

/** A whole number of at least 1, or the default; anything else throws a TypeError naming the option. */
function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new TypeError(`${name} must be a whole number of at least 1`)
  return value
}

function checkOptions(options: AffiliateServiceOptions): void {
  if (!isObject(options)) throw new TypeError('createAffiliateService takes an options object: { storage, keyStore }')
  const storage: unknown = options.storage
  if (typeof storage === 'function')
    throw new TypeError('storage must be a storage, not its factory: call it, e.g. storage: memoryStorage()')
  if (!isObject(storage) || typeof storage.transaction !== 'function')
    throw new TypeError('storage is required: a Storage such as memoryStorage()')
  const keyStore: unknown = options.keyStore
  if (typeof keyStore === 'function')
    throw new TypeError('keyStore must be a key store, not its factory: call it, e.g. keyStore: memoryKeyStore([...])')
  if (!isObject(keyStore) || typeof keyStore.resolve !== 'function')
    throw new TypeError('keyStore is required: a KeyStore such as memoryKeyStore([...])')
  if (options.clock !== undefined && (!isObject(options.clock) || typeof options.clock.now !== 'function')) {
    throw new TypeError('clock must be an object with a now() method answering epoch milliseconds')
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') throw new TypeError('onError must be a function')
}

/** `/api/v1` as given, without a trailing slash; `/` is the root. */
function normalizeBasePath(value: unknown): string {
  if (value === undefined) return '/api/v1'
  if (typeof value !== 'string' || !value.startsWith('/') || /[?#\s]/.test(value)) {
    throw new TypeError('basePath must be a path starting with "/", such as "/api/v1"')
  }
  return value.replace(/\/+$/, '')
}

/**
 * Builds the service. It holds no global state: create as many as you like, one per test if you
 * wish. Its options are checked here: a missing or wrong one throws a TypeError naming it.
 *
 * @example
 * const service = createAffiliateService({
 *   storage: memoryStorage(),
 *   keyStore: memoryKeyStore([{ key: 'secret', userId, workspaceIds: [workspaceId] }]),
 * })
 * const response = await service.fetch(new Request('http://localhost/api/v1/health'))
 */
export function createAffiliateService(options: AffiliateServiceOptions): AffiliateService {
  checkOptions(options)
  const clock = options.clock ?? systemClock
  const basePath = normalizeBasePath(options.basePath)
  const onError: OnError = guarded(options.onError ?? defaultOnError)
  // Errors met while answering a request: the request goes with them.
  const requestError = (error: unknown, request: Request) => onError(error, { source: 'request', request })
  const idempotency = options.idempotency ?? {}
  positive('idempotency.ttlMs', idempotency.ttlMs, 1)
  positive('idempotency.leaseMs', idempotency.leaseMs, 1)
  const failed = options.failedKeyLimit
  const dedupeSeconds = options.clickDedupeSeconds ?? 3600
  if (!Number.isSafeInteger(dedupeSeconds) || dedupeSeconds < 0 || dedupeSeconds > MAX_DEDUPE_SECONDS) {
    throw new TypeError(`clickDedupeSeconds must be a whole number from 0 to ${MAX_DEDUPE_SECONDS} (7 days)`)
  }
  if (options.trackingSecret !== undefined && (typeof options.trackingSecret !== 'string' || options.trackingSecret.length < 16)) {
    throw new TypeError('trackingSecret must be a string of at least 16 characters')
  }
  const tracked = options.trackingLimit
  const clickFlushMs = options.clickFlushMs ?? 250
  if (!Number.isSafeInteger(clickFlushMs) || clickFlushMs < 0 || clickFlushMs > 60_000) {
    throw new TypeError('clickFlushMs must be a whole number of milliseconds from 0 to 60000')
  }
  const body = {
    maxBytes: positive('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES),
    timeoutMs: positive('bodyTimeoutMs', options.bodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS),
  }
  const webhooks = options.webhooks ?? {}
  if (!isObject(webhooks)) throw new TypeError('webhooks must be an object: { allowHttp?, allowPrivateAddresses?, retentionDays?, send? }')
  const policy = { allowHttp: webhooks.allowHttp === true, allowPrivateAddresses: webhooks.allowPrivateAddresses === true }
  const runtime = createServiceEvents({ storage: options.storage, clock, onError, policy }, webhooks)
  // The storage's own background failures (a sql.js checkpoint, say) come here too.
  options.storage.reportErrorsTo?.((error) => onError(error, { source: 'storage' }))
  // The one factory of operations: they see a storage through a hook that hands each committed
  // transaction's events to the listeners and wakes the dispatcher, with the webhook policy.
  const clicks = createClickWriter({
    storage: options.storage,
    flushMs: clickFlushMs,
    onError: (error) => onError(error, { source: 'storage' }),
  })
  // The tracker (bots, dedupe, click ids) is made on the first tracked event, and its modules
  // (isbot, uuid) load then: a service that never tracks, and every cold start, goes without them.
  let tracker: Promise<Tracker> | undefined
  const trackerOf = (): Promise<Tracker> =>
    (tracker ??= import('./tracking/tracker.js')
      .then(({ createTracker }) =>
        createTracker({ storage: options.storage, clock, dedupeSeconds, secret: options.trackingSecret, writer: clicks }),
      )
      .catch((error: unknown) => {
        tracker = undefined
        throw error
      }))
  // A link deleted here answers 404 at once (other instances stop using it within a second).
  const forgetLinks = () =>
    void tracker?.then(
      (made) => made.forgetLinks(),
      () => undefined,
    )
  runtime.events.on('link.deleted', forgetLinks)
  runtime.events.on('affiliate.deleted', forgetLinks)
  // The disposable-domain list (for the fraud rules) loads with the first e-mail it is asked about.
  const disposableDomains = disposableDomainsLoader()
  // Notifications: checked now; written by the commit hook (and the operations that know more than
  // their event) in each change's own transaction, sent by the job below.
  const notifyOptions = options.notify === undefined ? null : resolveNotifyOptions(options.notify)
  const portalResolved = options.portal === undefined ? null : resolvePortalOptions(options.portal, basePath)
  const adminPathOf = options.admin === undefined ? null : resolveAdminOptions(options.admin, basePath, portalResolved?.path ?? null).path
  let sender: NotificationSender | null = null
  let notices: NoticeWriter | undefined
  let noticesWritten = false
  if (notifyOptions) {
    const made = new NotificationSender({
      storage: options.storage,
      clock,
      notify: notifyOptions,
      links: portalResolved
        ? { publicUrl: portalResolved.publicUrl, portalPath: portalResolved.path, adminPath: adminPathOf, key: portalResolved.key }
        : null,
      onError: (error) => onError(error, { source: 'notify' }),
    })
    sender = made
    // A notice written inside a transaction wakes the sender once that transaction has committed
    // (the commit hook below), so it never looks before the notice can be seen.
    notices = noticeWriter(options.storage, clock, { wrote: () => void (noticesWritten = true), committed: () => made.nudge() }, (error) =>
      onError(error, { source: 'notify' }),
    )
  }
  const beforeCommit = notices ? notices.fromEvents : undefined
  const committed = (events: EventRecord[]) => {
    runtime.committed(events)
    if (!noticesWritten) return
    noticesWritten = false
    sender?.nudge()
  }
  const operations: OperationsOn = (storage) =>
    createOperations({
      storage: withCommitHook(storage, committed, beforeCommit),
      clock,
      webhooks: policy,
      clickWritten: clicks.written,
      disposableDomains,
      clickCapture: trackerOf,
      ...(notices ? { notices } : {}),
      ...(options.stripeApi ? { stripeApi: options.stripeApi } : {}),
    })
  const ops = operations(options.storage)
  const fetch = createHandler({
    operations,
    storage: options.storage,
    idempotency,
    keyStore: options.keyStore,
    clock,
    body,
    limiter: createLimiter(options.rateLimit, clock),
    failedKeys:
      failed === false
        ? null
        : addressThrottle(resolveRule({ capacity: 10, refillPerSecond: 10, maxInFlight: false, ...failed }, 'failedKeyLimit'), clock),
    basePath,
    onError: requestError,
    tracking: {
      tracker: trackerOf,
      keyStore: options.keyStore,
      body,
      limit:
        tracked === false
          ? null
          : addressThrottle(resolveRule({ capacity: 40, refillPerSecond: 20, maxInFlight: false, ...tracked }, 'trackingLimit'), clock),
    },
  })
  const api = createApi(ops)
  const flush = () => clicks.flush()
  const clickSource = (error: unknown) => onError(error, { source: 'storage' })
  // Pruning's module (with uuid, for the time-ordered ids) loads with its first round, not with the service.
  const pruneClicks = async (now: number) => (await import('./tracking/prune.js')).pruneClicks(options.storage, now)
  /** A round of pruning, clicks waiting in a batch written first (they are pruned as stored ones are); true when more remain. */
  const pruneRound = async () => {
    await clicks.flush()
    return (await pruneClicks(clock.now())).more
  }
  // The background work, in the order `close()` ends it. A new job joins with one entry here.
  const jobs: BackgroundJob[] = [
    periodicJob('click pruning', PRUNE_EVERY_MS, pruneRound, clickSource),
    { name: 'click writing', start: () => undefined, close: flush },
    // Notices are written by the transactions above: their sender stops after the clicks are written.
    { name: 'notifications', start: () => sender?.start(), close: async () => void (await sender?.stop()) },
    {
      name: 'webhook delivery',
      start: (choice) => {
        if (choice.webhooks === false) return
        if (!runtime.events.hasSender && !choice.send && !choice.sender) {
          onError(
            new Error(
              'Webhook delivery not started: no sender. Pass webhooks: { send } to createAffiliateService (createNodeWebhookSender of affiliate-service/node on Node), or start({ sender })',
            ),
            { source: 'dispatcher' },
          )
          return
        }
        runtime.events.start(choice)
      },
      close: () => runtime.events.stop(),
    },
  ]
  const lifecycle = jobRunner(jobs)
  const pruneAll = async () => {
    await clicks.flush()
    let deleted = 0
    for (let more = true; more; ) {
      const round = await pruneClicks(clock.now())
      deleted += round.deleted
      more = round.more
    }
    return deleted
  }
  let served = fetch
  // The portal's and the admin's options are checked now; their pages load with their first request.
  let portalPath: string | null = null
  let publicUrl: string | null = null
  const portalOptions = options.portal
  if (portalOptions !== undefined) {
    ;({ path: portalPath, publicUrl } = portalResolved!)
    // The device an affiliate uses the portal from, hashed as a click from it is (the fraud rules' self_referral).
    const deviceOf = async (request: Request, context: unknown): Promise<string | null> => {
      const address = clientAddressOf(request, context)
      return address === undefined ? null : (await trackerOf()).device({ address, userAgent: request.headers.get('user-agent') ?? '' })
    }
    const deps = {
      api,
      storage: options.storage,
      clock,
      basePath,
      body,
      onError: requestError,
      deviceOf,
      notifying: notifyOptions !== null,
      programName: notifyOptions?.programName ?? null,
    }
    served = withSite(
      lazySite(portalPath, () => import('./portal/index.js').then(({ createPortal }) => createPortal(portalOptions, deps))),
      served,
    )
  }
  let adminPath: string | null = null
  const adminOptions = options.admin
  if (adminOptions !== undefined) {
    adminPath = adminPathOf!
    const deps = {
      api,
      storage: options.storage,
      keyStore: options.keyStore,
      clock,
      basePath,
      portalPath,
      publicUrl,
      body,
      onError: requestError,
      notifying: notifyOptions !== null,
      mailbox: notifyOptions?.mailbox ?? null,
      notifyOwners: notifyOptions?.owners ?? null,
    }
    served = withSite(
      lazySite(adminPath, () => import('./admin/index.js').then(({ createAdmin }) => createAdmin(adminOptions, deps))),
      served,
    )
  }
  const notifications: NotificationJob | null = sender && {
    start: () => sender.start(),
    stop: () => sender.stop(),
    flush: () => sender.flush(),
    get running() {
      return sender.running
    },
  }
  const surfaces = surfacesOf(basePath, portalPath, adminPath)
  return {
    fetch: served,
    api,
    basePath,
    portalPath,
    adminPath,
    surfaces,
    events: runtime.events,
    flush,
    start: (startOptions) => lifecycle.start(startOptions),
    close: () => lifecycle.close(),
    pruneClicks: pruneAll,
    onError,
    notifications,
  }
}
