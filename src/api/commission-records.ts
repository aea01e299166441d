import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import { bannedChangeError, deletionError, earnedMinor, statusChangeError } from '../domain/commission-status.js'
import type { AffiliateRecord, CommissionRecord, CommissionStatus } from '../domain/records.js'
import { notFound, unprocessable } from '../errors.js'
import type { StorageTransaction } from '../storage/types.js'
import { visible, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { findCampaign } from './campaigns.js'
import { findLinkByCode } from './links.js'

// Commissions and referred users are one kind of record. Everything that writes them, and keeps
// the affiliate's and link's counters in step with them, lives here, inside the caller's transaction.

export interface NewCommission {
  affiliateId: string
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
}

export const findCommission = async (tx: StorageTransaction, access: Access, id: string, what: string): Promise<CommissionRecord> =>
  visible(access, await tx.get('commissions', id.toLowerCase()), what)

const isSelfReferral = (affiliate: AffiliateRecord, emailKey: string): boolean =>
  emailKey === affiliate.emailKey || (affiliate.payoutEmail !== '' && emailKey === affiliate.payoutEmail.toLowerCase())

/** How many records pay this affiliate (or link) for this e-mail: its signups are the e-mails with at least one. */
const recordsFor = (tx: StorageTransaction, record: CommissionRecord, by: 'affiliateId' | 'linkId') =>
  tx.count('commissions', { where: { referredUserKey: record.referredUserKey, [by]: record[by] } })

/** Moves the affiliate's and link's earnings and signups for a record that arrives (+1) or leaves (-1). */
async function countRecord(tx: StorageTransaction, record: CommissionRecord, direction: 1 | -1): Promise<void> {
  const earned = direction * earnedMinor(record.status, record.amountMinor)
  // Counted after an insert and after a delete: 1 left after an insert, 0 left after a delete mean the e-mail is new or gone.
  const signup = (remaining: number) => (direction === 1 ? (remaining === 1 ? 1 : 0) : remaining === 0 ? -1 : 0)
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

export async function insertCommission(tx: StorageTransaction, access: Access, clock: Clock, input: NewCommission): Promise<CommissionRecord> {
  const campaign = input.campaignId === undefined ? null : await findCampaign(tx, access, input.campaignId)
  const affiliate = await findAffiliate(tx, access, input.affiliateId)
  if (campaign && affiliate.campaignId !== campaign.id) throw unprocessable('The affiliate does not belong to this campaign')
  if (input.workspaceId !== undefined && input.workspaceId !== affiliate.workspaceId) {
    throw unprocessable("workspaceId does not match the affiliate's workspace")
  }
  if (affiliate.isBanned) throw unprocessable('This affiliate is banned and cannot earn commissions')
  let link = null
  if (input.referralCode !== undefined) {
    link = await findLinkByCode(tx, access, input.referralCode)
    if (!link) throw notFound('Link')
    if (link.affiliateId !== affiliate.id) throw unprocessable('The referralCode belongs to another affiliate')
  }
  const now = isoAt(clock)
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
    commissionDate: input.commissionDate ?? now,
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
    createdAt: now,
    updatedAt: now,
  }
  await tx.insert('commissions', record)
  await countRecord(tx, record, 1)
  return record
}

export type CommissionPatch = Partial<
  Pick<
    CommissionRecord,
    'amountMinor' | 'adminEarnedMinor' | 'status' | 'commissionDate' | 'remarks' | 'payoutDate' | 'name' | 'isWalletPayment' | 'chargeId' | 'invoiceId' | 'stripeSubscriptionId'
  >
>

export async function updateCommission(tx: StorageTransaction, clock: Clock, current: CommissionRecord, patch: CommissionPatch): Promise<CommissionRecord> {
  const status = patch.status ?? current.status
  const refusal = statusChangeError(current.status, status)
  if (refusal) throw unprocessable(refusal)
  const amountMinor = patch.amountMinor ?? current.amountMinor
  const amountsChange = amountMinor !== current.amountMinor || (patch.adminEarnedMinor ?? current.adminEarnedMinor) !== current.adminEarnedMinor
  if (amountsChange && current.status !== 'pending' && current.status !== 'processing') {
    throw unprocessable(`The amounts of a ${current.status} commission cannot change`)
  }
  // A banned affiliate earns nothing: read it only when the change could make it earn.
  const bannedRefusal = bannedChangeError(current, { status, amountMinor })
  if (bannedRefusal !== null && (await tx.get('affiliates', current.affiliateId))?.isBanned) throw unprocessable(bannedRefusal)
  // Setting what is already there (the same status above all) is a no-op: not even updatedAt moves.
  const changes = Object.entries(patch).filter(([field, value]) => value !== undefined && value !== current[field as keyof CommissionRecord])
  if (changes.length === 0) return current
  const delta = earnedMinor(status, amountMinor) - earnedMinor(current.status, current.amountMinor)
  const updated = await tx.update('commissions', current.id, { ...Object.fromEntries(changes), updatedAt: isoAt(clock) })
  if (delta !== 0) {
    await tx.increment('affiliates', current.affiliateId, { totalEarningsMinor: delta })
    if (current.linkId !== null) await tx.increment('links', current.linkId, { totalEarningsMinor: delta })
  }
  return updated!
}

export async function deleteCommission(tx: StorageTransaction, record: CommissionRecord): Promise<void> {
  const refusal = deletionError(record)
  if (refusal) throw unprocessable(refusal)
  await tx.delete('commissions', record.id)
  await countRecord(tx, record, -1)
}
