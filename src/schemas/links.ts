import { REFERRAL_CODE } from '../domain/link.js'
import { oneOf, text, uuid } from './fields.js'
import { field } from './fields.js'
import { allOptional, schema } from './validate.js'

export const referralCode = field<string>(
  'referralCode',
  { type: 'string', pattern: REFERRAL_CODE.source },
  (value) => (typeof value === 'string' && REFERRAL_CODE.test(value)) || 'must be 3 to 64 letters, digits, _ or -',
)

const readOnly = ['id', 'url', 'userId', 'campaignId', 'totalOpens', 'totalClicks', 'totalSignups', 'totalEarnings', 'createdAt', 'updatedAt']

export const linkCreate = schema({ affiliateId: uuid, ...allOptional({ referralCode, urlParameter: text(64, { min: 1 }) }) }, readOnly)

export const linkTrack = schema({ referralCode, event: oneOf(['open', 'click'] as const) })

export const linkAffiliate = schema({ affiliateId: uuid })

export const linkId = schema({ linkId: uuid })
