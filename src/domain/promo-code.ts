import { answerMapper, type AnswerOf } from './answers.js'

/** A promo code as the API answers it (see descriptions/promo-codes.ts). */
export type PromoCode = AnswerOf<'promoCodes', 'promoCode'>

export const toPromoCode = answerMapper('promoCodes', 'promoCode')

export { normalizePromoCode, PROMO_CODE } from './descriptions/promo-codes.js'
