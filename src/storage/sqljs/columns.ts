import { models } from '../models.js'
import type { ModelName, RecordOf } from '../types.js'
import type { SqlValue } from './sql-js-types.js'

/**
 * How a record field is kept in a column. SQLite has no booleans or arrays, so `bool` is 0/1 and
 * `list` is JSON text; the kinds say how to turn them back so records round-trip exactly.
 */
export type ColumnKind = 'text' | 'int' | 'bool' | 'list'

/** Every field of every model, with its kind. A field added to a record type and not here fails to compile. */
export const columns: { [M in ModelName]: { [K in keyof RecordOf<M>]-?: ColumnKind } } = {
  campaigns: {
    id: 'text',
    workspaceId: 'text',
    campaignName: 'text',
    commissionType: 'text',
    amountMinor: 'int',
    minimumPayoutMinor: 'int',
    payoutId: 'text',
    url: 'text',
    requiresApprovalToJoin: 'bool',
    collectAdditionalInfo: 'bool',
    hideCustomerEmail: 'bool',
    payoutTerm: 'int',
    affiliatePortalWelcomeMessage: 'text',
    affiliateDashboardText: 'text',
    stripeCouponId: 'text',
    allowedUrlParameters: 'list',
    isDefault: 'bool',
    createdAt: 'text',
    updatedAt: 'text',
  },
  affiliates: {
    id: 'text',
    workspaceId: 'text',
    campaignId: 'text',
    email: 'text',
    emailKey: 'text',
    firstName: 'text',
    lastName: 'text',
    notes: 'text',
    payoutEmail: 'text',
    payoutMethod: 'text',
    details: 'text',
    isActive: 'bool',
    isBanned: 'bool',
    totalOpens: 'int',
    totalClicks: 'int',
    totalSignups: 'int',
    totalEarningsMinor: 'int',
    createdAt: 'text',
    updatedAt: 'text',
  },
  links: {
    id: 'text',
    workspaceId: 'text',
    campaignId: 'text',
    affiliateId: 'text',
    userId: 'text',
    referralCode: 'text',
    urlParameter: 'text',
    url: 'text',
    totalOpens: 'int',
    totalClicks: 'int',
    totalSignups: 'int',
    totalEarningsMinor: 'int',
    createdAt: 'text',
    updatedAt: 'text',
  },
  commissions: {
    id: 'text',
    workspaceId: 'text',
    campaignId: 'text',
    affiliateId: 'text',
    referredUser: 'text',
    referredUserKey: 'text',
    amountMinor: 'int',
    adminEarnedMinor: 'int',
    status: 'text',
    commissionDate: 'text',
    remarks: 'text',
    payoutDate: 'text',
    name: 'text',
    isSelfReferral: 'bool',
    isWalletPayment: 'int',
    chargeId: 'text',
    invoiceId: 'text',
    stripeSubscriptionId: 'text',
    linkId: 'text',
    referralCode: 'text',
    createdAt: 'text',
    updatedAt: 'text',
  },
  apiKeys: {
    id: 'text',
    hash: 'text',
    lookup: 'text',
    prefix: 'text',
    userId: 'text',
    workspaceIds: 'list',
    label: 'text',
    revokedAt: 'text',
    createdAt: 'text',
    updatedAt: 'text',
  },
  idempotency: {
    id: 'text',
    scopeKey: 'text',
    requestHash: 'text',
    state: 'text',
    status: 'int',
    body: 'text',
    expiresAt: 'text',
    createdAt: 'text',
    updatedAt: 'text',
  },
}

/**
 * The hidden column holding the lower-cased search fields. `contains` is matched against it with
 * `instr`, after the term is lower-cased the same way, so the match is JavaScript's
 * `toLowerCase()` for every script (SQLite's own `lower()` and `LIKE` fold ASCII only).
 */
export const SEARCH_COLUMN = '_search'

/** Between search fields, so a term cannot match across two of them. The memory storage uses NUL,
 * which sql.js cannot bind (it passes strings NUL-terminated). */
const SEARCH_SEPARATOR = '\u001f'

export const searchText = (model: ModelName, record: Record<string, unknown>): string =>
  models[model].search
    .map((field) => String(record[field as string] ?? '').toLowerCase())
    .join(SEARCH_SEPARATOR)

export const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`

export function fieldsOf(model: ModelName): [string, ColumnKind][] {
  return Object.entries(columns[model]) as [string, ColumnKind][]
}

export function kindOf(model: ModelName, field: string): ColumnKind {
  const kind = (columns[model] as Record<string, ColumnKind | undefined>)[field]
  if (!kind) throw new Error(`${model} has no field ${field}`)
  return kind
}

/** A record value as bound to SQLite. */
export function toSql(kind: ColumnKind, value: unknown): SqlValue {
  if (value === null || value === undefined) return null
  switch (kind) {
    case 'bool':
      return value ? 1 : 0
    case 'list':
      return JSON.stringify(value)
    default:
      return value as SqlValue
  }
}

/** A scalar of a `where` as bound to SQLite: booleans become 0/1, like the stored values. */
export const scalarToSql = (value: unknown): SqlValue => (typeof value === 'boolean' ? (value ? 1 : 0) : (value as SqlValue))

/** A stored value back as the record holds it. */
export function fromSql(kind: ColumnKind, value: SqlValue): unknown {
  if (value === null) return null
  switch (kind) {
    case 'bool':
      return value === 1
    case 'list':
      return JSON.parse(value as string)
    default:
      return value
  }
}
