import type { Infer } from 'superstruct'
import { toCommission, type Commission } from '../domain/commission.js'
import { commissions } from '../domain/descriptions/commissions.js'
import { parseMoney } from '../domain/money.js'
import type { CommissionRecord } from '../domain/records.js'
import {
  commissionCreate,
  commissionId,
  commissionList,
  commissionRefund,
  commissionReview,
  commissionUpdate,
} from '../schemas/commissions.js'
import { patchOf, storedField } from '../schemas/model-schemas.js'
import { parse, parseBody } from '../schemas/validate.js'
import type { Access } from './access.js'
import type { ReviewAction } from '../domain/commission-status.js'
import {
  deleteCommission,
  findCommission,
  insertCommission,
  previewRefund,
  refundCommission,
  reviewCommission,
  updateCommission,
  type CommissionPatch,
  type RefundPreview,
} from './commission-records.js'
import { announce, emit, emitChange } from '../events/outbox.js'
import { inTransaction, listPage, listWhere, periodWhere, requireChanges, readOnly, type Deps, type Page } from './shared.js'

export type CommissionCreateInput = Infer<typeof commissionCreate.struct>
export type CommissionUpdateInput = Infer<typeof commissionUpdate.struct>
export type CommissionListQuery = Infer<typeof commissionList.struct>
export type CommissionRefundInput = Infer<typeof commissionRefund.struct>

type ListQuery = CommissionListQuery

export const minor = (amount: number | string): number => parseMoney(amount)!

/** The commission fields of a request, in stored form. Shared with referred users. */
export const commissionPatch = (input: object): CommissionPatch => patchOf(commissions, input)

/** Lists commission records of the caller's workspaces, shaped by `map`. Shared with referred users. */
export function listCommissions<T>(
  { storage }: Deps,
  access: Access,
  q: ListQuery,
  map: (record: CommissionRecord) => T,
): Promise<Page<T>> {
  const where = { ...listWhere(access, q), ...periodWhere(q) }
  const orderField = storedField(commissions, q.orderType ?? 'createdAt')
  return inTransaction(storage, (tx) => listPage(tx, 'commissions', { ...q, where, orderField }, map), readOnly)
}

/** The events of a change to a commission record (either route family). */
export const COMMISSION_EVENTS = {
  updated: 'commission.updated',
  statusChanged: 'commission.status_changed',
  refunded: 'commission.refunded',
} as const

/** The event each review writes. */
const REVIEW_EVENTS = { release: 'commission.released', void: 'commission.voided' } as const

export function commissionOperations(deps: Deps) {
  const { storage, clock } = deps

  /**
   * Releases or voids held commissions (`reviewCommission`), all or none: one not held is 422
   * (`not_under_review`, naming it), one not found 404. Each writes its event with the status and
   * the reasons it was held for. Answers them as now stored, in the order given.
   */
  async function review(action: ReviewAction, access: Access, body: unknown, query: unknown): Promise<{ items: Commission[] }> {
    const { commissionIds } = parseBody(commissionReview, body, query)
    const ids = [...new Set(commissionIds.map((id) => id.toLowerCase()))]
    return inTransaction(storage, async (tx) => {
      const items: Commission[] = []
      for (const id of ids) {
        const current = await findCommission(tx, access, id, 'Commission')
        const reviewed = toCommission(await reviewCommission(tx, clock, current, action))
        await emit(tx, clock, REVIEW_EVENTS[action], reviewed.workspaceId, {
          ...reviewed,
          previousStatus: current.status,
          previousHoldReasons: current.holdReasons,
        })
        items.push(reviewed)
      }
      return { items }
    })
  }

  return {
    async create(access: Access, body: unknown, query: unknown = {}): Promise<Commission> {
      const input = parseBody(commissionCreate, body, query)
      // A click answered by the redirect may still wait in its batch.
      if (input.clickId !== undefined) await deps.clickWritten?.(input.clickId.toLowerCase())
      return inTransaction(storage, async (tx) =>
        announce(
          tx,
          clock,
          'commission.created',
          toCommission(
            await insertCommission(tx, access, clock, {
              ...commissionPatch(input),
              campaignId: input.campaignId,
              affiliateId: input.affiliateId,
              referralCode: input.referralCode,
              clickId: input.clickId,
              referredUser: input.referredUser,
              amountMinor: minor(input.amount),
              adminEarnedMinor: minor(input.adminEarnedAmount ?? 0),
              status: input.status ?? 'pending',
            }),
          ),
        ),
      )
    },

    async get(access: Access, query: unknown): Promise<Commission> {
      const { commissionId: id } = parse([commissionId, query]).query
      return inTransaction(storage, async (tx) => toCommission(await findCommission(tx, access, id, 'Commission')), readOnly)
    },

    async update(access: Access, query: unknown, body: unknown): Promise<Commission> {
      const { query: q, body: input } = parse([commissionId, query], [commissionUpdate, body])
      requireChanges(input)
      return inTransaction(storage, async (tx) => {
        const current = await findCommission(tx, access, q.commissionId, 'Commission')
        const updated = await updateCommission(tx, clock, current, commissionPatch(input))
        return emitChange(tx, clock, COMMISSION_EVENTS, current, updated, toCommission(updated))
      })
    },

    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { commissionId: id } = parse([commissionId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findCommission(tx, access, id, 'Commission')
        await deleteCommission(tx, current)
        await emit(tx, clock, 'commission.deleted', current.workspaceId, toCommission(current))
        return { id: current.id }
      })
    },

    /**
     * Refunds part or all of a commission: see `refundCommission`. With `dryRun`, answers what it
     * would do (`previewRefund`: the commission and clawback as they would be, the payout it would
     * leave) and writes nothing; a refusal is the same 422.
     */
    async refund(access: Access, body: unknown, query: unknown = {}): Promise<Commission | RefundPreview> {
      const input = parseBody(commissionRefund, body, query)
      const amountMinor = input.amount === undefined ? undefined : minor(input.amount)
      if (input.dryRun) {
        return inTransaction(
          storage,
          async (tx) => previewRefund(tx, clock, await findCommission(tx, access, input.commissionId, 'Commission'), amountMinor),
          readOnly,
        )
      }
      return inTransaction(storage, async (tx) => {
        const current = await findCommission(tx, access, input.commissionId, 'Commission')
        const refunded = await refundCommission(tx, clock, current, amountMinor)
        return emitChange(tx, clock, 'commission.refunded', current, refunded, toCommission(refunded))
      })
    },

    /** `POST /commissions/release`: held commissions become `pending`, payable once due. */
    release: (access: Access, body: unknown, query: unknown = {}) => review('release', access, body, query),

    /** `POST /commissions/void`: held commissions become `voided`: they earn nothing and are kept for history. */
    void: (access: Access, body: unknown, query: unknown = {}) => review('void', access, body, query),

    list: (access: Access, query: unknown): Promise<Page<Commission>> =>
      listCommissions(deps, access, parse([commissionList, query]).query, toCommission),
  }
}
