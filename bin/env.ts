// What `npm start` and the command-line tool read from the environment.
//   DATABASE_URL      PostgreSQL (`affiliate-service/postgres`, needs `pg`); AFFILIATE_SCHEMA its schema
//   AFFILIATE_DB      otherwise, the embedded sql.js database: a file path, or `:memory:`
//   REDIS_URL         rate limits in Redis (`affiliate-service/redis`, needs `redis`), shared by every instance
// PostgreSQL and Redis are loaded only when asked for, so the default needs neither package.
import {
  developmentMailbox,
  nameUuid,
  sqlJsStorage,
  type DevelopmentMailbox,
  type LimiterStore,
  type NotifyOptions,
  type Storage,
} from '../src/index.js'
import { redactUrl } from '../src/redact.js'
import { limiterPrefix } from '../adapters/deployment.js'
import { fileJournal } from '../adapters/node/file-journal.js'

export const DEFAULT_DB = './data/affiliate.sqlite'

/** The storage the environment names, with what it needs at start and at the end. */
export interface EnvStorage {
  storage: Storage & { ready(): Promise<unknown>; close(): Promise<void> }
  /** Where the records are, fit to print (never a password). */
  where: string
  kind: 'postgres' | 'sqljs'
}

/** The rate-limit store the environment names: Redis for REDIS_URL, else none (each process counts alone). */
export interface EnvLimiter {
  store: LimiterStore & { ready(): Promise<void>; close(): Promise<void> }
  /** Where the buckets are, fit to print (never a password). */
  where: string
}

/** Prints the message alone (no stack) and exits 1: for mistakes the user can fix. */
export function fail(message: string): never {
  console.error(`affiliate-service: ${message}`)
  process.exit(1)
}

const missingPackage = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
}

/** An optional peer's entry point, or a plain message saying what to install. */
export async function optional<T>(load: () => Promise<T>, variable: string, pkg: string): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (missingPackage(error)) fail(`${variable} needs the \`${pkg}\` package: npm i ${pkg}`)
    throw error
  }
}

/** The schema AFFILIATE_SCHEMA names: letters, digits and `_`, not starting with a digit, at most 63. */
export const SCHEMA = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/**
 * DATABASE_URL: PostgreSQL (tables in AFFILIATE_SCHEMA, default `affiliate_service`). Otherwise
 * AFFILIATE_DB: a sql.js file path, or `:memory:` for a database that ends with the process.
 * `lockWaitMs`: how long to wait for another process holding the file (see `fileJournal`).
 */
export async function storageFromEnv(env: NodeJS.ProcessEnv = process.env, lockWaitMs?: number): Promise<EnvStorage> {
  const url = env.DATABASE_URL
  if (url) {
    if (env.AFFILIATE_DB) fail('set DATABASE_URL (PostgreSQL) or AFFILIATE_DB (the embedded database), not both')
    const schema = env.AFFILIATE_SCHEMA || undefined
    if (schema !== undefined && !SCHEMA.test(schema))
      fail(`AFFILIATE_SCHEMA must be a PostgreSQL name (letters, digits, _; at most 63), got ${schema}`)
    const { DEFAULT_SCHEMA, postgresStorage } = await optional(() => import('../adapters/postgres.js'), 'DATABASE_URL', 'pg')
    const storage = postgresStorage({ connectionString: url, ...(schema ? { schema } : {}) })
    return { storage, where: `PostgreSQL ${redactUrl(url)}, schema ${schema ?? DEFAULT_SCHEMA}`, kind: 'postgres' }
  }
  if (env.AFFILIATE_SCHEMA) fail('AFFILIATE_SCHEMA is the PostgreSQL schema: it needs DATABASE_URL')
  const path = env.AFFILIATE_DB || DEFAULT_DB
  return {
    storage: sqlJsStorage(path === ':memory:' ? {} : { persist: fileJournal(path, lockWaitMs === undefined ? {} : { lockWaitMs }) }),
    where: path,
    kind: 'sqljs',
  }
}

/**
 * The storage of a command (`keys`, `payouts`), ready: `--db` names the file database in place of
 * AFFILIATE_DB. A database that cannot be opened ends the command with the reason.
 */
export async function openCommandStorage(db: string | undefined, env: NodeJS.ProcessEnv): Promise<EnvStorage> {
  if (db && env.DATABASE_URL) fail('--db is the embedded database file; DATABASE_URL names PostgreSQL: give one')
  // A command refuses at once when a server holds the file (it names the server's pid): only
  // `npm start` waits for a predecessor that is going.
  const opened = await storageFromEnv(db ? { ...env, AFFILIATE_DB: db } : env, 0)
  try {
    await opened.storage.ready()
  } catch (error) {
    await opened.storage.close().catch(() => undefined)
    fail(`cannot open the database ${opened.where}: ${reason(error)}`)
  }
  return opened
}

/**
 * REDIS_URL: every instance counts each key against one bucket in Redis. The keys are
 * `<AFFILIATE_SCHEMA>:limit:…` (one deployment, one prefix), the default schema's when none is
 * named: the store's own default. Without REDIS_URL: undefined (the service's in-memory store).
 */
export async function limiterFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<EnvLimiter | undefined> {
  const url = env.REDIS_URL
  if (!url) return undefined
  const { redisLimiterStore } = await import('../adapters/redis.js')
  const schema = env.AFFILIATE_SCHEMA
  const store = redisLimiterStore({ url, prefix: limiterPrefix(schema || undefined) })
  return { store, where: `Redis ${redactUrl(url)}` }
}

/**
 * The namespace of the user ids given to environment keys (AFFILIATE_API_KEY). examples/postgres-redis
 * uses the same one, so a key gets the same user id whichever of them serves it.
 */
export const ENV_KEY_NAMESPACE = '73a74ff6-9c63-4a16-a1b0-ad25c284060c'

/** The user id of an environment key: derived from the key, so it is the same on every start and instance. */
export const envKeyUserId = (key: string): string => nameUuid(ENV_KEY_NAMESPACE, key)

/** An error's message alone, with any connection string in it masked. */
export const reason = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, (url) => redactUrl(url))

/** The server's address to print: one bound to every interface (0.0.0.0, ::) is reached on loopback. */
export function reachableUrl(url: string): string {
  const parsed = new URL(url)
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1'
  else if (parsed.hostname === '[::]') parsed.hostname = '[::1]'
  return parsed.href.replace(/\/$/, '')
}

/** A whole number (or, with `fraction`, any number) above 0 from `variable`, else a plain failure. */
function positive(env: NodeJS.ProcessEnv, variable: string, fraction = false): number | undefined {
  const text = env[variable]
  if (text === undefined || text === '') return undefined
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || (!fraction && !Number.isInteger(value))) {
    fail(`${variable} must be a ${fraction ? 'number' : 'whole number'} above 0, got ${text}`)
  }
  return value
}

const OFF = /^(off|false|0|no)$/i
const ON = /^(on|true|1|yes)$/i

/** A yes/no variable: undefined when unset, else on (`1`, `true`, `yes`, `on`) or off. */
function flag(env: NodeJS.ProcessEnv, variable: string): boolean | undefined {
  const text = env[variable]
  if (text === undefined || text === '') return undefined
  if (ON.test(text)) return true
  if (OFF.test(text)) return false
  return fail(`${variable} must be 1 or 0 (true/false, yes/no, on/off), got ${text}`)
}

/**
 * AFFILIATE_TRUST_PROXY: how many proxies of yours stand in front (`1` for one TLS terminator or
 * load balancer; `0`, unset: none). With it, the client address comes from X-Forwarded-For and the
 * scheme from X-Forwarded-Proto at the outermost trusted hop, so the portal's and the admin's
 * cookies are `Secure` behind https. Never set it when clients reach the server directly: they
 * could then name any address.
 */
export function trustProxyFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.AFFILIATE_TRUST_PROXY
  if (text === undefined || text === '') return 0
  if (OFF.test(text)) return 0
  if (/^(true|yes|on)$/i.test(text)) return 1
  const hops = Number(text)
  if (!Number.isInteger(hops) || hops < 0 || hops > 10)
    fail(`AFFILIATE_TRUST_PROXY must be the number of proxies in front (0 to 10), got ${text}`)
  return hops
}

/** The per-key rate limit: AFFILIATE_RATE_LIMIT=off, or its capacity, refill and in-flight cap (each optional). */
export interface EnvRateLimit {
  off: boolean
  capacity?: number
  refillPerSecond?: number
  maxInFlight?: number | false
}

export function rateLimitFromEnv(env: NodeJS.ProcessEnv = process.env): EnvRateLimit {
  const switched = env.AFFILIATE_RATE_LIMIT
  const parts = ['AFFILIATE_RATE_LIMIT_CAPACITY', 'AFFILIATE_RATE_LIMIT_REFILL', 'AFFILIATE_RATE_LIMIT_IN_FLIGHT'].filter(
    (name) => env[name],
  )
  if (switched !== undefined && switched !== '') {
    if (!OFF.test(switched) && !ON.test(switched)) fail(`AFFILIATE_RATE_LIMIT must be off or on, got ${switched}`)
    if (OFF.test(switched)) {
      if (parts.length > 0) fail(`AFFILIATE_RATE_LIMIT=off turns the limit off: unset ${parts.join(', ')}`)
      return { off: true }
    }
  }
  const inFlight = env.AFFILIATE_RATE_LIMIT_IN_FLIGHT
  const capacity = positive(env, 'AFFILIATE_RATE_LIMIT_CAPACITY')
  const refillPerSecond = positive(env, 'AFFILIATE_RATE_LIMIT_REFILL', true)
  const maxInFlight = inFlight && OFF.test(inFlight) ? false : positive(env, 'AFFILIATE_RATE_LIMIT_IN_FLIGHT')
  return {
    off: false,
    ...(capacity !== undefined ? { capacity } : {}),
    ...(refillPerSecond !== undefined ? { refillPerSecond } : {}),
    ...(maxInFlight !== undefined ? { maxInFlight } : {}),
  }
}

/** Webhooks' development mode: AFFILIATE_WEBHOOKS_ALLOW_HTTP, AFFILIATE_WEBHOOKS_ALLOW_PRIVATE (both off by default). */
export function webhooksFromEnv(env: NodeJS.ProcessEnv = process.env): { allowHttp: boolean; allowPrivateAddresses: boolean } {
  return {
    allowHttp: flag(env, 'AFFILIATE_WEBHOOKS_ALLOW_HTTP') ?? false,
    allowPrivateAddresses: flag(env, 'AFFILIATE_WEBHOOKS_ALLOW_PRIVATE') ?? false,
  }
}

/** Where `npm start`'s mail goes: SMTP (SMTP_URL, with nodemailer) or the development mailbox. */
export interface EnvMail {
  /** Sends one message (sign-in links, notices, notifications). */
  send(message: {
    to: string
    from?: string
    subject: string
    text: string
    html?: string
    headers?: Record<string, string>
  }): Promise<void>
  /** The development mailbox when no SMTP_URL is set (the admin's Settings → E-mail lists it). */
  mailbox: DevelopmentMailbox | null
  /** AFFILIATE_MAIL_FROM, when set. */
  from: string | null
  /** Where the mail goes, fit to print (never a password). */
  where: string
  close(): void
}

/**
 * SMTP_URL (`smtp://` or `smtps://`, user and password in it) with AFFILIATE_MAIL_FROM sends through
 * `nodemailer`, loaded only then (an optional peer). Without SMTP_URL, mail goes to a development
 * mailbox: printed to the console and listed at /admin/settings/mail, never sent.
 */
export async function mailFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<EnvMail> {
  const smtp = env.SMTP_URL
  const from = env.AFFILIATE_MAIL_FROM || null
  if (!smtp) {
    const mailbox = developmentMailbox({
      log: (m) =>
        console.log(`affiliate-service: mail (development mailbox, not sent) to ${m.to}: ${m.subject}\n${m.text.replace(/^/gm, '  | ')}`),
    })
    return {
      send: async (message) => mailbox.send({ ...message, ...(from ? { from } : {}) }),
      mailbox,
      from,
      where: 'the development mailbox (console and /admin/settings/mail; set SMTP_URL to send)',
      close: () => undefined,
    }
  }
  let smtpUrl: URL
  try {
    smtpUrl = new URL(smtp)
  } catch {
    return fail(`SMTP_URL must be a URL such as smtp://user:password@mail.example.com:587, got ${redactUrl(smtp)}`)
  }
  if (smtpUrl.protocol !== 'smtp:' && smtpUrl.protocol !== 'smtps:')
    fail(`SMTP_URL must start with smtp:// or smtps://, got ${redactUrl(smtp)}`)
  if (!from) fail('SMTP_URL needs AFFILIATE_MAIL_FROM: the sender of the e-mails, e.g. "Partners <partners@example.com>"')
  const nodemailer = await optional(() => import('nodemailer'), 'SMTP_URL', 'nodemailer')
  const transport = nodemailer.createTransport(smtp)
  return {
    send: async ({ headers = {}, ...message }) => {
      // nodemailer sets the Message-ID from `messageId`; the other headers go as given.
      const { 'Message-ID': messageId, ...rest } = headers
      await transport.sendMail({ ...message, from: message.from ?? from, headers: rest, ...(messageId ? { messageId } : {}) })
    },
    mailbox: null,
    from,
    where: `SMTP ${redactUrl(smtp)}`,
    close: () => transport.close(),
  }
}

/** The portal's settings from the environment, or undefined when AFFILIATE_PORTAL_SECRET is unset (portal off). */
export interface EnvPortal {
  secret: string
  publicUrl: string
  sendSignInLink: (email: string, url: string) => Promise<void>
  /** Plain-text notices (a changed payout e-mail, told to the old address). */
  sendNotice: (email: string, subject: string, text: string) => Promise<void>
}

/**
 * AFFILIATE_PORTAL_SECRET (32+ characters) turns the portal on; its e-mailed links start with
 * AFFILIATE_PUBLIC_URL (required with SMTP_URL; with the development mailbox it defaults to
 * `http://<HOST or 127.0.0.1>:<PORT or 3000>`). Its mail goes where `mail` sends.
 */
export function portalFromEnv(env: NodeJS.ProcessEnv, mail: EnvMail): EnvPortal | undefined {
  const secret = env.AFFILIATE_PORTAL_SECRET
  if (!secret) {
    if (env.AFFILIATE_PUBLIC_URL) fail('AFFILIATE_PUBLIC_URL is for the portal: set AFFILIATE_PORTAL_SECRET (32+ characters) to turn it on')
    return undefined
  }
  if (secret.length < 32) fail('AFFILIATE_PORTAL_SECRET must be at least 32 characters')
  const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST
  const local = env.PORT === '0' ? undefined : `http://${host.includes(':') ? `[${host}]` : host}:${env.PORT || 3000}`
  const publicUrl = env.AFFILIATE_PUBLIC_URL || (mail.mailbox ? local : undefined)
  if (!publicUrl)
    fail('the portal needs AFFILIATE_PUBLIC_URL: the origin its e-mailed sign-in links start with, e.g. https://partners.example.com')
  let origin: URL
  try {
    origin = new URL(publicUrl)
  } catch {
    return fail(`AFFILIATE_PUBLIC_URL must be a URL such as https://partners.example.com, got ${publicUrl}`)
  }
  if (origin.protocol !== 'https:' && origin.protocol !== 'http:') fail(`AFFILIATE_PUBLIC_URL must be http or https, got ${publicUrl}`)
  return {
    secret,
    publicUrl: origin.origin,
    sendSignInLink: (email, url) =>
      mail.send({
        to: email,
        subject: 'Your sign-in link',
        text: `Sign in to the affiliate portal with this link (valid 15 minutes, once):\n\n${url}\n\nIf you did not ask for it, ignore this e-mail.`,
      }),
    sendNotice: (email, subject, text) => mail.send({ to: email, subject, text }),
  }
}

/** Notifications: AFFILIATE_NOTIFY_OWNERS (comma-separated addresses; else the admin's Settings → E-mail) and AFFILIATE_PROGRAM_NAME. */
export function notifyFromEnv(env: NodeJS.ProcessEnv, mail: EnvMail): NotifyOptions {
  const owners = (env.AFFILIATE_NOTIFY_OWNERS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
  const wrong = owners.find((o) => !/^[^\s@<>,]+@[^\s@<>,]+$/.test(o))
  if (wrong !== undefined) fail(`AFFILIATE_NOTIFY_OWNERS must be e-mail addresses separated by commas, got ${wrong}`)
  const programName = env.AFFILIATE_PROGRAM_NAME?.trim()
  return {
    send: ({ to, from, subject, text, html, headers }) => mail.send({ to, ...(from ? { from } : {}), subject, text, html, headers }),
    ...(mail.mailbox ? { mailbox: mail.mailbox } : {}),
    ...(owners.length ? { owners } : {}),
    ...(mail.from ? { from: mail.from } : {}),
    ...(programName ? { programName } : {}),
  }
}

/** The `settings` record holding the SHA-256 of the admin token `npm start` made. */
export const ADMIN_TOKEN_SETTING = 'adminTokenHash'

/**
 * The admin token's hash: of AFFILIATE_ADMIN_TOKEN (32+ characters) when set; else the one kept
 * in storage; else a new token, made now, its hash kept and the token itself answered once (to
 * print with a sign-in URL, never stored).
 */
export async function adminTokenFromEnv(
  env: NodeJS.ProcessEnv,
  storage: Storage,
): Promise<{ tokenHash: string; madeToken: string | null }> {
  const { createHash, randomBytes } = await import('node:crypto')
  const hash = (text: string) => createHash('sha256').update(text).digest('hex')
  const given = env.AFFILIATE_ADMIN_TOKEN
  if (given !== undefined && given !== '') {
    if (given.length < 32) fail('AFFILIATE_ADMIN_TOKEN must be at least 32 characters (or leave it unset: one is made and printed once)')
    return { tokenHash: hash(given), madeToken: null }
  }
  const kept = await storage.transaction((tx) => tx.get('settings', ADMIN_TOKEN_SETTING), { readOnly: true })
  if (kept) return { tokenHash: kept.value, madeToken: null }
  const token = randomBytes(32).toString('base64url')
  const now = new Date().toISOString()
  await storage.transaction((tx) => tx.insert('settings', { id: ADMIN_TOKEN_SETTING, value: hash(token), createdAt: now, updatedAt: now }))
  return { tokenHash: hash(token), madeToken: token }
}
