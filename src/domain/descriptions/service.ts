import { model } from '../describe.js'
import { bool, indexedText, int, list, nullableText, stamps, text, timestamp } from './fields.js'

// The records the service keeps for itself: keys, idempotent answers, counters, report rollups,
// clicks, settings and portal secrets. No request writes them field by field.

export const API_KEY_KINDS = ['secret', 'publishable'] as const

/**
 * An API key as kept in storage: only its SHA-256 hash, never the key. `lookup` (the hash's first
 * 16 hex digits) finds the candidates and the whole hash is then compared in constant time.
 */
export const apiKeys = model({
  id: text(),
  /** SHA-256 of the key, lowercase hex. */
  hash: text({ unique: 'api_keys_hash' }),
  /** The first 16 hex digits of `hash`: what look-ups use, so an index never compares whole hashes. */
  lookup: indexedText,
  /** The key's first characters (`aff_live_` and four more), so a person can tell keys apart. */
  prefix: text({ searched: true }),
  userId: text(),
  workspaceIds: list(),
  /** A note for people, e.g. where the key is used. */
  label: text({ searched: true }),
  /** When the key was revoked; a revoked key resolves to nothing. */
  revokedAt: timestamp({ nullable: true }),
  /** `secret` keys use the API; `publishable` ones (`pk_…`) only the tracking beacon. */
  kind: text({ values: API_KEY_KINDS }),
  /** Publishable keys: the browser origins (`https://shop.example.com`) the beacon answers CORS for. */
  allowedOrigins: list(),
  /** When a request last used the key (written at most once a minute), or null when never. */
  lastUsedAt: timestamp({ nullable: true }),
  ...stamps,
})

/** A POST sent with an `Idempotency-Key`: held while it runs, then its answer, kept for replay. */
export const idempotency = model({
  id: text(),
  /** SHA-256 of the API key id and the Idempotency-Key: retries are scoped per key. */
  scopeKey: text({ indexed: true, unique: 'idempotency_scope' }),
  /** SHA-256 of the method, path, query and body: a retry must be the same request. */
  requestHash: text(),
  state: text({ values: ['running', 'done'] }),
  /** The answer's status; 0 while running. */
  status: int(),
  /** The answer's body as sent; empty while running. */
  body: text(),
  /** When the record may be forgotten: the running lease, then the replay window. */
  expiresAt: timestamp(),
  ...stamps,
})

/** A counter that only grows, moved with `increment` (the events' `sequence`). */
export const sequences = model({ id: text(), value: int(), ...stamps })

/** The numeric figures of a rollup row, in column order. */
export const ROLLUP_COUNTERS = [
  'opens',
  'clicks',
  'signups',
  'saleCount',
  'earningsMinor',
  'pendingCount',
  'pendingMinor',
  'processingCount',
  'processingMinor',
  'paidCount',
  'paidMinor',
  'refundedCount',
  'refundedMinor',
  'clawbackCount',
  'clawbackMinor',
  'payoutCount',
  'paidOutMinor',
  'salesMinor',
  'holdCount',
  'holdMinor',
  'voidedCount',
  'voidedMinor',
] as const

/**
 * Report figures of one UTC hour or day, kept in step with the records in the same transaction as
 * every write that moves them (src/reports/rollup.ts). Each change moves six rows: the hour's and
 * the day's, each at the affiliate's level (`campaignId` and `affiliateId` set), its campaign's
 * (`affiliateId` '') and its workspace's (both ''). Money is minor units.
 */
export const rollups = model({
  /** `workspace|campaign|affiliate|<hourStart or YYYY-MM-DD>`, '*' for the levels that sum over all. */
  id: text(),
  workspaceId: text(),
  /** '' on the workspace's rows. */
  campaignId: text(),
  /** '' on the workspace's and campaign's rows. */
  affiliateId: text(),
  /** The first instant covered, ISO 8601 (`2026-03-29T01:00:00.000Z`; a day row's is its midnight). */
  hourStart: timestamp(),
  /** What reads go by: an hour row's key names its UTC day, a day row's its UTC month (`prefix|YYYY-MM-DD`, `prefix|YYYY-MM`). */
  seriesKey: indexedText,
  /** On affiliate rows, what top-affiliates reads (`workspace|YYYY-MM-DD` on hour rows, `workspace|YYYY-MM` on day rows); null on the others. */
  rankKey: text({ nullable: true, indexed: true }),
  opens: int(),
  clicks: int(),
  /** Referred e-mails whose first record (by commissionDate) for the affiliate falls in this hour. */
  signups: int(),
  /** Sales dated in this hour, whatever their status. */
  saleCount: int(),
  /** What those sales earn (as `totalEarnings`: not refunded, less refunds after payment). */
  earningsMinor: int(),
  pendingCount: int(),
  pendingMinor: int(),
  processingCount: int(),
  processingMinor: int(),
  paidCount: int(),
  paidMinor: int(),
  refundedCount: int(),
  refundedMinor: int(),
  clawbackCount: int(),
  /** Negative: clawbacks are. */
  clawbackMinor: int(),
  /** Payouts paid in this hour. */
  payoutCount: int(),
  paidOutMinor: int(),
  /** What the sales dated in this hour were (their `saleAmount`, before any refund): the referred revenue. */
  salesMinor: int(),
  /** Sales held for review by the fraud rules, and those voided after review. */
  holdCount: int(),
  holdMinor: int(),
  voidedCount: int(),
  voidedMinor: int(),
  /** The same as `hourStart`, so rows list in hour order. */
  createdAt: timestamp(),
})

/**
 * One counted click or open, kept only while it can still be credited with a signup or sale (the
 * longest attribution window), then pruned: compact on purpose, the counters and rollups keep the totals.
 */
export const clicks = model({
  /** The `clickId` handed to the landing page. */
  id: text(),
  linkId: text(),
  event: text({ values: ['click', 'open'] }),
  /**
   * Who clicked, unrecognisable: a keyed hash of the link, the client address and the user agent
   * under a salt that changes every UTC day (see src/tracking/visitor.ts). Repeats within the
   * dedupe window share it. An event of the keyed `POST /links/track` naming no visitor has
   * `keyed:` and its own id: no other event repeats it.
   */
  visitor: indexedText,
  /** The client address alone, hashed under the same day's salt ('' without one): what `address_burst` counts by. */
  address: text(),
  /** The address and user agent, of no link, hashed under the day's salt ('' without an address): what `self_referral` compares with the affiliate's portal visits. */
  device: text(),
  /** Whether its landing url carried an ad network's click id (gclid, fbclid, ...): what `paid_ad_click` reads. */
  paidAd: bool(),
  createdAt: timestamp(),
})

/** A value the service keeps for itself, e.g. the secret the daily click salt derives from. */
export const settings = model({
  /** The setting's name. */
  id: text(),
  value: text(),
  ...stamps,
})

/**
 * A portal secret: a sign-in link's token or a session cookie. Only a keyed hash of the secret is
 * kept (it is the id), so the stored records cannot be used to sign in.
 */
export const portalTokens = model({
  /** HMAC-SHA256 of the secret under the portal's `secret`, hex. */
  id: text(),
  kind: text({ values: ['signIn', 'session'] }),
  /** The e-mail the link was sent to (lowercase); a session's affiliates are the ones with it. */
  email: indexedText,
  /** A session's affiliate once chosen; null for links and for sessions still choosing. */
  affiliateId: nullableText,
  /** A link: 15 minutes after it was sent; a session: when it ends. */
  expiresAt: timestamp(),
  ...stamps,
})

/**
 * A session of the admin's token sign-in. Only a keyed hash of the cookie's secret is kept (it is
 * the id), so the stored records cannot be used to sign in; signing out deletes the record, which
 * ends the session on every browser holding a copy of the cookie.
 */
export const adminSessions = model({
  /** HMAC-SHA256 of the cookie's secret under the admin's secret, and of the admin token's hash, hex. */
  id: text(),
  /** Who signed in (`admin` for the token sign-in). */
  userId: text(),
  /** When it ends; ended sessions are deleted at the next sign-in. */
  expiresAt: timestamp(),
  ...stamps,
})
