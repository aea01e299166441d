import { answerMapper, type AnswerOf } from './answers.js'

/** A commission as the API answers it (see descriptions/commissions.ts). Amounts are decimal strings with two decimals. */
export type Commission = AnswerOf<'commissions', 'commission'>

/** A referred user: the same record as a commission, with the signup's extra fields. */
export type ReferredUser = AnswerOf<'commissions', 'referredUser'>

export const toCommission = answerMapper('commissions', 'commission')

export const toReferredUser = answerMapper('commissions', 'referredUser')
