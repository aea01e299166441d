import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { payouts } from '../domain/descriptions/payouts.js'
import { instant } from '../domain/due.js'
import { formatMoney } from '../domain/money.js'
import { PAYOUT_EVENTS, toPayout, type Payout, type PayoutRunResult } from '../domain/payout.js'
import { planPayoutRun, type PlannedPayout } from '../domain/payout-run.js'
import { commissionEffect, payoutMoveError } from '../domain/payout-status.js'
import type { CommissionRecord, PayoutRecord } from '../domain/records.js'
import { toCommission, type Commission } from '../domain/commission.js'
import { AffiliateError, unprocessable } from '../errors.js'
import { payoutId, payoutItems, payoutList, payoutRun, payoutUpdate } from '../schemas/payouts.js'
import { patchOf, storedField } from '../schemas/model-schemas.js'
import { parse, parseBody } from '../schemas/validate.js'
import { chunked, IDS_PER_READ } from '../storage/batch.js'
import type { RecordOf, StorageTransaction } from '../storage/types.js'
import { requireWorkspace, visible, type Access } from './access.js'
import { findCampaign } from './campaigns.js'
import { emitChange, emitEach, type EventTransaction } from '../events/outbox.js'
import { addToRollups, moveCommissionStatus } from '../reports/rollup.js'
import { inTransaction, listPage, listWhere, readOnly, type Deps, type Page } from './shared.js'

export type PayoutRunInput = Infer<typeof payoutRun.struct>
export type PayoutUpdateInput = Infer<typeof payoutUpdate.struct>
export type PayoutListQuery = Infer<typeof payoutList.struct>
export type PayoutItemsQuery = Infer<typeof payoutItems.struct>

/** `fields` of every record of `model` whose id is one of `ids`, read a chunk at a time. */
async function byIds<M extends 'affiliates' | 'campaigns', F extends keyof RecordOf<M> & string>(
  tx: StorageTransaction,
  model: M,
  fields: readonly F[],
  ids: readonly string[],
) {
  const out = []
  for (const chunk of chunked(ids, IDS_PER_READ)) out.push(...(await tx.select(model, fields, { where: { id: { in: chunk } } })))
  return out
}

/** What a run reads of each due commission: what the plan and the rollups look at. */
const RUN_FIELDS = [
  'workspaceId',
  'affiliateId',
  'campaignId',
  'kind',
  'status',
  'amountMinor',
  'refundedMinor',
  'dueAt',
  'payoutId',
  'commissionDate',
] as const
type RunRecord = Pick<CommissionRecord, (typeof RUN_FIELDS)[number] | 'id'>

/** A commission whose refunds after payment (made while its payout was frozen) took all of it: paid, it is `refunded`. */
const fullyRefunded = (c: CommissionRecord): boolean => c.refundedMinor > 0 && c.refundedMinor === c.amountMinor

export const findPayout = async (tx: StorageTransaction, access: Access, id: string): Promise<PayoutRecord> =>
  visible(access, await tx.get('payouts', id.toLowerCase()), 'Payout')

/** A planned payout as the record it becomes. */
const draft = (planned: PlannedPayout, workspaceId: string, periodEnd: string, now: string): PayoutRecord => ({
  id: newId(),
  workspaceId,
  campaignId: planned.campaignId,
  affiliateId: planned.affiliateId,
  currency: planned.currency,
  amountMinor: planned.amountMinor,
  commissionCount: planned.commissionIds.length,
  status: 'pending',
  payoutMethod: planned.payoutMethod,
  payoutEmail: planned.payoutEmail,
  periodEnd,
  externalReference: null,
  failureReason: null,
  paidAt: null,
  createdAt: now,
  updatedAt: now,
})

/**
 * Stores the payouts and claims their commissions, each only while it is still `pending` and in no
 * payout: should another run have claimed one first (a storage running transactions side by side
 * without serializable isolation), the whole run fails and writes nothing, rather than pay twice.
 * Every payout is one write of each kind: one `insertMany`, one guarded `updateEach`, one move of
 * the rollups and one batch of `payout.created` events (in the payouts' order).
 */
async function makePayouts(
  tx: EventTransaction,
  clock: Deps['clock'],
  workspaceId: string,
  made: readonly { record: PayoutRecord; commissionIds: readonly string[] }[],
  answers: readonly Payout[],
  commissions: ReadonlyMap<string, RunRecord>,
): Promise<void> {
  if (made.length === 0) return
  await tx.insertMany(
    'payouts',
    made.map(({ record }) => record),
  )
  const effect = commissionEffect('enter')
  const claims = made.flatMap(({ record, commissionIds }) =>
    commissionIds.map((id) => ({ id, patch: { status: effect.status!, payoutId: record.id, updatedAt: record.createdAt } })),
  )
  const claimed = await tx.updateEach('commissions', claims, { status: 'pending', payoutId: null })
  if (claimed !== claims.length) {
    throw new AffiliateError(409, 'Another payout run took some of these commissions at the same time; run again', {
      code: 'payout_run_conflict',
    })
  }
  await moveCommissionStatus(
    tx,
    claims.map(({ id }) => commissions.get(id)!),
    effect.status!,
  )
  await emitEach(tx, clock, 'payout.created', workspaceId, answers)
}

export function payoutOperations({ storage, clock }: Deps) {
  return {
    async run(access: Access, body: unknown, query: unknown = {}): Promise<PayoutRunResult> {
      const input = parseBody(payoutRun, body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      const now = isoAt(clock)
      const asOf = input.asOf === undefined ? now : new Date(input.asOf).toISOString()
      if (instant(asOf) > instant(now)) throw unprocessable('asOf cannot be in the future: commissions are paid once due', 'invalid_as_of')
      const work = async (tx: EventTransaction): Promise<PayoutRunResult> => {
        let campaignId: string | undefined
        if (input.campaignId !== undefined) {
          const campaign = await findCampaign(tx, access, input.campaignId)
          if (campaign.workspaceId !== workspaceId) throw unprocessable('campaignId is not in this workspace', 'workspace_mismatch')
          campaignId = campaign.id
        }
        const commissions = await tx.select('commissions', RUN_FIELDS, {
          where: { workspaceId, status: 'pending', payoutId: null, ...(campaignId ? { campaignId } : {}) },
          orderBy: { field: 'id', direction: 'ASC' },
        })
        const affiliates = await byIds(
          tx,
          'affiliates',
          ['isBanned', 'payoutMethod', 'payoutEmail'],
          [...new Set(commissions.map((c) => c.affiliateId))],
        )
        const campaigns = await byIds(
          tx,
          'campaigns',
          ['minimumPayoutMinor', 'currency'],
          [...new Set(commissions.map((c) => c.campaignId))],
        )
        const plan = planPayoutRun({ commissions, affiliates, campaigns, asOf })
        const skipped = plan.skipped.map(({ affiliateId, reason, amountMinor }) => ({
          affiliateId,
          reason,
          amount: formatMoney(amountMinor),
        }))
        const made = plan.payouts.map((planned) => ({
          record: draft(planned, workspaceId, asOf, now),
          commissionIds: planned.commissionIds,
        }))
        const payouts: Payout[] = made.map(({ record }) => toPayout(record))
        // A dry run shows each payout as it would be made; nothing is written and the ids are not kept.
        if (!input.dryRun) await makePayouts(tx, clock, workspaceId, made, payouts, new Map(commissions.map((c) => [c.id, c])))
        return { payouts, skipped }
      }
      return inTransaction(storage, work, input.dryRun ? readOnly : undefined)
    },

    async get(access: Access, query: unknown): Promise<Payout> {
      const { payoutId: id } = parse([payoutId, query]).query
      return inTransaction(storage, async (tx) => toPayout(await findPayout(tx, access, id)), readOnly)
    },

    /**
     * Moves a payout (see `payoutMoveError`) and its commissions with it: `paid` pays them,
     * `failed` and `canceled` send them back to `pending` for the next run.
     */
    async update(access: Access, query: unknown, body: unknown): Promise<Payout> {
      const { query: q, body: input } = parse([payoutId, query], [payoutUpdate, body])
      return inTransaction(storage, async (tx) => {
        const current = await findPayout(tx, access, q.payoutId)
        const refusal = payoutMoveError(current.status, input.status)
        if (refusal) throw refusal
        const moves = input.status !== current.status
        if (moves && (input.status === 'processing' || input.status === 'paid')) {
          const affiliate = await tx.get('affiliates', current.affiliateId)
          if (affiliate?.isBanned) {
            throw unprocessable(
              `This affiliate is banned: its payout cannot move to ${input.status}; fail or cancel it`,
              'affiliate_banned',
            )
          }
        }
        const now = isoAt(clock)
        // What the payment system said; the status only when it moves.
        const { status: _moved, ...said } = patchOf(payouts, input)
        const patch: Partial<PayoutRecord> = said
        if (moves) {
          patch.status = input.status
          if (input.status === 'paid') patch.paidAt = now
          if (input.status === 'paid')
            await addToRollups(tx, [{ scope: current, at: now, deltas: { payoutCount: 1, paidOutMinor: current.amountMinor } }])
          const effect = commissionEffect(input.status)
          if (effect.status !== null) {
            const commissions: Partial<CommissionRecord> = { status: effect.status, updatedAt: now }
            if (effect.payoutId === 'clear') commissions.payoutId = null
            if (input.status === 'paid') commissions.payoutDate = now
            const items = await tx.find('commissions', { where: { payoutId: current.id } })
            // Refunded in full while the payout was frozen: paid, and nothing of it left (its clawbacks took it all).
            const spent = effect.status === 'paid' ? items.filter(fullyRefunded) : []
            await moveCommissionStatus(
              tx,
              items.filter((c) => !spent.includes(c)),
              effect.status,
            )
            await tx.updateMany('commissions', { payoutId: current.id }, commissions)
            if (spent.length > 0) {
              await moveCommissionStatus(tx, spent, 'refunded')
              await tx.updateEach(
                'commissions',
                spent.map((c) => ({ id: c.id, patch: { status: 'refunded' as const } })),
              )
            }
          }
        }
        const changed = Object.entries(patch).some(([field, value]) => value !== current[field as keyof PayoutRecord])
        if (!changed) return toPayout(current)
        const updated = (await tx.update('payouts', current.id, { ...patch, updatedAt: now }))!
        return emitChange(tx, clock, PAYOUT_EVENTS, current, updated, toPayout(updated))
      })
    },

    async list(access: Access, query: unknown): Promise<Page<Payout>> {
      const q = parse([payoutList, query]).query
      const where = listWhere(access, q)
      const orderField = storedField(payouts, q.orderType ?? 'createdAt')
      return inTransaction(storage, (tx) => listPage(tx, 'payouts', { ...q, where, orderField }, toPayout), readOnly)
    },

    /** The commissions in a payout (clawbacks included), oldest first. */
    async items(access: Access, query: unknown): Promise<Page<Commission>> {
      const q = parse([payoutItems, query]).query
      return inTransaction(
        storage,
        async (tx) => {
          const payout = await findPayout(tx, access, q.payoutId)
          return listPage(
            tx,
            'commissions',
            { ...q, where: { payoutId: payout.id }, orderField: 'createdAt', orderValue: 'ASC' },
            toCommission,
          )
        },
        readOnly,
      )
    },
  }
}
