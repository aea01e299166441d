import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { promoCodes } from '../domain/descriptions/promo-codes.js'
import { normalizePromoCode, toPromoCode, type PromoCode } from '../domain/promo-code.js'
import type { CampaignRecord, IntegrationRecord, PromoCodeRecord } from '../domain/records.js'
import { emit, emitted } from '../events/outbox.js'
import { createPromotionCode, deactivatePromotionCode } from '../integrations/stripe-promotion-codes.js'
import { storedField } from '../schemas/model-schemas.js'
import { promoCodeCreate, promoCodeId, promoCodeList } from '../schemas/promo-codes.js'
import { parse, parseBody } from '../schemas/validate.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { visible, workspaceScope, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { findCampaign } from './campaigns.js'
import { duplicateOf, inTransaction, listPage, readOnly, type Deps, type Page } from './shared.js'

// Promo codes (SPEC wave 4, "Promo codes"): a code names its affiliate in a lead or sale, without a
// link. With an integration's Stripe key, a code of a campaign with a `stripeCouponId` is made a
// Stripe promotion code first (nothing is stored when Stripe refuses or fails), and deleting the
// code deactivates it.

export type PromoCodeCreateInput = Infer<typeof promoCodeCreate.struct>
export type PromoCodeListQuery = Infer<typeof promoCodeList.struct>

/** The workspace's promo code with this code, in any case; null when there is none. */
export async function promoCodeByCode(tx: StorageTransaction, workspaceId: string, code: string): Promise<PromoCodeRecord | null> {
  const [found] = await tx.find('promoCodes', { where: { workspaceId, code: normalizePromoCode(code) }, limit: 1 })
  return found ?? null
}

/** The workspace's promo code whose Stripe promotion code (`promo_…`) this is; null when there is none. */
export async function promoCodeByStripeId(
  tx: StorageTransaction,
  workspaceId: string,
  stripePromotionCodeId: string,
): Promise<PromoCodeRecord | null> {
  const [found] = await tx.find('promoCodes', { where: { workspaceId, stripePromotionCodeId }, limit: 1 })
  return found ?? null
}

/**
 * The Stripe key that makes and deactivates the campaign's promotion codes: that of the workspace's
 * first Stripe integration holding one and serving the campaign (limited to it, or to none).
 */
async function stripeKeyFor(tx: StorageTransaction, campaign: Pick<CampaignRecord, 'id' | 'workspaceId'>): Promise<string | null> {
  const integrations: IntegrationRecord[] = await tx.find('integrations', {
    where: { workspaceId: campaign.workspaceId, provider: 'stripe' },
    orderBy: { field: 'createdAt', direction: 'ASC' },
  })
  return integrations.find((one) => one.apiKey !== null && (one.campaignId === null || one.campaignId === campaign.id))?.apiKey ?? null
}

const findPromoCode = async (tx: StorageTransaction, access: Access, id: string): Promise<PromoCodeRecord> =>
  visible(access, await tx.get('promoCodes', id.toLowerCase()), 'Promo code')

export function promoCodeOperations(deps: Deps) {
  const { storage, clock } = deps
  const stripeApi = deps.stripeApi ?? {}
  return {
    /**
     * Gives an affiliate a code (any case; kept upper-case, unique in the workspace: 422 `duplicate`).
     * Without `stripePromotionCodeId`, a campaign with a `stripeCouponId` and a Stripe integration
     * holding an API key make the Stripe promotion code first (idempotency key per promo code).
     */
    async create(access: Access, body: unknown, query: unknown = {}): Promise<PromoCode> {
      const input = parseBody(promoCodeCreate, body, query)
      const code = normalizePromoCode(input.code)
      const { affiliate, apiKey, couponId } = await inTransaction(
        storage,
        async (tx) => {
          const affiliate = await findAffiliate(tx, access, input.affiliateId)
          const campaign = await findCampaign(tx, access, affiliate.campaignId)
          // Read first so a taken code is refused before Stripe is asked; the insert's constraint still decides a race.
          if (await promoCodeByCode(tx, affiliate.workspaceId, code))
            throw duplicateOf(new UniqueViolationError('promo_codes_workspace_code'))
          const stripeId = input.stripePromotionCodeId
          if (stripeId !== undefined && (await promoCodeByStripeId(tx, affiliate.workspaceId, stripeId))) {
            throw duplicateOf(new UniqueViolationError('promo_codes_workspace_stripe'))
          }
          const wanted = stripeId === undefined && campaign.stripeCouponId !== ''
          return { affiliate, apiKey: wanted ? await stripeKeyFor(tx, campaign) : null, couponId: campaign.stripeCouponId }
        },
        readOnly,
      )
      const id = newId()
      const made =
        apiKey === null
          ? null
          : await createPromotionCode(apiKey, stripeApi, {
              promoCodeId: id,
              workspaceId: affiliate.workspaceId,
              affiliateId: affiliate.id,
              code,
              couponId,
            })
      try {
        return await inTransaction(storage, async (tx) => {
          const now = isoAt(clock)
          const record: PromoCodeRecord = {
            id,
            workspaceId: affiliate.workspaceId,
            campaignId: affiliate.campaignId,
            affiliateId: affiliate.id,
            code,
            stripePromotionCodeId: made ?? input.stripePromotionCodeId ?? null,
            uses: 0,
            createdAt: now,
            updatedAt: now,
          }
          await tx.insert('promoCodes', record)
          return emitted(tx, clock, 'promo_code.created', record.workspaceId, toPromoCode(record))
        })
      } catch (error) {
        // Nothing half-made: the Stripe promotion code of a promo code that was not stored is deactivated.
        if (made !== null && apiKey !== null) await deactivatePromotionCode(apiKey, stripeApi, id, made).catch(() => undefined)
        throw error
      }
    },

    async get(access: Access, query: unknown): Promise<PromoCode> {
      const { promoCodeId: id } = parse([promoCodeId, query]).query
      return inTransaction(storage, async (tx) => toPromoCode(await findPromoCode(tx, access, id)), readOnly)
    },

    /** The codes of the caller's workspaces, by affiliate and campaign; `contains` searches the code. */
    list(access: Access, query: unknown): Promise<Page<PromoCode>> {
      const q = parse([promoCodeList, query]).query
      const where = {
        ...workspaceScope(access, q.workspaceId?.toLowerCase()),
        ...(q.affiliateId === undefined ? {} : { affiliateId: q.affiliateId.toLowerCase() }),
        ...(q.campaignId === undefined ? {} : { campaignId: q.campaignId.toLowerCase() }),
      }
      return inTransaction(
        storage,
        (tx) => listPage(tx, 'promoCodes', { ...q, where, orderField: storedField(promoCodes, q.orderType ?? 'createdAt') }, toPromoCode),
        readOnly,
      )
    },

    /**
     * Deletes the code; its Stripe promotion code, when the workspace's Stripe key can reach it, is
     * deactivated first (a refusal or failure of Stripe deletes nothing). Customers it brought stay theirs.
     */
    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { promoCodeId: id } = parse([promoCodeId, query]).query
      const { current, apiKey } = await inTransaction(
        storage,
        async (tx) => {
          const current = await findPromoCode(tx, access, id)
          return {
            current,
            apiKey:
              current.stripePromotionCodeId === null
                ? null
                : await stripeKeyFor(tx, { id: current.campaignId, workspaceId: current.workspaceId }),
          }
        },
        readOnly,
      )
      if (apiKey !== null && current.stripePromotionCodeId !== null)
        await deactivatePromotionCode(apiKey, stripeApi, current.id, current.stripePromotionCodeId)
      return inTransaction(storage, async (tx) => {
        const still = await findPromoCode(tx, access, current.id)
        await tx.delete('promoCodes', still.id)
        await emit(tx, clock, 'promo_code.deleted', still.workspaceId, toPromoCode(still))
        return { id: still.id }
      })
    },
  }
}
