// Notices written to the outbox (the `notifications` model) in the same transaction as what they
// tell: the commit hook hands this module each write's events before it commits (`fromEvents`),
// and the operations that know more than their event says call it themselves (`approved`). A
// rolled-back write therefore leaves no notice, and a committed one always has its notice, which
// the sender (./sender.ts) finds in storage even after a crash.

import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import type { AffiliateRecord, CampaignRecord, EventRecord, NotificationRecord } from '../domain/records.js'
import { maskEmail } from '../domain/mask.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import type { NoticeWriter } from '../api/shared.js'
import type { NotificationKind } from './kinds.js'

/** Failures of one provider endpoint within this window that make `integration.failing`. */
export const FAILING_WINDOW_MS = 3_600_000
export const FAILING_COUNT = 5
/** The `settings` record counting an integration's recent failures. */
export const failuresSetting = (integrationId: string) => `notify.integrationFailures:${integrationId}`

export interface Notice {
  kind: NotificationKind
  recordId: string
  workspaceId: string
  campaignId: string | null
  affiliateId: string | null
  data: Record<string, unknown>
}

export type { NoticeWriter }

/** Writes `notice` as pending now, unless that (kind, record) already has one. Answers whether it wrote. */
export async function writeNotice(
  tx: StorageTransaction,
  clock: Clock,
  notice: Notice,
  dueAt?: string,
): Promise<NotificationRecord | null> {
  const [existing] = await tx.find('notifications', { where: { kind: notice.kind, recordId: notice.recordId }, limit: 1 })
  if (existing) return null
  const now = isoAt(clock)
  const record: NotificationRecord = {
    id: newId(),
    ...notice,
    data: JSON.stringify(notice.data),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: dueAt ?? now,
    claimToken: null,
    lastError: null,
    sentAt: null,
    unsubscribedAt: null,
    createdAt: now,
    updatedAt: now,
  }
  await tx.insert('notifications', record)
  return record
}

const person = (a: Pick<AffiliateRecord, 'email' | 'firstName' | 'lastName'>) => ({
  email: a.email,
  firstName: a.firstName,
  lastName: a.lastName,
})
const idOf = (data: Record<string, unknown>, field: string): string | null =>
  typeof data[field] === 'string' ? (data[field] as string) : null

/** Whether an affiliate record stood as an applicant (not active, not banned) of a campaign that requires approval. */
const applicant = (a: { isActive?: unknown; isBanned?: unknown }, campaign: CampaignRecord | null): boolean =>
  a.isActive === false && a.isBanned !== true && campaign?.requiresApprovalToJoin === true

/**
 * `wrote` is called when a transaction wrote a notice (before it commits: the caller wakes the
 * sender once the commit is done); `committed` when one of its own transactions did, after it.
 */
export function noticeWriter(
  storage: Storage,
  clock: Clock,
  signal: { wrote: () => void; committed: () => void },
  onError: (error: unknown) => void,
): NoticeWriter {
  async function noticeOf(tx: StorageTransaction, event: EventRecord): Promise<Notice | null> {
    switch (event.type) {
      case 'commission.created': {
        const data = JSON.parse(event.data) as Record<string, unknown>
        const id = idOf(data, 'commissionId')
        const c = id && (await tx.get('commissions', id))
        // Money made for them: a sale that earns (not held, refunded or zero).
        if (!c || c.kind !== 'sale' || c.amountMinor <= 0 || !['pending', 'processing', 'paid'].includes(c.status)) return null
        const campaign = await tx.get('campaigns', c.campaignId)
        const customer = c.referredUser ?? null
        return {
          kind: 'commission.earned',
          recordId: c.id,
          workspaceId: c.workspaceId,
          campaignId: c.campaignId,
          affiliateId: c.affiliateId,
          data: {
            amountMinor: c.amountMinor,
            currency: c.currency || campaign?.currency || 'USD',
            commissionDate: c.commissionDate,
            customer: customer && campaign?.hideCustomerEmail ? maskEmail(customer) : customer,
          },
        }
      }
      case 'commission.clawback_created': {
        const id = idOf(JSON.parse(event.data) as Record<string, unknown>, 'commissionId')
        const c = id && (await tx.get('commissions', id))
        if (!c || c.kind !== 'clawback') return null
        const campaign = await tx.get('campaigns', c.campaignId)
        return {
          kind: 'clawback.created',
          recordId: c.id,
          workspaceId: c.workspaceId,
          campaignId: c.campaignId,
          affiliateId: c.affiliateId,
          data: {
            amountMinor: -c.amountMinor,
            currency: c.currency || campaign?.currency || 'USD',
            reversesCommissionId: c.reversesCommissionId,
          },
        }
      }
      case 'payout.status_changed': {
        const data = JSON.parse(event.data) as Record<string, unknown>
        const id = idOf(data, 'payoutId')
        if (data.status !== 'paid' || !id) return null
        const p = await tx.get('payouts', id)
        if (!p || p.status !== 'paid') return null
        return {
          kind: 'payout.paid',
          recordId: p.id,
          workspaceId: p.workspaceId,
          campaignId: p.campaignId,
          affiliateId: p.affiliateId,
          data: {
            amountMinor: p.amountMinor,
            currency: p.currency,
            reference: p.externalReference,
            commissionCount: p.commissionCount,
            payoutMethod: p.payoutMethod,
            payoutEmail: p.payoutEmail,
            paidAt: p.paidAt,
          },
        }
      }
      case 'affiliate.created': {
        const a = JSON.parse(event.data) as Record<string, unknown>
        const id = idOf(a, 'id')
        const campaignId = idOf(a, 'campaignId')
        const campaign = campaignId ? await tx.get('campaigns', campaignId) : null
        if (!id || !campaign || !applicant(a, campaign)) return null
        return {
          kind: 'affiliate.applied',
          recordId: id,
          workspaceId: event.workspaceId,
          campaignId: campaign.id,
          affiliateId: null,
          data: { affiliateId: id, email: a.email, firstName: a.firstName, lastName: a.lastName, campaignName: campaign.campaignName },
        }
      }
      case 'affiliate.deleted': {
        // The admin's "reject" deletes the application: an applicant deleted is an application declined.
        const a = JSON.parse(event.data) as Record<string, unknown>
        const id = idOf(a, 'id')
        const campaignId = idOf(a, 'campaignId')
        const campaign = campaignId ? await tx.get('campaigns', campaignId) : null
        if (!id || !campaign || !applicant(a, campaign)) return null
        return {
          kind: 'affiliate.rejected',
          recordId: id,
          workspaceId: event.workspaceId,
          campaignId: campaign.id,
          affiliateId: id,
          data: { email: a.email, firstName: a.firstName, lastName: a.lastName },
        }
      }
      default:
        return null
    }
  }

  return {
    async fromEvents(tx, events) {
      let wrote = false
      for (const event of events) {
        const notice = await noticeOf(tx, event)
        if (notice && (await writeNotice(tx, clock, notice))) wrote = true
      }
      if (wrote) signal.wrote()
    },

    async approved(tx, before, after) {
      const campaign = await tx.get('campaigns', after.campaignId)
      if (!applicant(before, campaign) || !after.isActive || after.isBanned) return
      const notice: Notice = {
        kind: 'affiliate.approved',
        recordId: after.id,
        workspaceId: after.workspaceId,
        campaignId: after.campaignId,
        affiliateId: after.id,
        data: person(after),
      }
      if (await writeNotice(tx, clock, notice)) signal.wrote()
    },

    async integrationFailed(integrationId) {
      const wrote = await storage
        .transaction(async (tx) => {
          const integration = await tx.get('integrations', integrationId)
          if (!integration) return false
          const now = clock.now()
          const id = failuresSetting(integrationId)
          const setting = await tx.get('settings', id)
          const earlier = setting ? (JSON.parse(setting.value) as string[]) : []
          const recent = [...earlier.filter((at) => Date.parse(at) > now - FAILING_WINDOW_MS), new Date(now).toISOString()]
          let notice: NotificationRecord | null = null
          let kept = recent
          if (recent.length >= FAILING_COUNT) {
            kept = []
            notice = await writeNotice(tx, clock, {
              kind: 'integration.failing',
              recordId: `${integrationId}/${new Date(now).toISOString().slice(0, 10)}`,
              workspaceId: integration.workspaceId,
              campaignId: null,
              affiliateId: null,
              data: {
                integrationId,
                provider: integration.provider,
                description: integration.description,
                failures: recent.length,
                since: recent[0],
              },
            })
          }
          const stamp = isoAt(clock)
          if (setting) await tx.update('settings', id, { value: JSON.stringify(kept), updatedAt: stamp })
          else await tx.insert('settings', { id, value: JSON.stringify(kept), createdAt: stamp, updatedAt: stamp })
          return notice !== null
        })
        .catch((error: unknown) => {
          // Counting must never change what the provider is answered: the failure goes to onError.
          onError(error)
          return false
        })
      if (wrote) signal.committed()
    },
  }
}
