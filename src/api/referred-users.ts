import type { Infer } from 'superstruct'
import { toReferredUser, type ReferredUser } from '../domain/commission.js'
import { commissionId, referredUserCreate, referredUserEmail, referredUserList, referredUserUpdate } from '../schemas/commissions.js'
import { parse, parseBody } from '../schemas/validate.js'
import { notFound } from '../errors.js'
import { requireWorkspace, workspaceScope, type Access } from './access.js'
import { deleteCommission, findCommission, insertCommission, updateCommission } from './commission-records.js'
import { commissionPatch, listCommissions, minor } from './commissions.js'
import { COMMISSION_EVENTS } from './commissions.js'
import { announce, emit, emitChange } from '../events/outbox.js'
import { inTransaction, requireChanges, readOnly, type Deps, type Page } from './shared.js'

export type ReferredUserCreateInput = Infer<typeof referredUserCreate.struct>
export type ReferredUserUpdateInput = Infer<typeof referredUserUpdate.struct>
export type ReferredUserListQuery = Infer<typeof referredUserList.struct>

const WHAT = 'Referred user'

export function referredUserOperations(deps: Deps) {
  const { storage, clock } = deps
  return {
    async create(access: Access, body: unknown, query: unknown = {}): Promise<ReferredUser> {
      const input = parseBody(referredUserCreate, body, query)
      const { referredTo, affiliateId, workspaceId, campaignId, referralCode, clickId, isSelfReferral: _ignored, ...fields } = input
      if (workspaceId !== undefined) requireWorkspace(access, workspaceId.toLowerCase())
      // A click answered by the redirect may still wait in its batch.
      if (input.clickId !== undefined) await deps.clickWritten?.(input.clickId.toLowerCase())
      return inTransaction(storage, async (tx) =>
        announce(
          tx,
          clock,
          'referred_user.created',
          toReferredUser(
            await insertCommission(tx, access, clock, {
              ...commissionPatch(fields),
              affiliateId,
              campaignId,
              workspaceId: workspaceId?.toLowerCase(),
              referralCode,
              clickId,
              referredUser: referredTo,
              amountMinor: minor(input.amount ?? 0),
              adminEarnedMinor: minor(input.adminEarnedAmount ?? 0),
              status: input.status ?? 'pending',
            }),
          ),
        ),
      )
    },

    /** The newest record for the e-mail within the caller's workspaces. */
    async get(access: Access, query: unknown): Promise<ReferredUser> {
      const { referredUser } = parse([referredUserEmail, query]).query
      return inTransaction(
        storage,
        async (tx) => {
          const [newest] = await tx.find('commissions', {
            where: { ...workspaceScope(access, undefined), referredUserKey: referredUser.toLowerCase() },
            orderBy: { field: 'createdAt', direction: 'DESC' },
            limit: 1,
          })
          if (!newest) throw notFound(WHAT)
          return toReferredUser(newest)
        },
        readOnly,
      )
    },

    async update(access: Access, query: unknown, body: unknown): Promise<ReferredUser> {
      const { query: q, body: input } = parse([commissionId, query], [referredUserUpdate, body])
      requireChanges(input)
      return inTransaction(storage, async (tx) => {
        const current = await findCommission(tx, access, q.commissionId, WHAT)
        const updated = await updateCommission(tx, clock, current, commissionPatch(input))
        return emitChange(tx, clock, COMMISSION_EVENTS, current, updated, toReferredUser(updated))
      })
    },

    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { commissionId: id } = parse([commissionId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findCommission(tx, access, id, WHAT)
        await deleteCommission(tx, current)
        await emit(tx, clock, 'commission.deleted', current.workspaceId, toReferredUser(current))
        return { id: current.id }
      })
    },

    list: (access: Access, query: unknown): Promise<Page<ReferredUser>> =>
      listCommissions(deps, access, parse([referredUserList, query]).query, toReferredUser),
  }
}
