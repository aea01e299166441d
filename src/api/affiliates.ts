import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { toAffiliate, type Affiliate } from '../domain/affiliate.js'
import { affiliates } from '../domain/descriptions/affiliates.js'
import { balanceOf } from '../domain/due.js'
import { formatMoney } from '../domain/money.js'
import type { AffiliateBalance } from '../domain/payout.js'
import type { AffiliateRecord } from '../domain/records.js'
import { unprocessable } from '../errors.js'
import { affiliateCreate, affiliateId, affiliateList, affiliateUpdate } from '../schemas/affiliates.js'
import { createValues, patchOf, storedField } from '../schemas/model-schemas.js'
import { parse, parseBody } from '../schemas/validate.js'
import type { StorageTransaction } from '../storage/types.js'
import { requireWorkspace, visible, workspaceScope, type Access } from './access.js'
import { findCampaign } from './campaigns.js'
import { emit, emitted } from '../events/outbox.js'
import { affiliateStatusWhere, inTransaction, listPage, requireChanges, readOnly, type Deps, type Page } from './shared.js'

export type AffiliateCreateInput = Infer<typeof affiliateCreate.struct>
export type AffiliateUpdateInput = Infer<typeof affiliateUpdate.struct>
export type AffiliateListQuery = Infer<typeof affiliateList.struct>

export const findAffiliate = async (tx: StorageTransaction, access: Access, id: string): Promise<AffiliateRecord> =>
  visible(access, await tx.get('affiliates', id.toLowerCase()), 'Affiliate')

export function affiliateOperations({ storage, clock, notices }: Deps) {
  return {
    async create(access: Access, body: unknown, query: unknown = {}): Promise<Affiliate> {
      const input = parseBody(affiliateCreate, body, query)
      const workspaceId = input.workspaceId?.toLowerCase()
      if (workspaceId !== undefined) requireWorkspace(access, workspaceId)
      return inTransaction(storage, async (tx) => {
        const campaign = await findCampaign(tx, access, input.campaignId)
        if (workspaceId !== undefined && workspaceId !== campaign.workspaceId) {
          throw unprocessable("workspaceId does not match the campaign's workspace", 'workspace_mismatch')
        }
        const now = isoAt(clock)
        const record: AffiliateRecord = {
          ...createValues(affiliates, input),
          id: newId(),
          workspaceId: campaign.workspaceId,
          campaignId: campaign.id,
          emailKey: input.email.toLowerCase(),
          // A campaign that requires approval admits new affiliates inactive until approved.
          isActive: input.isActive ?? !campaign.requiresApprovalToJoin,
          totalOpens: 0,
          totalClicks: 0,
          totalSignups: 0,
          totalEarningsMinor: 0,
          portalDevices: [],
          refundWindow: [],
          createdAt: now,
          updatedAt: now,
        }
        await tx.insert('affiliates', record)
        return emitted(tx, clock, 'affiliate.created', record.workspaceId, toAffiliate(record))
      })
    },

    async get(access: Access, query: unknown): Promise<Affiliate> {
      const { affiliateId: id } = parse([affiliateId, query]).query
      return inTransaction(storage, async (tx) => toAffiliate(await findAffiliate(tx, access, id)), readOnly)
    },

    async update(access: Access, query: unknown, body: unknown): Promise<Affiliate> {
      const { query: q, body: input } = parse([affiliateId, query], [affiliateUpdate, body])
      requireChanges(input)
      return inTransaction(storage, async (tx) => {
        const current = await findAffiliate(tx, access, q.affiliateId)
        const updated = (await tx.update('affiliates', current.id, { ...patchOf(affiliates, input), updatedAt: isoAt(clock) }))!
        if (!current.isActive && updated.isActive) await notices?.approved(tx, current, updated)
        return emitted(tx, clock, 'affiliate.updated', updated.workspaceId, toAffiliate(updated))
      })
    },

    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { affiliateId: id } = parse([affiliateId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findAffiliate(tx, access, id)
        if ((await tx.count('commissions', { where: { affiliateId: current.id } })) > 0) {
          throw unprocessable('This affiliate still has commissions; delete them first', 'has_dependents')
        }
        if ((await tx.count('payouts', { where: { affiliateId: current.id } })) > 0) {
          throw unprocessable('This affiliate has payouts and cannot be deleted: money history is kept', 'money_history')
        }
        // Its customers stay bound to it (the first attribution wins): deleting it would leave them bound to no one.
        if ((await tx.count('customers', { where: { affiliateId: current.id } })) > 0) {
          throw unprocessable('This affiliate has customers and cannot be deleted; ban it instead', 'has_customers')
        }
        // Deleting a promo code deactivates its Stripe promotion code: that is done one code at a time, first.
        if ((await tx.count('promoCodes', { where: { affiliateId: current.id } })) > 0) {
          throw unprocessable(
            'This affiliate still has promo codes; delete them first (their Stripe promotion codes are deactivated then)',
            'has_dependents',
          )
        }
        await tx.deleteMany('links', { affiliateId: current.id })
        await tx.delete('affiliates', current.id)
        await emit(tx, clock, 'affiliate.deleted', current.workspaceId, toAffiliate(current))
        return { id: current.id }
      })
    },

    /** Where the affiliate's money stands now: held, due, in payouts, paid out, paid outside payouts. */
    async balance(access: Access, query: unknown): Promise<AffiliateBalance> {
      const { affiliateId: id } = parse([affiliateId, query]).query
      return inTransaction(
        storage,
        async (tx) => {
          const affiliate = await findAffiliate(tx, access, id)
          const campaign = await tx.get('campaigns', affiliate.campaignId)
          // Those in payouts count through their payouts' amounts: only the others are read.
          const loose = await tx.select('commissions', ['status', 'amountMinor', 'refundedMinor', 'dueAt', 'payoutId'], {
            where: { affiliateId: affiliate.id, payoutId: null },
          })
          const payouts = await tx.select('payouts', ['status', 'amountMinor'], { where: { affiliateId: affiliate.id } })
          const balance = balanceOf(loose, payouts, isoAt(clock))
          return {
            affiliateId: affiliate.id,
            currency: campaign?.currency ?? 'USD',
            held: formatMoney(balance.held),
            due: formatMoney(balance.due),
            inPayout: formatMoney(balance.inPayout),
            paidOut: formatMoney(balance.paidOut),
            paidOutside: formatMoney(balance.paidOutside),
          }
        },
        readOnly,
      )
    },

    async list(access: Access, query: unknown): Promise<Page<Affiliate>> {
      const q = parse([affiliateList, query]).query
      const where = {
        ...workspaceScope(access, q.workspaceId?.toLowerCase()),
        ...(q.campaignId === undefined ? {} : { campaignId: q.campaignId.toLowerCase() }),
        ...(q.email === undefined ? {} : { emailKey: q.email.toLowerCase() }),
        ...affiliateStatusWhere(q.status),
      }
      const orderField = storedField(affiliates, q.orderType ?? 'createdAt')
      return inTransaction(storage, (tx) => listPage(tx, 'affiliates', { ...q, where, orderField }, toAffiliate), readOnly)
    },
  }
}
