// The shapes kept in storage. Money is integer minor units (cents), timestamps are ISO strings,
// and `*Key` fields are lower-cased copies that uniqueness and look-ups use.

export type CommissionType = 'percentage' | 'fixed'
export type PayoutMethod = 'PAYPAL' | 'WISE' | 'BANK_TRANSFER'
export type CommissionStatus = 'pending' | 'processing' | 'paid' | 'refunded'
/** A `sale` earns; a `clawback` (negative, made by refunding a paid sale) recovers money in the next payout. */
export type CommissionKind = 'sale' | 'clawback'
export type PayoutStatus = 'pending' | 'processing' | 'paid' | 'failed' | 'canceled'

export type CampaignRecord = {
  id: string
  workspaceId: string
  campaignName: string
  commissionType: CommissionType
  /** Hundredths: a percentage of 12.5 is 1250, a fixed 10.00 is 1000. */
  amountMinor: number
  minimumPayoutMinor: number
  payoutId: string
  url: string
  requiresApprovalToJoin: boolean
  collectAdditionalInfo: boolean
  hideCustomerEmail: boolean
  payoutTerm: number
  affiliatePortalWelcomeMessage: string
  affiliateDashboardText: string
  stripeCouponId: string
  allowedUrlParameters: string[]
  isDefault: boolean
  /** ISO 4217 code of a two-decimal currency; fixed once the campaign has commissions. */
  currency: string
  /** Days a click may lead to a signup or sale it is credited with. */
  attributionWindowDays: number
  /**
   * Which paid sales of a customer earn: null every one, 0 only the first, N those paid before the
   * first paid sale + N calendar months (UTC).
   */
  recurringMonths: number | null
  /** The most commissions one customer's sales earn; null for no limit. */
  maxCommissionsPerCustomer: number | null
  createdAt: string
  updatedAt: string
}

export type AffiliateRecord = {
  id: string
  workspaceId: string
  campaignId: string
  email: string
  emailKey: string
  firstName: string
  lastName: string
  notes: string
  payoutEmail: string
  payoutMethod: PayoutMethod | null
  details: string | null
  isActive: boolean
  isBanned: boolean
  totalOpens: number
  totalClicks: number
  totalSignups: number
  totalEarningsMinor: number
  createdAt: string
  updatedAt: string
}

export type LinkRecord = {
  id: string
  workspaceId: string
  campaignId: string
  affiliateId: string
  userId: string | null
  referralCode: string
  urlParameter: string
  url: string
  totalOpens: number
  totalClicks: number
  totalSignups: number
  totalEarningsMinor: number
  createdAt: string
  updatedAt: string
}

/** A commission and a referred user are one record: the referred-user fields are null when unset. */
export type CommissionRecord = {
  id: string
  workspaceId: string
  campaignId: string
  affiliateId: string
  referredUser: string
  referredUserKey: string
  amountMinor: number
  adminEarnedMinor: number
  status: CommissionStatus
  commissionDate: string
  remarks: string | null
  payoutDate: string | null
  name: string | null
  isSelfReferral: boolean
  isWalletPayment: number
  chargeId: string | null
  invoiceId: string | null
  stripeSubscriptionId: string | null
  /** The link the sale came through, when the request named its referral code. */
  linkId: string | null
  referralCode: string | null
  kind: CommissionKind
  /** When it may be paid: `commissionDate` plus the campaign's `payoutTerm` days (a clawback: when made). */
  dueAt: string
  /** The payout it is in, while it is in one (and after, once paid). */
  payoutId: string | null
  /** What refunds took back from it after it was paid; the amount stays what was paid. */
  refundedMinor: number
  /** On a clawback: the paid sale it takes money back from. */
  reversesCommissionId: string | null
  /** The sale it was made from (minor units); null when made by hand, and on a clawback. */
  saleAmountMinor: number | null
  /** Its campaign's currency (a sale's commission is only ever made in it). */
  currency: string
  /** The customer whose sale made it (a clawback: the customer of the sale it reverses); null when made by hand. */
  customerId: string | null
  /** The sale's payment intent (Stripe), once an event has named it. */
  paymentIntentId: string | null
  /** Why it is held for review; empty (no commission is held yet: the fraud rules will). */
  holdReasons: string[]
  createdAt: string
  updatedAt: string
}

/**
 * A host's customer, bound once to the affiliate that brought it (the first attribution wins; only
 * an update moves it). Forgetting one erases `email`, `name` and `externalId` and keeps the money.
 */
export type CustomerRecord = {
  id: string
  workspaceId: string
  campaignId: string
  affiliateId: string
  linkId: string | null
  clickId: string | null
  /**
   * When it was attributed: its click's time when a click brought it, else when its lead was made
   * (a sale naming a code: the sale's `paidAt`). A sale paid before earns nothing (`before_attribution`).
   */
  attributedAt: string
  /** The host's id for its user; unique per workspace. */
  externalId: string
  email: string
  /** Lower-cased `email`: what signups are counted by. */
  emailKey: string
  name: string | null
  /** Its Stripe customer: one customer per Stripe customer in a workspace (the first attribution wins). */
  stripeCustomerId: string | null
  /** When its earliest paid sale was paid: where a campaign's `recurringMonths` count from. */
  firstSaleAt: string | null
  salesCount: number
  /** Commissions its sales made: what `maxCommissionsPerCustomer` limits. */
  commissionCount: number
  createdAt: string
  updatedAt: string
}

/**
 * One sale a host reported (`POST /conversions/sale`) or a provider's event made, earning or not:
 * its `invoiceId` is unique per workspace, so a repeat answers `answer` again instead of paying
 * twice. Its charge and payment intent are unique too: a refund finds its sale by either.
 */
export type SaleRecord = {
  id: string
  workspaceId: string
  invoiceId: string
  chargeId: string | null
  /** The payment intent that paid it (Stripe), from whichever event named it. */
  paymentIntentId: string | null
  subscriptionId: string | null
  /**
   * The Stripe customer that paid it. A sale of a Stripe customer no customer is bound to yet is
   * kept with `customerId` null; binding that Stripe customer later attributes it then.
   */
  stripeCustomerId: string | null
  customerId: string | null
  /** The commission it made, null when skipped. */
  commissionId: string | null
  currency: string
  amountMinor: number
  /** What refunds of the sale took back. */
  refundedMinor: number
  /** The commission's amount when made: refunds take back their share of it. */
  commissionMinor: number
  /** What refunds of the sale took back from the commission. */
  commissionRefundedMinor: number
  paidAt: string
  /** JSON of the first answer's `data`, answered again to a repeat. */
  answer: string
  createdAt: string
  updatedAt: string
}

/** One refund of a sale (`POST /conversions/refund`); a `refundId` is unique per workspace. */
export type SaleRefundRecord = {
  id: string
  workspaceId: string
  saleId: string
  refundId: string | null
  amountMinor: number
  /** What it took back from the sale's commission. */
  commissionMinor: number
  /** JSON of the answer's `data`, answered again to a repeat of its `refundId`. */
  answer: string
  createdAt: string
  updatedAt: string
}

/** A payment provider connected to a workspace: its events become leads, sales and refunds. */
export type IntegrationRecord = {
  id: string
  workspaceId: string
  provider: 'stripe'
  /** Attribution is limited to this campaign's affiliates and codes; null: any campaign of the workspace. */
  campaignId: string | null
  /** Events whose `livemode` differs are recorded `ignored`. */
  livemode: boolean
  /** Where the provider posts events: `/api/v1/integrations/<id>/events`. */
  endpointPath: string
  description: string
  /** The provider's signing secret (`whsec_…`): read by the verifier only, never answered. */
  signingSecret: string
  createdAt: string
  updatedAt: string
}

export type ProviderEventStatus = 'processed' | 'ignored' | 'waiting' | 'failed'

/** One provider event an integration received; its `eventId` is unique per integration (a redelivery changes nothing). */
export type ProviderEventRecord = {
  id: string
  workspaceId: string
  integrationId: string
  /** The provider's event id (`evt_…`). */
  eventId: string
  type: string
  /** `waiting`: a refund (or a payment's link to its invoice) whose sale is not known yet. */
  status: ProviderEventStatus
  reason: string | null
  commissionId: string | null
  /** The payment it concerns, as far as the event names it: what a sale and its refunds are matched by. */
  invoiceId: string | null
  chargeId: string | null
  paymentIntentId: string | null
  /** A refund: the charge's amount and its `amount_refunded`, in minor units (0 for other events). */
  chargedMinor: number
  refundedMinor: number
  receivedAt: string
  createdAt: string
  updatedAt: string
}

/** Money on its way to one affiliate: the due commissions of one campaign, netted, made by a payout run. */
export type PayoutRecord = {
  id: string
  workspaceId: string
  campaignId: string
  affiliateId: string
  currency: string
  /** The sum of its commissions (clawbacks are negative); above zero when made. */
  amountMinor: number
  commissionCount: number
  status: PayoutStatus
  /** Copied from the affiliate when made. */
  payoutMethod: PayoutMethod
  payoutEmail: string
  /** The run's `asOf`: commissions due by then are in it. */
  periodEnd: string
  externalReference: string | null
  failureReason: string | null
  paidAt: string | null
  createdAt: string
  updatedAt: string
}

/**
 * An API key as kept in storage: only its SHA-256 hash, never the key. `lookup` (the hash's first
 * 16 hex digits) finds the candidates and the whole hash is then compared in constant time.
 */
export type ApiKeyRecord = {
  id: string
  /** SHA-256 of the key, lowercase hex. */
  hash: string
  /** The first 16 hex digits of `hash`: what look-ups use, so an index never compares whole hashes. */
  lookup: string
  /** The key's first characters (`aff_live_` and four more), so a person can tell keys apart. */
  prefix: string
  userId: string
  workspaceIds: string[]
  /** A note for people, e.g. where the key is used. */
  label: string
  /** When the key was revoked; a revoked key resolves to nothing. */
  revokedAt: string | null
  /** `secret` keys use the API; `publishable` ones (`pk_…`) only the tracking beacon. */
  kind: ApiKeyKind
  /** Publishable keys: the browser origins (`https://shop.example.com`) the beacon answers CORS for. */
  allowedOrigins: string[]
  /** When a request last used the key (written at most once a minute), or null when never. */
  lastUsedAt: string | null
  createdAt: string
  updatedAt: string
}

export type ApiKeyKind = 'secret' | 'publishable'

/**
 * One counted click or open, kept only while it can still be credited with a signup or sale (the
 * longest attribution window), then pruned: compact on purpose, the counters and rollups keep the totals.
 */
export type ClickRecord = {
  /** The `clickId` handed to the landing page. */
  id: string
  linkId: string
  event: 'click' | 'open'
  /**
   * Who clicked, unrecognisable: a keyed hash of the link, the client address and the user agent
   * under a salt that changes every UTC day (see src/tracking/visitor.ts). Repeats within the
   * dedupe window share it.
   */
  visitor: string
  createdAt: string
}

/** A value the service keeps for itself, e.g. the secret the daily click salt derives from. */
export type SettingRecord = {
  /** The setting's name. */
  id: string
  value: string
  createdAt: string
  updatedAt: string
}

/** A POST sent with an `Idempotency-Key`: held while it runs, then its answer, kept for replay. */
export type IdempotencyRecord = {
  id: string
  /** SHA-256 of the API key id and the Idempotency-Key: retries are scoped per key. */
  scopeKey: string
  /** SHA-256 of the method, path, query and body: a retry must be the same request. */
  requestHash: string
  state: 'running' | 'done'
  /** The answer's status; 0 while running. */
  status: number
  /** The answer's body as sent; empty while running. */
  body: string
  /** When the record may be forgotten: the running lease, then the replay window. */
  expiresAt: string
  createdAt: string
  updatedAt: string
}

/**
 * A change, written in the same transaction as the change itself (the outbox). `sequence` is
 * allocated from the `sequences` record in that transaction, so it follows commit order (see
 * src/events/outbox.ts); `data` is the JSON of the resource as the API answers it.
 */
export type EventRecord = {
  id: string
  workspaceId: string
  type: string
  sequence: number
  /** JSON text of `data`. */
  data: string
  createdAt: string
}

/** Where a workspace's events are POSTed, signed with `secret` (and each of `previousSecrets` while its overlap lasts). */
export type WebhookRecord = {
  id: string
  workspaceId: string
  url: string
  /** Event types, or `['*']` for every one. */
  events: string[]
  description: string
  enabled: boolean
  disabledReason: string | null
  /** Deliveries that ended dead since the last one that succeeded (5 disable the webhook). */
  consecutiveDeadDeliveries: number
  /** `whsec_...`; kept as is, since signing needs it (HMAC), and never answered after creation or rotation. */
  secret: string
  /** Each `<expiresAt> <secret>`, newest first (see `rotateWebhookSecret`). */
  previousSecrets: string[]
  previousSecretExpiresAt: string | null
  createdAt: string
  updatedAt: string
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead'

/** One event to one webhook, with the outcome of its last attempt. */
export type WebhookDeliveryRecord = {
  id: string
  workspaceId: string
  webhookId: string
  eventId: string
  eventType: string
  status: WebhookDeliveryStatus
  attempts: number
  /** When it is due; while a dispatcher holds it, the end of that dispatcher's lease. Null once final. */
  nextAttemptAt: string | null
  /** The claim of the dispatcher holding it (its lease), null when none does. */
  claimToken: string | null
  lastStatusCode: number | null
  lastError: string | null
  lastResponseBody: string | null
  lastDurationMs: number | null
  createdAt: string
  updatedAt: string
}

/** A counter that only grows, moved with `increment` (the events' `sequence`). */
export type SequenceRecord = {
  id: string
  value: number
  createdAt: string
  updatedAt: string
}

/**
 * Report figures of one UTC hour or day, kept in step with the records in the same transaction as
 * every write that moves them (src/reports/rollup.ts). Each change moves six rows: the hour's and
 * the day's, each at the affiliate's level (`campaignId` and `affiliateId` set), its campaign's
 * (`affiliateId` '') and its workspace's (both ''). Money is minor units.
 */
export type RollupRecord = {
  /** `workspace|campaign|affiliate|<hourStart or YYYY-MM-DD>`, '*' for the levels that sum over all. */
  id: string
  workspaceId: string
  /** '' on the workspace's rows. */
  campaignId: string
  /** '' on the workspace's and campaign's rows. */
  affiliateId: string
  /** The first instant covered, ISO 8601 (`2026-03-29T01:00:00.000Z`; a day row's is its midnight). */
  hourStart: string
  /** What reads go by: an hour row's key names its UTC day, a day row's its UTC month (`prefix|YYYY-MM-DD`, `prefix|YYYY-MM`). */
  seriesKey: string
  /** On affiliate rows, what top-affiliates reads (`workspace|YYYY-MM-DD` on hour rows, `workspace|YYYY-MM` on day rows); null on the others. */
  rankKey: string | null
  opens: number
  clicks: number
  /** Referred e-mails whose first record (by commissionDate) for the affiliate falls in this hour. */
  signups: number
  /** Sales dated in this hour, whatever their status. */
  saleCount: number
  /** What those sales earn (as `totalEarnings`: not refunded, less refunds after payment). */
  earningsMinor: number
  pendingCount: number
  pendingMinor: number
  processingCount: number
  processingMinor: number
  paidCount: number
  paidMinor: number
  refundedCount: number
  refundedMinor: number
  clawbackCount: number
  /** Negative: clawbacks are. */
  clawbackMinor: number
  /** Payouts paid in this hour. */
  payoutCount: number
  paidOutMinor: number
  /** The same as `hourStart`, so rows list in hour order. */
  createdAt: string
}

/**
 * A portal secret: a sign-in link's token or a session cookie. Only a keyed hash of the secret is
 * kept (it is the id), so the stored records cannot be used to sign in.
 */
export type PortalTokenRecord = {
  /** HMAC-SHA256 of the secret under the portal's `secret`, hex. */
  id: string
  kind: 'signIn' | 'session'
  /** The e-mail the link was sent to (lowercase); a session's affiliates are the ones with it. */
  email: string
  /** A session's affiliate once chosen; null for links and for sessions still choosing. */
  affiliateId: string | null
  /** A link: 15 minutes after it was sent; a session: when it ends. */
  expiresAt: string
  createdAt: string
  updatedAt: string
}

export interface ModelRecords {
  campaigns: CampaignRecord
  affiliates: AffiliateRecord
  links: LinkRecord
  commissions: CommissionRecord
  payouts: PayoutRecord
  apiKeys: ApiKeyRecord
  idempotency: IdempotencyRecord
  events: EventRecord
  webhooks: WebhookRecord
  webhookDeliveries: WebhookDeliveryRecord
  sequences: SequenceRecord
  rollups: RollupRecord
  clicks: ClickRecord
  settings: SettingRecord
  portalTokens: PortalTokenRecord
  customers: CustomerRecord
  sales: SaleRecord
  saleRefunds: SaleRefundRecord
  integrations: IntegrationRecord
  providerEvents: ProviderEventRecord
}
