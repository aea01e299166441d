import * as check from '../checks.js'
import { model } from '../describe.js'
import { providerId } from './commissions.js'
import { indexedText, int, stamps, text } from './fields.js'

// Promo codes (SPEC wave 4, "Promo codes"): a code a customer types ("ALICE20") names the affiliate
// that brought it, without a link; with the host's Stripe key it is the customer's discount too.

/** 3 to 40 letters, digits, `_` or `-`, in any case: kept upper-case, so `alice20` is `ALICE20`. */
export const PROMO_CODE = /^[A-Za-z0-9_-]{3,40}$/

/** A promo code as requests give it, in any case. */
export const promoCode = check.check<string>(
  'promoCode',
  {
    type: 'string',
    pattern: PROMO_CODE.source,
    description: '3 to 40 letters, digits, _ or -; any case (kept upper-case, compared without case).',
  },
  (value) => (typeof value === 'string' && PROMO_CODE.test(value)) || 'must be 3 to 40 letters, digits, _ or -',
)

/** The one spelling a code is kept and compared in. */
export const normalizePromoCode = (code: string): string => code.toUpperCase()

export const promoCodes = model(
  {
    id: text({ answerAs: 'promoCodeId' }),
    workspaceId: indexedText,
    /** The affiliate's campaign: what an integration limited to a campaign accepts. */
    campaignId: text({ indexed: true, filter: check.uuid }),
    affiliateId: text({ indexed: true, input: check.uuid, create: 'required', filter: true }),
    code: text({
      searched: true,
      description: 'Upper-case; unique in the workspace whatever the case it was given in.',
      input: promoCode,
      create: 'required',
      form: { label: 'Code', hint: '3 to 40 letters, digits, _ or -, e.g. ALICE20. Customers may type it in any case.' },
    }),
    /**
     * The Stripe promotion code (`promo_…`) that carries the customer's discount: given, or made by
     * the service through the integration's Stripe key when the campaign has a `stripeCouponId`.
     */
    stripePromotionCodeId: text({
      nullable: true,
      description:
        "The Stripe promotion code (promo_…) customers redeem: given, or made through the integration's Stripe key from the campaign's stripeCouponId.",
      input: providerId,
      create: 'optional',
      form: {
        label: 'Stripe promotion code ID',
        hint: 'Optional: promo_… of a promotion code made in Stripe. Left empty, one is made from the campaign’s Stripe coupon when Stripe is connected with an API key.',
      },
    }),
    /** Leads and sales that named it (a repeat answered from the first counts once). */
    uses: int({ description: 'Leads and sales that named the code.' }),
    ...stamps,
  },
  {
    unique: [
      { name: 'promo_codes_workspace_code', fields: ['workspaceId', 'code'] },
      { name: 'promo_codes_workspace_stripe', fields: ['workspaceId', 'stripePromotionCodeId'] },
    ],
    // A conversion finds its code by (workspace, code); a Stripe event by its promotion code.
    indexes: [
      ['workspaceId', 'code'],
      ['workspaceId', 'stripePromotionCodeId'],
    ],
    answers: {
      promoCode: ['id', 'workspaceId', 'campaignId', 'affiliateId', 'code', 'stripePromotionCodeId', 'uses', 'createdAt', 'updatedAt'],
    },
    list: { orderBy: ['createdAt', 'updatedAt', 'uses'] },
  },
)
