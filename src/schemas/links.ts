import { REFERRAL_CODE } from '../domain/link.js'
import { oneOf, text, uuid } from './fields.js'
import { field } from './fields.js'
import { allOptional, firstProblem, jsonSchemaOf, schema, type Schema } from './validate.js'

export const referralCode = field<string>(
  'referralCode',
  { type: 'string', pattern: REFERRAL_CODE.source },
  (value) => (typeof value === 'string' && REFERRAL_CODE.test(value)) || 'must be 3 to 64 letters, digits, _ or -',
)

const readOnly = ['id', 'url', 'userId', 'campaignId', 'totalOpens', 'totalClicks', 'totalSignups', 'totalEarnings', 'createdAt', 'updatedAt']

export const linkCreate = schema({ affiliateId: uuid, ...allOptional({ referralCode, urlParameter: text(64, { min: 1 }) }) }, readOnly)

export const linkTrack = schema({ referralCode, event: oneOf(['open', 'click'] as const) })

/** The most events one `POST /links/track` batch may hold. */
export const MAX_TRACK_EVENTS = 1000

const trackEvents = field<{ referralCode: string; event: 'open' | 'click' }[]>(
  'events',
  { type: 'array', minItems: 1, maxItems: MAX_TRACK_EVENTS, items: jsonSchemaOf(linkTrack as Schema<unknown>) },
  (value) => {
    if (!Array.isArray(value)) return 'must be an array of { referralCode, event }'
    if (value.length < 1 || value.length > MAX_TRACK_EVENTS) return `must hold 1 to ${MAX_TRACK_EVENTS} events`
    for (let i = 0; i < value.length; i++) {
      // Each entry under the rules of a single event: one description of them.
      const problem = firstProblem(linkTrack as Schema<unknown>, value[i])
      if (problem !== null) return `has an invalid entry at ${i}: ${problem}`
    }
    return true
  },
)

export const linkTrackBatch = schema({ events: trackEvents })

export const linkAffiliate = schema({ affiliateId: uuid })

export const linkId = schema({ linkId: uuid })
