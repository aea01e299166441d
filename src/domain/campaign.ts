import { answerMapper, type AnswerOf } from './answers.js'

/** A campaign as the API answers it (see descriptions/campaigns.ts). */
export type Campaign = AnswerOf<'campaigns', 'campaign'>

export const toCampaign = answerMapper('campaigns', 'campaign')
