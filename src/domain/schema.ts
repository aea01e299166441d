import { formatMoney, moneyNumber } from './money.js'
import type { ModelRecords } from './records.js'

// One description per record: every field of every model, once. The storages' columns, `models`
// (indexes, unique constraints, search fields), the public answer mappers and each field's JSON
// Schema derive from this table. A field added to a record type and not here fails to compile.

type JsonSchema = Record<string, unknown>

/**
 * How a field is kept and shown. `timestamp` is an ISO 8601 string; `money` is integer minor
 * units (cents) in storage, shown on the wire as its `wire` says; `list` is a string array.
 */
export type FieldKind = 'text' | 'int' | 'bool' | 'list' | 'timestamp' | 'money'

/** How a field is kept in a column: what SQL storages need to know. */
export type ColumnKind = 'text' | 'int' | 'bool' | 'list'

export interface FieldSpec {
  kind: FieldKind
  /** May hold null. @default false */
  nullable?: boolean
  /** No two records share the value (a null never collides); the name is the constraint's. */
  unique?: string
  /** Records are looked up by this field: storages index it (in list order). @default false */
  indexed?: boolean
  /** `contains` searches it, case-insensitively. @default false */
  searched?: boolean
  /** The values a text field may hold. */
  values?: readonly string[]
  /** For `money`: a two-decimal string (`"12.50"`) or a number (`12.5`) in answers. @default 'number' */
  wire?: 'string' | 'number'
  /** Its name in API answers, when not the field's own. */
  answerAs?: string
  /** A note for people; becomes the JSON Schema's description. */
  description?: string
}

export interface ModelSchema<M extends keyof ModelRecords> {
  fields: { [K in keyof ModelRecords[M]]-?: FieldSpec }
  /** Unique constraints over several fields (one-field ones are the fields' `unique`). */
  unique?: readonly { name: string; fields: readonly (keyof ModelRecords[M] & string)[] }[]
  /** Look-ups over several fields, each served by one index (one-field ones are `indexed`). */
  indexes?: readonly (readonly (keyof ModelRecords[M] & string)[])[]
  /**
   * Lists in another order than `createdAt`: records matching `where` (equality) ordered by `orderBy`
   * (then `id`), which SQL storages serve from an index on (`where`…, `orderBy`, `id`) rather than a sort.
   */
  ordered?: readonly { where: readonly (keyof ModelRecords[M] & string)[]; orderBy: keyof ModelRecords[M] & string }[]
  /** The API answers made from this record: each a list of fields, in answer order. */
  answers?: Record<string, readonly (keyof ModelRecords[M] & string)[]>
}

const text: FieldSpec = { kind: 'text' }
const nullableText: FieldSpec = { kind: 'text', nullable: true }
const indexedText: FieldSpec = { kind: 'text', indexed: true }
const int: FieldSpec = { kind: 'int' }
const bool: FieldSpec = { kind: 'bool' }
const timestamp: FieldSpec = { kind: 'timestamp' }
const money = (answerAs: string, wire: 'string' | 'number' = 'number'): FieldSpec => ({ kind: 'money', answerAs, wire })
const stamps = { createdAt: timestamp, updatedAt: timestamp }
const totals = { totalOpens: int, totalClicks: int, totalSignups: int, totalEarningsMinor: money('totalEarnings') }

const commissionAnswer = [
  'id', 'campaignId', 'workspaceId', 'affiliateId', 'referredUser', 'amountMinor', 'adminEarnedMinor', 'status',
  'commissionDate', 'remarks', 'referralCode', 'kind', 'dueAt', 'payoutId', 'refundedMinor', 'reversesCommissionId',
  'saleAmountMinor', 'currency', 'customerId', 'invoiceId', 'chargeId', 'stripeSubscriptionId', 'paymentIntentId', 'holdReasons',
  'createdAt', 'updatedAt',
] as const

export const schema: { [M in keyof ModelRecords]: ModelSchema<M> } = {
  campaigns: {
    fields: {
      id: text,
      workspaceId: indexedText,
      campaignName: { kind: 'text', searched: true },
      commissionType: { kind: 'text', values: ['percentage', 'fixed'] },
      amountMinor: {
        ...money('amount'),
        description: 'A percentage (0 to 100) when `commissionType` is `percentage`, else an amount of money.',
      },
      minimumPayoutMinor: money('minimumPayoutAmount'),
      payoutId: text,
      url: text,
      requiresApprovalToJoin: bool,
      collectAdditionalInfo: bool,
      hideCustomerEmail: bool,
      payoutTerm: { kind: 'int', description: 'Days.' },
      affiliatePortalWelcomeMessage: text,
      affiliateDashboardText: text,
      stripeCouponId: text,
      allowedUrlParameters: { kind: 'list' },
      isDefault: bool,
      currency: { kind: 'text', description: 'ISO 4217 code of a two-decimal currency; fixed once the campaign has commissions.' },
      attributionWindowDays: { kind: 'int', description: 'Days (1 to 365) a click may lead to a signup or sale it is credited with.' },
      recurringMonths: {
        kind: 'int',
        nullable: true,
        description:
          "Which paid sales of a customer earn: null every one, 0 only the first, N (up to 120) those paid before the first paid sale + N calendar months (UTC).",
      },
      maxCommissionsPerCustomer: { kind: 'int', nullable: true, description: "The most commissions one customer's sales earn (1 or more); null for no limit." },
      ...stamps,
    },
    answers: {
      campaign: [
        'id', 'campaignName', 'workspaceId', 'commissionType', 'amountMinor', 'minimumPayoutMinor', 'payoutId', 'url',
        'requiresApprovalToJoin', 'collectAdditionalInfo', 'hideCustomerEmail', 'payoutTerm', 'affiliatePortalWelcomeMessage',
        'affiliateDashboardText', 'stripeCouponId', 'allowedUrlParameters', 'isDefault', 'currency', 'attributionWindowDays',
        'recurringMonths', 'maxCommissionsPerCustomer', 'createdAt', 'updatedAt',
      ],
    },
  },
  affiliates: {
    fields: {
      id: text,
      workspaceId: indexedText,
      campaignId: indexedText,
      email: { kind: 'text', searched: true },
      emailKey: indexedText,
      firstName: { kind: 'text', searched: true },
      lastName: { kind: 'text', searched: true },
      notes: text,
      payoutEmail: { kind: 'text', description: 'The empty string when unset.' },
      payoutMethod: { kind: 'text', nullable: true, values: ['PAYPAL', 'WISE', 'BANK_TRANSFER'], description: 'null until chosen.' },
      details: nullableText,
      isActive: bool,
      isBanned: bool,
      ...totals,
      ...stamps,
    },
    unique: [{ name: 'affiliates_campaign_email', fields: ['campaignId', 'emailKey'] }],
    // The admin's top affiliates: a workspace's highest earners, not a sort of all its affiliates.
    ordered: [{ where: ['workspaceId'], orderBy: 'totalEarningsMinor' }],
    answers: {
      affiliate: [
        'id', 'email', 'firstName', 'lastName', 'notes', 'workspaceId', 'campaignId', 'payoutEmail', 'payoutMethod', 'details',
        'isActive', 'isBanned', 'totalOpens', 'totalClicks', 'totalSignups', 'totalEarningsMinor', 'createdAt', 'updatedAt',
      ],
    },
  },
  links: {
    fields: {
      id: text,
      workspaceId: indexedText,
      campaignId: text,
      affiliateId: indexedText,
      userId: nullableText,
      referralCode: { kind: 'text', indexed: true, searched: true, unique: 'links_referral_code' },
      urlParameter: text,
      url: text,
      ...totals,
      ...stamps,
    },
    answers: {
      link: [
        'id', 'referralCode', 'url', 'urlParameter', 'userId', 'affiliateId', 'campaignId', 'totalOpens', 'totalClicks',
        'totalSignups', 'totalEarningsMinor', 'createdAt', 'updatedAt',
      ],
    },
  },
  commissions: {
    fields: {
      id: { kind: 'text', answerAs: 'commissionId' },
      workspaceId: indexedText,
      campaignId: indexedText,
      affiliateId: indexedText,
      referredUser: { kind: 'text', searched: true, description: "The referred user's e-mail." },
      referredUserKey: indexedText,
      amountMinor: money('amount', 'string'),
      adminEarnedMinor: money('adminEarnedAmount', 'string'),
      status: { kind: 'text', values: ['pending', 'processing', 'paid', 'refunded'] },
      commissionDate: timestamp,
      remarks: { kind: 'text', nullable: true, searched: true },
      payoutDate: { kind: 'timestamp', nullable: true },
      name: { kind: 'text', nullable: true, searched: true },
      isSelfReferral: bool,
      isWalletPayment: int,
      chargeId: nullableText,
      invoiceId: nullableText,
      stripeSubscriptionId: nullableText,
      linkId: nullableText,
      referralCode: { kind: 'text', nullable: true, description: 'The referral link the sale came through, when one was given.' },
      kind: { kind: 'text', values: ['sale', 'clawback'], description: 'A clawback is the negative commission a refund of a paid sale makes.' },
      dueAt: { kind: 'timestamp', description: "When it may be paid: commissionDate plus the campaign's payoutTerm days." },
      payoutId: { kind: 'text', nullable: true, indexed: true, description: 'The payout it is in.' },
      refundedMinor: { ...money('refundedAmount', 'string'), description: 'What refunds took back after it was paid.' },
      reversesCommissionId: { kind: 'text', nullable: true, description: 'On a clawback: the paid sale it takes money back from.' },
      saleAmountMinor: {
        kind: 'money',
        answerAs: 'saleAmount',
        wire: 'string',
        nullable: true,
        description: 'The sale it was made from (without tax, as the campaign rewards it); null when made by hand, and on a clawback.',
      },
      currency: { kind: 'text', description: "Its campaign's currency, ISO 4217." },
      customerId: { kind: 'text', nullable: true, indexed: true, description: 'The customer whose sale made it (a clawback: of the sale it reverses); null when made by hand.' },
      paymentIntentId: { kind: 'text', nullable: true, description: "The sale's payment intent (Stripe), once an event named it." },
      holdReasons: { kind: 'list', description: 'Why it is held for review; empty unless it is.' },
      ...stamps,
    },
    unique: [
      { name: 'commissions_workspace_invoice', fields: ['workspaceId', 'invoiceId'] },
      { name: 'commissions_workspace_charge', fields: ['workspaceId', 'chargeId'] },
    ],
    // Lists filtered by status (a quarter of a workspace, say) or kind (the few clawbacks) read one
    // index range, not the workspace; a period of a workspace is a range of commissionDate.
    indexes: [['workspaceId', 'status'], ['workspaceId', 'kind']],
    ordered: [{ where: ['workspaceId'], orderBy: 'commissionDate' }],
    answers: {
      commission: commissionAnswer,
      referredUser: [...commissionAnswer, 'payoutDate', 'name', 'isSelfReferral', 'isWalletPayment'],
    },
  },
  payouts: {
    fields: {
      id: { kind: 'text', answerAs: 'payoutId' },
      workspaceId: indexedText,
      campaignId: indexedText,
      affiliateId: indexedText,
      currency: text,
      amountMinor: money('amount', 'string'),
      commissionCount: int,
      status: { kind: 'text', values: ['pending', 'processing', 'paid', 'failed', 'canceled'] },
      payoutMethod: { kind: 'text', values: ['PAYPAL', 'WISE', 'BANK_TRANSFER'], description: "Copied from the affiliate when made." },
      payoutEmail: { kind: 'text', searched: true, description: "Copied from the affiliate when made." },
      periodEnd: { kind: 'timestamp', description: "The run's asOf: the commissions due by then are in it." },
      externalReference: { kind: 'text', nullable: true, searched: true },
      failureReason: nullableText,
      paidAt: { kind: 'timestamp', nullable: true },
      ...stamps,
    },
    indexes: [['workspaceId', 'status']],
    answers: {
      payout: [
        'id', 'workspaceId', 'campaignId', 'affiliateId', 'currency', 'amountMinor', 'commissionCount', 'status', 'payoutMethod',
        'payoutEmail', 'periodEnd', 'externalReference', 'failureReason', 'paidAt', 'createdAt', 'updatedAt',
      ],
    },
  },
  apiKeys: {
    fields: {
      id: text,
      hash: { kind: 'text', unique: 'api_keys_hash' },
      lookup: indexedText,
      prefix: { kind: 'text', searched: true },
      userId: text,
      workspaceIds: { kind: 'list' },
      label: { kind: 'text', searched: true },
      revokedAt: { kind: 'timestamp', nullable: true },
      kind: { kind: 'text', values: ['secret', 'publishable'] },
      allowedOrigins: { kind: 'list' },
      lastUsedAt: { kind: 'timestamp', nullable: true },
      ...stamps,
    },
  },
  idempotency: {
    fields: {
      id: text,
      scopeKey: { kind: 'text', indexed: true, unique: 'idempotency_scope' },
      requestHash: text,
      state: { kind: 'text', values: ['running', 'done'] },
      status: int,
      body: text,
      expiresAt: timestamp,
      ...stamps,
    },
  },
  events: {
    fields: {
      id: text,
      workspaceId: indexedText,
      type: text,
      sequence: { kind: 'int', unique: 'events_sequence', description: 'Commit order: what `after` pages by.' },
      data: { kind: 'text', description: 'JSON of the resource as the API answers it.' },
      createdAt: timestamp,
    },
  },
  webhooks: {
    fields: {
      id: { kind: 'text', answerAs: 'webhookId' },
      workspaceId: indexedText,
      url: { kind: 'text', searched: true },
      events: { kind: 'list', description: 'Event types sent, or `["*"]` for all.' },
      description: { kind: 'text', searched: true },
      enabled: bool,
      disabledReason: { kind: 'text', nullable: true, description: 'Why it was disabled (a 410, or 5 dead deliveries in a row).' },
      consecutiveDeadDeliveries: int,
      secret: text,
      previousSecrets: { kind: 'list', description: 'The earlier secrets that still sign, each `<expiresAt> <secret>`, newest first.' },
      previousSecretExpiresAt: { kind: 'timestamp', nullable: true, description: 'Until then earlier secrets sign too (each until its own expiry).' },
      ...stamps,
    },
    answers: {
      webhook: [
        'id', 'workspaceId', 'url', 'events', 'description', 'enabled', 'disabledReason', 'consecutiveDeadDeliveries',
        'previousSecretExpiresAt', 'createdAt', 'updatedAt',
      ],
    },
  },
  webhookDeliveries: {
    fields: {
      id: { kind: 'text', answerAs: 'deliveryId' },
      workspaceId: indexedText,
      webhookId: indexedText,
      eventId: text,
      eventType: text,
      status: { kind: 'text', indexed: true, values: ['pending', 'succeeded', 'failed', 'dead'] },
      attempts: int,
      nextAttemptAt: { kind: 'timestamp', nullable: true, description: 'When it is due; while being sent, the end of the lease.' },
      claimToken: nullableText,
      lastStatusCode: { kind: 'int', nullable: true },
      lastError: nullableText,
      lastResponseBody: { kind: 'text', nullable: true, description: 'The first 1 KiB of the last response body.' },
      lastDurationMs: { kind: 'int', nullable: true },
      ...stamps,
    },
    answers: {
      delivery: [
        'id', 'webhookId', 'eventId', 'eventType', 'status', 'attempts', 'nextAttemptAt', 'lastStatusCode', 'lastError',
        'lastResponseBody', 'lastDurationMs', 'createdAt', 'updatedAt',
      ],
    },
  },
  sequences: {
    fields: { id: text, value: int, ...stamps },
  },
  rollups: {
    fields: {
      id: text,
      workspaceId: text,
      campaignId: text,
      affiliateId: text,
      hourStart: timestamp,
      seriesKey: indexedText,
      rankKey: { kind: 'text', nullable: true, indexed: true },
      opens: int,
      clicks: int,
      signups: int,
      saleCount: int,
      earningsMinor: int,
      pendingCount: int,
      pendingMinor: int,
      processingCount: int,
      processingMinor: int,
      paidCount: int,
      paidMinor: int,
      refundedCount: int,
      refundedMinor: int,
      clawbackCount: int,
      clawbackMinor: int,
      payoutCount: int,
      paidOutMinor: int,
      createdAt: timestamp,
    },
  },
  clicks: {
    fields: {
      id: text,
      linkId: text,
      event: { kind: 'text', values: ['click', 'open'] },
      visitor: indexedText,
      createdAt: timestamp,
    },
  },
  settings: {
    fields: { id: text, value: text, ...stamps },
  },
  customers: {
    fields: {
      id: { kind: 'text', answerAs: 'customerId' },
      workspaceId: indexedText,
      campaignId: indexedText,
      affiliateId: indexedText,
      linkId: nullableText,
      clickId: nullableText,
      attributedAt: {
        kind: 'timestamp',
        description: "When it was attributed: its click's time when a click brought it, else its lead's. A sale paid before earns nothing (`before_attribution`).",
      },
      externalId: { kind: 'text', searched: true, description: "The host's id for its user; unique per workspace (the customer's id once forgotten)." },
      email: { kind: 'text', searched: true, description: 'The empty string once forgotten, or when no e-mail was given.' },
      emailKey: text,
      name: { kind: 'text', nullable: true, searched: true },
      stripeCustomerId: { kind: 'text', nullable: true, description: 'Its Stripe customer: one customer per Stripe customer in a workspace.' },
      firstSaleAt: { kind: 'timestamp', nullable: true, description: 'When its earliest paid sale (since its attribution) was paid.' },
      salesCount: { kind: 'int', description: 'Its sales paid since its attribution.' },
      commissionCount: int,
      ...stamps,
    },
    unique: [
      { name: 'customers_workspace_external', fields: ['workspaceId', 'externalId'] },
      // The first attribution wins: a Stripe customer is bound to one customer of a workspace.
      { name: 'customers_workspace_stripe', fields: ['workspaceId', 'stripeCustomerId'] },
    ],
    // Signups are distinct e-mails per affiliate and per link, over customers and referred users.
    indexes: [['workspaceId', 'externalId'], ['affiliateId', 'emailKey'], ['linkId', 'emailKey']],
    answers: {
      customer: [
        'id', 'workspaceId', 'campaignId', 'affiliateId', 'linkId', 'clickId', 'attributedAt', 'externalId', 'email', 'name',
        'stripeCustomerId', 'firstSaleAt', 'salesCount', 'createdAt', 'updatedAt',
      ],
    },
  },
  sales: {
    fields: {
      id: text,
      workspaceId: indexedText,
      invoiceId: text,
      chargeId: nullableText,
      paymentIntentId: nullableText,
      subscriptionId: nullableText,
      stripeCustomerId: nullableText,
      customerId: { kind: 'text', nullable: true, indexed: true },
      commissionId: nullableText,
      currency: text,
      amountMinor: int,
      refundedMinor: int,
      commissionMinor: int,
      commissionRefundedMinor: int,
      paidAt: timestamp,
      answer: text,
      ...stamps,
    },
    unique: [
      { name: 'sales_workspace_invoice', fields: ['workspaceId', 'invoiceId'] },
      { name: 'sales_workspace_charge', fields: ['workspaceId', 'chargeId'] },
      { name: 'sales_workspace_payment_intent', fields: ['workspaceId', 'paymentIntentId'] },
    ],
    // A refund finds its sale by charge, payment intent or invoice; binding a Stripe customer finds its sales not yet attributed.
    indexes: [['workspaceId', 'invoiceId'], ['workspaceId', 'chargeId'], ['workspaceId', 'paymentIntentId'], ['workspaceId', 'stripeCustomerId']],
  },
  saleRefunds: {
    fields: {
      id: text,
      workspaceId: indexedText,
      saleId: indexedText,
      refundId: nullableText,
      amountMinor: int,
      commissionMinor: int,
      answer: text,
      ...stamps,
    },
    unique: [{ name: 'sale_refunds_workspace_refund', fields: ['workspaceId', 'refundId'] }],
    indexes: [['workspaceId', 'refundId']],
  },
  integrations: {
    fields: {
      id: { kind: 'text', answerAs: 'integrationId' },
      workspaceId: indexedText,
      provider: { kind: 'text', values: ['stripe'] },
      campaignId: {
        kind: 'text',
        nullable: true,
        description: "Attribution is limited to this campaign's affiliates and codes; null: any campaign of the workspace (and when that campaign is deleted).",
      },
      livemode: { kind: 'bool', description: "Events whose livemode differs are recorded as ignored." },
      endpointPath: { kind: 'text', description: 'Where the provider posts its events (beside the API, no key).' },
      description: { kind: 'text', searched: true },
      signingSecret: text,
      ...stamps,
    },
    answers: {
      integration: ['id', 'workspaceId', 'provider', 'campaignId', 'livemode', 'endpointPath', 'description', 'createdAt', 'updatedAt'],
    },
  },
  providerEvents: {
    fields: {
      id: text,
      workspaceId: indexedText,
      integrationId: indexedText,
      eventId: { kind: 'text', description: "The provider's event id." },
      type: text,
      status: {
        kind: 'text',
        indexed: true,
        values: ['processed', 'ignored', 'waiting', 'failed'],
        description: '`waiting`: a refund, or a payment of an invoice, whose sale is not known yet; applied when it arrives.',
      },
      reason: { kind: 'text', nullable: true, description: 'Why it was ignored or failed.' },
      commissionId: { kind: 'text', nullable: true, description: 'The commission it made or refunded.' },
      invoiceId: nullableText,
      chargeId: nullableText,
      paymentIntentId: nullableText,
      chargedMinor: int,
      refundedMinor: int,
      receivedAt: timestamp,
      ...stamps,
    },
    unique: [{ name: 'provider_events_integration_event', fields: ['integrationId', 'eventId'] }],
    // A sale finds the events of its payment that came first (a refund, its invoice's payment) by each of its ids.
    indexes: [
      ['integrationId', 'eventId'], ['integrationId', 'status'], ['workspaceId', 'invoiceId'], ['workspaceId', 'chargeId'], ['workspaceId', 'paymentIntentId'],
    ],
    answers: {
      providerEvent: ['eventId', 'integrationId', 'type', 'status', 'reason', 'commissionId', 'receivedAt'],
    },
  },
  portalTokens: {
    fields: {
      id: text,
      kind: { kind: 'text', values: ['signIn', 'session'] },
      email: indexedText,
      affiliateId: nullableText,
      expiresAt: timestamp,
      ...stamps,
    },
  },
}

/** The numeric figures of a rollup row (see `RollupRecord`), in column order. */
export const ROLLUP_COUNTERS = [
  'opens', 'clicks', 'signups', 'saleCount', 'earningsMinor', 'pendingCount', 'pendingMinor', 'processingCount',
  'processingMinor', 'paidCount', 'paidMinor', 'refundedCount', 'refundedMinor', 'clawbackCount', 'clawbackMinor',
  'payoutCount', 'paidOutMinor',
] as const

/** The column kind a field is kept as. */
export const columnKind = (spec: FieldSpec): ColumnKind =>
  spec.kind === 'timestamp' ? 'text' : spec.kind === 'money' ? 'int' : spec.kind

const MONEY_STRING = '^-?\\d+\\.\\d{2}$'

/** The JSON Schema of a field's value as API answers give it. */
export function fieldJsonSchema(spec: FieldSpec): JsonSchema {
  let out: JsonSchema
  switch (spec.kind) {
    case 'text':
      out = spec.values ? { type: 'string', enum: [...spec.values] } : { type: 'string' }
      break
    case 'timestamp':
      out = { type: 'string', format: 'date-time' }
      break
    case 'int':
      out = { type: 'integer' }
      break
    case 'bool':
      out = { type: 'boolean' }
      break
    case 'list':
      out = { type: 'array', items: { type: 'string' } }
      break
    case 'money':
      out = spec.wire === 'string' ? { type: 'string', pattern: MONEY_STRING } : { type: 'number' }
      break
  }
  if (spec.description) out.description = spec.description
  if (spec.nullable) {
    if (out.enum) out.enum = [...(out.enum as unknown[]), null]
    out.type = [out.type, 'null']
  }
  return out
}

/** The JSON Schema of one of a model's answers (see `answers`): an object with every field required. */
export function answerJsonSchema<M extends keyof ModelRecords>(model: M, answer: string): JsonSchema {
  const definition: ModelSchema<M> = schema[model]
  const fields = definition.answers?.[answer]
  if (!fields) throw new Error(`${model} has no answer ${answer}`)
  const properties: Record<string, JsonSchema> = {}
  for (const field of fields) {
    const spec: FieldSpec = definition.fields[field]
    properties[spec.answerAs ?? field] = fieldJsonSchema(spec)
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false }
}

type Convert = (value: unknown) => unknown

const copyList: Convert = (value) => [...(value as unknown[])]
const moneyString: Convert = (value) => (value === null ? null : formatMoney(value as number))
const moneyNumber_: Convert = (value) => (value === null ? null : moneyNumber(value as number))

/**
 * The function turning a stored record into one of its API answers (see `answers`): fields in
 * answer order, renamed by `answerAs`, money in its wire form, lists copied. `T` is the answer's
 * declared type; test/unit/schema.test.ts checks every answer against `answerJsonSchema`.
 */
export function answerMapper<M extends keyof ModelRecords, T>(model: M, answer: string): (record: ModelRecords[M]) => T {
  const definition: ModelSchema<M> = schema[model]
  const fields = definition.answers?.[answer]
  if (!fields) throw new Error(`${model} has no answer ${answer}`)
  const specs: FieldSpec[] = fields.map((field) => definition.fields[field])
  const names = fields.map((field, i) => specs[i]!.answerAs ?? field)
  const converts = specs.map((spec): Convert | null =>
    spec.kind === 'money' ? (spec.wire === 'string' ? moneyString : moneyNumber_) : spec.kind === 'list' ? copyList : null,
  )
  const count = fields.length
  // Every answer starts as a copy of one object with all its keys in order: copies share a shape,
  // and filling them only overwrites (adding keys one by one is several times slower).
  const template: Record<string, unknown> = Object.fromEntries(names.map((name) => [name, null]))
  return (record) => {
    const values = record as Record<string, unknown>
    const out = { ...template }
    for (let i = 0; i < count; i++) {
      const convert = converts[i]
      const value = values[fields[i]!]
      out[names[i]!] = convert ? convert(value) : value
    }
    return out as T
  }
}
