import type { DisposableDomains } from './fraud-checks.js'
import type { Clock } from '../clock.js'
import { AffiliateError, unprocessable } from '../errors.js'
import {
  UniqueViolationError,
  type FindQuery,
  type ModelName,
  type RecordOf,
  type StorageTransaction,
  type TransactionOptions,
} from '../storage/types.js'
import type { EventStorage, EventTransaction } from '../events/outbox.js'
import type { Tracker } from '../tracking/tracker.js'
import type { AffiliateRecord, EventRecord } from '../domain/records.js'
import type { StripeApiOptions } from '../integrations/stripe-promotion-codes.js'
import type { WebhookAddressPolicy } from '../webhooks/address.js'
import { workspaceScope, type Access } from './access.js'

export interface Deps {
  /** The host's storage seen through the commit hook: each transaction collects its events (see `EventTransaction`). */
  storage: EventStorage
  clock: Clock
  /** Which webhook URLs are allowed (`webhooks` options of the service): required, so no path can leave it out. */
  webhooks: WebhookAddressPolicy
  /** Resolves once the click `id` is written, when the redirect answered it and its batch waits. */
  clickWritten?: (id: string) => Promise<void>
  /** The disposable e-mail domains the `disposable_email` fraud rule looks in, loaded on first use (`disposableDomainsLoader`). */
  disposableDomains: DisposableDomains
  /** The click capture the redirect and the beacon use (made on first use): the keyed `POST /links/track` counts through it too. */
  clickCapture: () => Promise<ClickCapture>
  /** Where the Stripe SDK sends the calls promo codes make (the service's `stripeApi` option). */
  stripeApi?: StripeApiOptions
  /** Writes notifications in the transaction of what they tell; absent when the service has no `notify`. */
  notices?: NoticeWriter
}

/** What the operations and the commit hook write notices through; absent when the service has no `notify`. */
export interface NoticeWriter {
  /** The notices the events of a transaction call for, written in that transaction before it commits. */
  fromEvents(tx: StorageTransaction, events: readonly EventRecord[]): Promise<void>
  /** An applicant was approved: `before` awaited approval, `after` is active. In the approval's transaction. */
  approved(tx: StorageTransaction, before: AffiliateRecord, after: AffiliateRecord): Promise<void>
  /**
   * A provider endpoint answered 5xx or refused a bad signature: counted in a transaction of its
   * own (the failed one was rolled back); the fifth within an hour writes `integration.failing`,
   * at most one a day per integration. Never throws: a failure to count goes to `onError`.
   */
  integrationFailed(integrationId: string): Promise<void>
}

/** What the keyed tracking call needs of the click capture (tracking/tracker.ts). */
export type ClickCapture = Pick<Tracker, 'findLink' | 'countKeyed'>

/** What each unique constraint means to a caller. */
const conflicts: Record<string, string> = {
  affiliates_campaign_email: 'An affiliate with this email already exists in this campaign',
  links_referral_code: 'This referralCode is already in use',
  commissions_workspace_invoice: 'A commission with this invoiceId already exists in this workspace',
  commissions_workspace_charge: 'A commission with this chargeId already exists in this workspace',
  sales_workspace_charge: 'A sale with this chargeId already exists in this workspace',
  customers_workspace_external: 'A customer with this externalId already exists in this workspace',
  customers_workspace_stripe: 'This stripeCustomerId is bound to another customer in this workspace',
  sales_workspace_payment_intent: 'A sale with this payment intent already exists in this workspace',
  sale_refunds_workspace_refund: 'This refundId was already used for another sale',
  promo_codes_workspace_code: 'This promo code is already in use in this workspace (codes are compared without case)',
  promo_codes_workspace_stripe: 'This stripePromotionCodeId belongs to another promo code in this workspace',
}

/**
 * An answer and the success status an operation chose for it (a repeat answered 200 rather than
 * its route's 201), as Hono's `c.json(data, status)`: operations of routes with an
 * `alternativeStatus` answer one; HTTP sends `status`, the typed API answers `data`.
 */
export class Answered<T> {
  readonly kind = 'answered' as const
  constructor(
    readonly data: T,
    readonly status: number,
  ) {}
}

/** `data` to be sent with `status` rather than its route's own. */
export const answered = <T>(data: T, status: number): Answered<T> => new Answered(data, status)

/** The 422 (`duplicate`) a unique-constraint violation answers, saying what is taken. */
export const duplicateOf = (error: UniqueViolationError): AffiliateError =>
  unprocessable(conflicts[error.constraint] ?? 'This record conflicts with an existing one', 'duplicate')

/** Runs `work` in a storage transaction and turns a unique-constraint violation into a 422. */
export async function inTransaction<T>(
  storage: EventStorage,
  work: (tx: EventTransaction) => Promise<T>,
  options?: TransactionOptions,
): Promise<T> {
  try {
    return await storage.transaction(work, options)
  } catch (error) {
    if (error instanceof UniqueViolationError) throw duplicateOf(error)
    throw error
  }
}

export const readOnly = { readOnly: true } as const

/** 400 when an update names no field (a typed-API caller may pass only `undefined` values). */
export function requireChanges(input: object): void {
  if (Object.values(input).every((value) => value === undefined)) {
    throw new AffiliateError(400, 'Nothing to update: the request body names no field', { code: 'invalid_body' })
  }
}

export interface Pagination {
  page: number
  limit: number
  total: number
  totalPages: number
}

/** A page of a list: the items and where they stand in the whole. */
export interface Page<T> {
  items: T[]
  pagination: Pagination
}

export interface PageQuery {
  page?: number | undefined
  limit?: number | undefined
  orderValue?: 'ASC' | 'DESC' | undefined
  contains?: string | undefined
}

export async function listPage<M extends ModelName, T>(
  tx: StorageTransaction,
  model: M,
  query: PageQuery & { where: FindQuery<M>['where']; orderField: keyof RecordOf<M> & string },
  map: (record: RecordOf<M>) => T,
): Promise<Page<T>> {
  const page = query.page ?? 1
  const limit = query.limit ?? 10
  const contains = query.contains || undefined
  const { items, total } = await tx.findPage(model, {
    where: query.where,
    contains,
    orderBy: { field: query.orderField, direction: query.orderValue ?? 'DESC' },
    offset: (page - 1) * limit,
    limit,
  })
  return { items: items.map(map), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } }
}

/** The filters a list query may hold besides the page: the workspace, and ids, a status or a kind to match. */
export interface ListFilters {
  workspaceId?: string | undefined
  affiliateId?: string | undefined
  campaignId?: string | undefined
  status?: string | undefined
  /** Commissions and referred users only: `sale` or `clawback`. */
  kind?: string | undefined
  /** Commissions and referred users only: the clawbacks of one sale. */
  reversesCommissionId?: string | undefined
}

/** Commissions and referred users: `commissionDate` from `from` (inclusive) to `to` (exclusive), as stored (UTC ISO). */
export function periodWhere(q: { from?: string | undefined; to?: string | undefined }): { commissionDate?: { gte?: string; lt?: string } } {
  if (q.from === undefined && q.to === undefined) return {}
  return {
    commissionDate: {
      ...(q.from === undefined ? {} : { gte: new Date(q.from).toISOString() }),
      ...(q.to === undefined ? {} : { lt: new Date(q.to).toISOString() }),
    },
  }
}

/** Affiliates by standing: `active`, `pending` (awaiting approval) or `banned`, as their two flags say it. */
export function affiliateStatusWhere(status: 'active' | 'pending' | 'banned' | undefined): { isActive?: boolean; isBanned?: boolean } {
  if (status === undefined) return {}
  return status === 'banned' ? { isBanned: true } : { isActive: status === 'active', isBanned: false }
}

/** The `where` of a list: the caller's workspaces (or the one asked for), then each filter given, ids lower-cased. */
export function listWhere(access: Access, q: ListFilters) {
  return {
    ...workspaceScope(access, q.workspaceId?.toLowerCase()),
    ...(q.affiliateId === undefined ? {} : { affiliateId: q.affiliateId.toLowerCase() }),
    ...(q.campaignId === undefined ? {} : { campaignId: q.campaignId.toLowerCase() }),
    ...(q.status === undefined ? {} : { status: q.status }),
    ...(q.kind === undefined ? {} : { kind: q.kind }),
    // A sale's clawbacks: read through the index of the workspace's clawbacks.
    ...(q.reversesCommissionId === undefined
      ? {}
      : { kind: q.kind ?? 'clawback', reversesCommissionId: q.reversesCommissionId.toLowerCase() }),
  }
}
