import { randomString } from '../crypto.js'
import { answerMapper } from './schema.js'

/** A referral link as the API answers it. */
export interface ReferralLink {
  id: string
  referralCode: string
  /** The campaign url with `<urlParameter>=<referralCode>` set in its query. */
  url: string
  urlParameter: string
  /** The user of the API key that created it; null when created through the trusted `service.api`. */
  userId: string | null
  affiliateId: string
  campaignId: string
  totalOpens: number
  totalClicks: number
  /** Distinct referred e-mails of the commissions attributed to this link. */
  totalSignups: number
  /** Sum of the link's attributed commissions that are not refunded. */
  totalEarnings: number
  createdAt: string
  updatedAt: string
}

export const REFERRAL_CODE = /^[A-Za-z0-9_-]{3,64}$/
const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** `REF-` and 8 characters of [A-Z0-9] from a cryptographic source: about 41 bits. */
export const generateReferralCode = (): string => `REF-${randomString(CODE_ALPHABET, 8)}`

/** The campaign url with the parameter set through the URL API, so its other query and fragment stay. */
export function referralUrl(campaignUrl: string, parameter: string, code: string): string {
  const url = new URL(campaignUrl)
  url.searchParams.set(parameter, code)
  return url.toString()
}

export const toLink = answerMapper<'links', ReferralLink>('links', 'link')
