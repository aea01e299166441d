import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import {
  bannedChangeError,
  deletionError,
  earnedMinor,
  REVIEW_STATUS,
  reviewError,
  reviewMoveError,
  statusChangeError,
  type ReviewAction,
} from '../domain/commission-status.js'
import { DAY_MS, dueAt } from '../domain/due.js'
import { commissionEffect, payoutAfterRemoval } from '../domain/payout-status.js'
import type {
  AffiliateRecord,
  CampaignRecord,
  CommissionRecord,
  CommissionStatus,
  LinkRecord,
  PayoutRecord,
  PayoutStatus,
} from '../domain/records.js'
import { planRefund, refundableMinor, type RefundPlan } from '../domain/refund.js'
import { formatMoney } from '../domain/money.js'
import { notFound, unprocessable } from '../errors.js'
import { toCommission, type Commission } from '../domain/commission.js'
import { announce, emitChange, type EventTransaction } from '../events/outbox.js'
import { PAYOUT_EVENTS, toPayout } from '../domain/payout.js'
import type { StorageTransaction } from '../storage/types.js'
import { canSee, visible, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { findCampaign } from './campaigns.js'
import { findLinkByCode } from './links.js'
import { moveCommission, moveCommissionStatus } from '../reports/rollup.js'
import { signupDelta, signupHolders } from './signups.js'

// Commissions and referred users are one kind of record. Everything that writes them, and keeps
// the affiliate's and link's counters in step with them, lives here, inside the caller's transaction.

export interface NewCommission {
  /** Who earns; may be left out when `clickId` is given (the click's affiliate), else must match it. */
  affiliateId?: string | undefined
  /** The click that brought the sale or signup: the record is attributed to its link and affiliate. */
  clickId?: string | undefined
  /** When given, the affiliate must belong to it. */
  campaignId?: string | undefined
  /** When given, it must be the affiliate's workspace. */
  workspaceId?: string | undefined
  referralCode?: string | undefined
  referredUser: string
  amountMinor: number
  adminEarnedMinor: number
  status: CommissionStatus
  commissionDate?: string | undefined
  remarks?: string | null | undefined
  payoutDate?: string | null | undefined
  name?: string | null | undefined
  isWalletPayment?: number | undefined
  chargeId?: string | null | undefined
  invoiceId?: string | null | undefined
  stripeSubscriptionId?: string | null | undefined
  /** The fraud rules that flagged it (with status `hold`). @default [] */
  holdReasons?: string[] | undefined
  /** A commission made from a sale: the sale's amount, its customer and its payment intent. */
  sale?: { amountMinor: number; customerId: string; paymentIntentId: string | null } | undefined
  /**
   * The affiliate, its campaign and the link (null: none), already read in this transaction by a
   * caller that found them itself (a sale through its customer): not read again.
   */
  known?: { affiliate: AffiliateRecord; campaign: CampaignRecord; link: LinkRecord | null } | undefined
}

/** The campaign a stored record belongs to: it exists while it has affiliates, so its absence is a broken store. */
async function campaignOf(tx: StorageTransaction, id: string): Promise<CampaignRecord> {
  const campaign = await tx.get('campaigns', id)
  if (!campaign) throw new Error(`Campaign ${id} is missing`)
  return campaign
}

export const findCommission = async (tx: StorageTransaction, access: Access, id: string, what: string): Promise<CommissionRecord> =>
  visible(access, await tx.get('commissions', id.toLowerCase()), what)

const isSelfReferral = (affiliate: AffiliateRecord, emailKey: string): boolean =>
  emailKey === affiliate.emailKey || (affiliate.payoutEmail !== '' && emailKey === affiliate.payoutEmail.toLowerCase())

/** How many records pay this affiliate (or link) for this e-mail: its signups are the e-mails with at least one. */
const recordsFor = (tx: StorageTransaction, record: CommissionRecord, by: 'affiliateId' | 'linkId') =>
  signupHolders(tx, by, record[by]!, record.referredUserKey)

/** Moves the affiliate's and link's earnings and signups for a record that arrives (+1) or leaves (-1). */
async function countRecord(tx: StorageTransaction, record: CommissionRecord, direction: 1 | -1): Promise<void> {
  const earned = direction * earnedMinor(record)
  // Counted after an insert and after a delete: 1 left after an insert, 0 left after a delete mean the e-mail is new or gone.
  // (A sale's commission for a customer without an e-mail names none: no signup.)
  const signup = (remaining: number) => signupDelta(record.referredUserKey, direction, remaining)
  await tx.increment('affiliates', record.affiliateId, {
    totalEarningsMinor: earned,
    totalSignups: signup(await recordsFor(tx, record, 'affiliateId')),
  })
  if (record.linkId !== null) {
    await tx.increment('links', record.linkId, {
      totalEarningsMinor: earned,
      totalSignups: signup(await recordsFor(tx, record, 'linkId')),
    })
  }
}

/**
 * The link a `clickId` attributes to, checked: the click must be kept and its link visible (else
 * 422: unknown), its affiliate the one named (if one is), its link the `referralCode` named (if
 * one is), not after `commissionDate` (a sale cannot come from a later click) and no older at
 * `commissionDate` than its campaign's `attributionWindowDays`.
 */
export async function clickedLink(
  tx: StorageTransaction,
  access: Access,
  input: NewCommission,
  clickId: string,
  commissionDate: string,
): Promise<LinkRecord> {
  const click = await tx.get('clicks', clickId.toLowerCase())
  const link = click && (await tx.get('links', click.linkId))
  if (!click || !link || !canSee(access, link.workspaceId)) {
    throw unprocessable(
      'Unknown clickId: no such click is kept (clicks are kept for the longest attribution window of the campaigns)',
      'unknown_click',
    )
  }
  if (input.affiliateId !== undefined && input.affiliateId.toLowerCase() !== link.affiliateId)
    throw unprocessable('The clickId belongs to another affiliate', 'attribution_mismatch')
  if (input.referralCode !== undefined && input.referralCode !== link.referralCode)
    throw unprocessable('The referralCode is not the link of the clickId', 'attribution_mismatch')
  const campaign = await campaignOf(tx, link.campaignId)
  const sinceClick = Date.parse(commissionDate) - Date.parse(click.createdAt)
  if (sinceClick < 0)
    throw unprocessable('Click is outside the attribution window: commissionDate is before the click', 'attribution_window')
  if (sinceClick > campaign.attributionWindowDays * DAY_MS)
    throw unprocessable('Click is outside the attribution window', 'attribution_window')
  return link
}

export async function insertCommission(
  tx: StorageTransaction,
  access: Access,
  clock: Clock,
  input: NewCommission,
): Promise<CommissionRecord> {
  const now = isoAt(clock)
  const commissionDate = input.commissionDate ?? now
  const clicked = input.clickId === undefined ? null : await clickedLink(tx, access, input, input.clickId, commissionDate)
  const affiliateId = clicked?.affiliateId ?? input.affiliateId
  if (affiliateId === undefined) throw new Error('insertCommission: affiliateId or clickId is required (the schema checks it)')
  const campaign = input.known?.campaign ?? (input.campaignId === undefined ? null : await findCampaign(tx, access, input.campaignId))
  const affiliate = input.known?.affiliate ?? (await findAffiliate(tx, access, affiliateId))
  if (campaign && affiliate.campaignId !== campaign.id)
    throw unprocessable('The affiliate does not belong to this campaign', 'attribution_mismatch')
  if (input.workspaceId !== undefined && input.workspaceId !== affiliate.workspaceId) {
    throw unprocessable("workspaceId does not match the affiliate's workspace", 'workspace_mismatch')
  }
  if (affiliate.isBanned) throw unprocessable('This affiliate is banned and cannot earn commissions', 'affiliate_banned')
  const ownCampaign = campaign ?? (await campaignOf(tx, affiliate.campaignId))
  let link = clicked ?? input.known?.link ?? null
  if (!link && input.referralCode !== undefined) {
    link = await findLinkByCode(tx, access, input.referralCode)
    if (!link) throw notFound('Link')
    if (link.affiliateId !== affiliate.id) throw unprocessable('The referralCode belongs to another affiliate', 'attribution_mismatch')
  }
  const referredUserKey = input.referredUser.toLowerCase()
  const record: CommissionRecord = {
    id: newId(),
    workspaceId: affiliate.workspaceId,
    campaignId: affiliate.campaignId,
    affiliateId: affiliate.id,
    referredUser: input.referredUser,
    referredUserKey,
    amountMinor: input.amountMinor,
    adminEarnedMinor: input.adminEarnedMinor,
    status: input.status,
    commissionDate,
    remarks: input.remarks ?? null,
    payoutDate: input.payoutDate ?? null,
    name: input.name ?? null,
    isSelfReferral: isSelfReferral(affiliate, referredUserKey),
    isWalletPayment: input.isWalletPayment ?? 0,
    chargeId: input.chargeId ?? null,
    invoiceId: input.invoiceId ?? null,
    stripeSubscriptionId: input.stripeSubscriptionId ?? null,
    linkId: link?.id ?? null,
    referralCode: link?.referralCode ?? null,
    kind: 'sale',
    dueAt: dueAt(commissionDate, ownCampaign.payoutTerm),
    payoutId: null,
    refundedMinor: 0,
    reversesCommissionId: null,
    saleAmountMinor: input.sale?.amountMinor ?? null,
    currency: ownCampaign.currency,
    customerId: input.sale?.customerId ?? null,
    paymentIntentId: input.sale?.paymentIntentId ?? null,
    holdReasons: input.holdReasons ?? [],
    createdAt: now,
    updatedAt: now,
  }
  await tx.insert('commissions', record)
  await countRecord(tx, record, 1)
  await moveCommission(tx, null, record)
  return record
}

export type CommissionPatch = Partial<
  Pick<
    CommissionRecord,
    | 'amountMinor'
    | 'adminEarnedMinor'
    | 'status'
    | 'commissionDate'
    | 'remarks'
    | 'payoutDate'
    | 'name'
    | 'isWalletPayment'
    | 'chargeId'
    | 'invoiceId'
    | 'stripeSubscriptionId'
  >
>

/** Moves the affiliate's and link's earnings by what a change of one commission changed. */
async function moveEarnings(tx: StorageTransaction, before: CommissionRecord, after: CommissionRecord): Promise<void> {
  const delta = earnedMinor(after) - earnedMinor(before)
  if (delta === 0) return
  await tx.increment('affiliates', before.affiliateId, { totalEarningsMinor: delta })
  if (before.linkId !== null) await tx.increment('links', before.linkId, { totalEarningsMinor: delta })
}

export async function updateCommission(
  tx: EventTransaction,
  clock: Clock,
  current: CommissionRecord,
  patch: CommissionPatch,
): Promise<CommissionRecord> {
  const status = patch.status ?? current.status
  const amountMinor = patch.amountMinor ?? current.amountMinor
  const amountsChange =
    amountMinor !== current.amountMinor || (patch.adminEarnedMinor ?? current.adminEarnedMinor) !== current.adminEarnedMinor
  const redates = patch.commissionDate !== undefined && patch.commissionDate !== current.commissionDate
  if (current.kind === 'clawback' && (status !== current.status || amountsChange || redates)) {
    throw unprocessable('A clawback changes only through payouts: its status, amounts and commissionDate cannot be set', 'money_history')
  }
  // Its dueAt decided which run took it: a new date would leave it in a payout it was not due for.
  if (redates && current.payoutId !== null) {
    throw unprocessable('A commission in a payout cannot be re-dated: money history is kept', 'money_history')
  }
  // Refunding a paid commission (or one with refunds after payment already, back from a failed
  // payout) is a refund: the refund path keeps the money it already paid, through a clawback.
  const afterPayment = current.status === 'paid' || (current.refundedMinor > 0 && current.payoutId === null)
  if (status === 'refunded' && current.status !== 'refunded' && afterPayment) {
    if (refundableMinor(current) > 0) {
      const { amountMinor: _a, adminEarnedMinor: _b, status: _s, ...rest } = patch
      if (amountsChange) throw unprocessable(`The amounts of a ${current.status} commission being refunded cannot change`, 'amount_locked')
      const refunded = await refundCommission(tx, clock, current, undefined)
      return Object.keys(rest).length ? updateCommission(tx, clock, refunded, rest) : refunded
    }
    if (current.refundedMinor > 0)
      throw unprocessable('Nothing is left to refund on this commission: its refunds after payment took all of it', 'refund_refused')
  }
  if (current.payoutId !== null && status !== current.status) {
    throw unprocessable('A commission in a payout cannot have its status set: refund it, or move the payout', 'amount_locked')
  }
  const underReview = reviewMoveError(current.status, status)
  if (underReview) throw unprocessable(underReview, 'invalid_status_transition')
  const refusal = statusChangeError(current.status, status)
  if (refusal) throw unprocessable(refusal, 'invalid_status_transition')
  if (amountsChange && current.status !== 'pending' && current.status !== 'processing') {
    throw unprocessable(`The amounts of a ${current.status} commission cannot change`, 'amount_locked')
  }
  if (amountsChange && current.payoutId !== null) {
    throw unprocessable('The amounts of a commission in a payout cannot change: refund it instead', 'amount_locked')
  }
  if (amountsChange && amountMinor < current.refundedMinor) {
    throw unprocessable(
      `The amount cannot go below what refunds after payment took back (${current.refundedMinor} minor units)`,
      'amount_locked',
    )
  }
  // A banned affiliate earns nothing: read it only when the change could make it earn.
  const bannedRefusal = bannedChangeError(current, { status, amountMinor })
  if (bannedRefusal !== null && (await tx.get('affiliates', current.affiliateId))?.isBanned)
    throw unprocessable(bannedRefusal, 'affiliate_banned')
  // Setting what is already there (the same status above all) is a no-op: not even updatedAt moves.
  const changes: Partial<CommissionRecord> = Object.fromEntries(
    Object.entries(patch).filter(([field, value]) => value !== undefined && value !== current[field as keyof CommissionRecord]),
  )
  if (Object.keys(changes).length === 0) return current
  if (changes.commissionDate !== undefined) {
    changes.dueAt = dueAt(changes.commissionDate, (await campaignOf(tx, current.campaignId)).payoutTerm)
  }
  const updated = (await tx.update('commissions', current.id, { ...changes, updatedAt: isoAt(clock) }))!
  await moveEarnings(tx, current, updated)
  await moveCommission(tx, current, updated)
  return updated
}

/**
 * Reviews a held commission (SPEC wave 4, "Fraud rules and the hold status"): `release` makes it
 * `pending` (payable: the next payout run takes it once due), `void` makes it `voided` (earning
 * nothing, kept for history); either empties its `holdReasons`. Earnings and rollups move with it.
 * 422 (`not_under_review`) unless it is `hold`.
 */
export async function reviewCommission(
  tx: StorageTransaction,
  clock: Clock,
  current: CommissionRecord,
  action: ReviewAction,
): Promise<CommissionRecord> {
  const refusal = reviewError(current.status, action)
  if (refusal) throw unprocessable(refusal, 'not_under_review')
  const updated = (await tx.update('commissions', current.id, { status: REVIEW_STATUS[action], holdReasons: [], updatedAt: isoAt(clock) }))!
  await moveEarnings(tx, current, updated)
  await moveCommission(tx, current, updated)
  return updated
}

/**
 * What a refund planned by `planRefund` makes of a commission at `now`: the fields it changes, and
 * the clawback (with id `clawbackId`) a refund after payment makes. Shared by the refund and its dry run.
 */
export function refundOutcome(
  current: CommissionRecord,
  plan: RefundPlan,
  now: string,
  clawbackId: string,
): { patch: Partial<CommissionRecord>; clawback: CommissionRecord | null } {
  if (plan.type === 'unpaid') {
    return { patch: { amountMinor: plan.amountMinor, status: plan.status, payoutId: plan.payoutId, updatedAt: now }, clawback: null }
  }
  const clawback: CommissionRecord = {
    ...current,
    ...plan.clawback,
    id: clawbackId,
    adminEarnedMinor: 0,
    commissionDate: now,
    remarks: null,
    payoutDate: null,
    chargeId: null,
    invoiceId: null,
    stripeSubscriptionId: null,
    // It keeps the customer and currency of the sale it reverses; it is no sale itself.
    saleAmountMinor: null,
    paymentIntentId: null,
    holdReasons: [],
    createdAt: now,
    updatedAt: now,
  }
  return { patch: { refundedMinor: plan.refundedMinor, status: plan.status, updatedAt: now }, clawback }
}

/** The plan for refunding `amountMinor` of `current` now, with the payout it is in (read): 422 when refused. */
async function plannedRefund(tx: StorageTransaction, current: CommissionRecord, amountMinor: number | undefined, now: string) {
  const payout = current.payoutId === null ? null : await tx.get('payouts', current.payoutId)
  if (current.payoutId !== null && !payout) throw new Error(`Payout ${current.payoutId} is missing`)
  const plan = planRefund({ ...current, payoutStatus: payout?.status ?? null }, amountMinor, now)
  if (plan instanceof Error) throw plan
  return { plan, payout }
}

/**
 * Refunds `amountMinor` (default: what is left) of a commission, by the rules of `planRefund`: an
 * unpaid one loses the amount (and leaves its payout, which is recomputed or canceled); a paid one
 * records the refund and gets a clawback, a negative commission netted into the next payout.
 * Earnings, and the payout it left, move in the caller's transaction. Answers the commission as now stored.
 */
export async function refundCommission(
  tx: EventTransaction,
  clock: Clock,
  current: CommissionRecord,
  amountMinor: number | undefined,
): Promise<CommissionRecord> {
  const now = isoAt(clock)
  const { plan, payout } = await plannedRefund(tx, current, amountMinor, now)
  const { patch, clawback } = refundOutcome(current, plan, now, newId())
  const updated = (await tx.update('commissions', current.id, patch))!
  await moveEarnings(tx, current, updated)
  await moveCommission(tx, current, updated)
  if (clawback) {
    await tx.insert('commissions', clawback)
    await countRecord(tx, clawback, 1)
    await moveCommission(tx, null, clawback)
    await announce(tx, clock, 'commission.clawback_created', toCommission(clawback))
  }
  if (plan.type === 'unpaid' && payout && plan.leavesPayoutId !== null)
    await removeFromPayout(tx, clock, payout, plan.removedFromPayoutMinor, now)
  return updated
}

/** What a dry run of a refund answers: the commission and clawback as they would be, and the change to its payout. */
export interface RefundPreview {
  commission: Commission
  /** The clawback a refund after payment would make (its id is not kept); null before payment. */
  clawback: Commission | null
  /** The pending payout the commission would leave: its amount and status before and after; null when none. */
  payoutChange: PayoutChange | null
}

export interface PayoutChange {
  payoutId: string
  previousAmount: string
  amount: string
  previousStatus: PayoutStatus
  status: PayoutStatus
}

/** `refundCommission` without a write: what it would do, from the same plan and the same records. */
export async function previewRefund(
  tx: StorageTransaction,
  clock: Clock,
  current: CommissionRecord,
  amountMinor: number | undefined,
): Promise<RefundPreview> {
  const now = isoAt(clock)
  const { plan, payout } = await plannedRefund(tx, current, amountMinor, now)
  const { patch, clawback } = refundOutcome(current, plan, now, newId())
  let payoutChange: PayoutChange | null = null
  if (plan.type === 'unpaid' && payout && plan.leavesPayoutId !== null) {
    const next = payoutAfterRemoval(payout, plan.removedFromPayoutMinor, (await campaignOf(tx, payout.campaignId)).minimumPayoutMinor)
    payoutChange = {
      payoutId: payout.id,
      previousAmount: formatMoney(payout.amountMinor),
      amount: formatMoney(next.amountMinor),
      previousStatus: payout.status,
      status: next.status,
    }
  }
  return { commission: toCommission({ ...current, ...patch }), clawback: clawback && toCommission(clawback), payoutChange }
}

/**
 * A `pending` payout after one of its commissions left it: a smaller amount, or canceled (releasing
 * the rest) at zero or less or below its campaign's minimum; `payout.updated` or
 * `payout.status_changed` tells of it in the same transaction.
 */
async function removeFromPayout(
  tx: EventTransaction,
  clock: Clock,
  payout: PayoutRecord,
  removedMinor: number,
  now: string,
): Promise<void> {
  const campaign = await campaignOf(tx, payout.campaignId)
  const next = payoutAfterRemoval(payout, removedMinor, campaign.minimumPayoutMinor)
  const updated = (await tx.update('payouts', payout.id, { ...next, updatedAt: now }))!
  if (next.status === 'canceled') {
    const effect = commissionEffect('canceled')
    await moveCommissionStatus(tx, await tx.find('commissions', { where: { payoutId: payout.id } }), effect.status!)
    await tx.updateMany('commissions', { payoutId: payout.id }, { status: effect.status!, payoutId: null, updatedAt: now })
  }
  await emitChange(tx, clock, PAYOUT_EVENTS, payout, updated, toPayout(updated))
}

/**
 * Gives a record another referred user (erasure: `<customerId>@erased.invalid`) and no name, moving
 * the signups it counts in (the affiliate's and link's, and the report rollups) as a delete of the
 * record and an insert of the renamed one would. Its money stays where it is.
 */
export async function renameReferredUser(
  tx: StorageTransaction,
  clock: Clock,
  current: CommissionRecord,
  referredUser: string,
): Promise<CommissionRecord> {
  const renamed = (await tx.update('commissions', current.id, {
    referredUser,
    referredUserKey: referredUser.toLowerCase(),
    name: null,
    updatedAt: isoAt(clock),
  }))!
  for (const [record, direction] of [
    [current, -1],
    [renamed, 1],
  ] as const) {
    for (const by of ['affiliateId', 'linkId'] as const) {
      const holder = record[by]
      if (holder === null) continue
      const delta = signupDelta(record.referredUserKey, direction, await recordsFor(tx, record, by))
      if (delta !== 0) await tx.increment(by === 'affiliateId' ? 'affiliates' : 'links', holder, { totalSignups: delta })
    }
  }
  // Its figures leave and come back in the same hour; only the e-mail's signup may move.
  await moveCommission(tx, current, null)
  await moveCommission(tx, null, renamed)
  return renamed
}

export async function deleteCommission(tx: StorageTransaction, record: CommissionRecord): Promise<void> {
  const refusal = deletionError(record)
  if (refusal) throw unprocessable(refusal, 'money_history')
  await tx.delete('commissions', record.id)
  await countRecord(tx, record, -1)
  await moveCommission(tx, record, null)
}
