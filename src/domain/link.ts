import { randomString } from '../crypto.js'
import { answerMapper, type AnswerOf } from './answers.js'

/** A referral link as the API answers it (see descriptions/links.ts). */
export type ReferralLink = AnswerOf<'links', 'link'>

export { REFERRAL_CODE } from './descriptions/links.js'
const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** `REF-` and 8 characters of [A-Z0-9] from a cryptographic source: about 41 bits. */
export const generateReferralCode = (): string => `REF-${randomString(CODE_ALPHABET, 8)}`

/** The campaign url with the parameter set through the URL API, so its other query and fragment stay. */
export function referralUrl(campaignUrl: string, parameter: string, code: string): string {
  const url = new URL(campaignUrl)
  url.searchParams.set(parameter, code)
  return url.toString()
}

/** The parameter a link on the host's own site carries its code in (`shareUrl`), which the beacon reads. */
export const SHARE_PARAMETER = 'via'

/** A link on the host's own site: the campaign url with `via=<code>`, counted by the beacon on its pages. */
export const shareUrlOf = (campaignUrl: string, code: string): string => referralUrl(campaignUrl, SHARE_PARAMETER, code)

export const toLink = answerMapper('links', 'link')
