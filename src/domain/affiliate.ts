import { answerMapper, type AnswerOf } from './answers.js'

/** An affiliate as the API answers it (see descriptions/affiliates.ts). */
export type Affiliate = AnswerOf<'affiliates', 'affiliate'>

export const toAffiliate = answerMapper('affiliates', 'affiliate')
