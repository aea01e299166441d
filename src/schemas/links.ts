import { optional } from 'superstruct'
import { check, oneOf, text, uuid } from '../domain/checks.js'
import { links, referralCode } from '../domain/descriptions/links.js'
import { createSchema } from './model-schemas.js'
import { firstProblem, jsonSchemaOf, schema } from './validate.js'

export { referralCode }

export const linkCreate = createSchema(links)

/**
 * One tracked event. `landingUrl`: the page's address as the visitor landed on it (the beacon on the
 * host's own site), so an ad network's click id in it (`gclid`, `fbclid`, ...) marks the click as
 * one from a paid ad (the `paid_ad_click` fraud rule).
 */
export const linkTrack = schema({ referralCode, event: oneOf(['open', 'click'] as const), landingUrl: optional(text(4096)) })

/**
 * The keyed `POST /links/track`'s body (and each entry of a batch): an event on a link and, when
 * the caller knows them, the visitor's user agent and client address, for the dedupe and the bot
 * filter the redirect applies. Without either, every event counts.
 */
export const linkTrackKeyed = schema({
  referralCode,
  event: oneOf(['open', 'click'] as const),
  userAgent: optional(text(1024)),
  clientAddress: optional(text(64, { min: 1 })),
})

/** The most events one `POST /links/track` batch may hold. */
export const MAX_TRACK_EVENTS = 1000

const trackEvents = check<{ referralCode: string; event: 'open' | 'click'; userAgent?: string; clientAddress?: string }[]>(
  'events',
  { type: 'array', minItems: 1, maxItems: MAX_TRACK_EVENTS, items: jsonSchemaOf(linkTrackKeyed) },
  (value) => {
    if (!Array.isArray(value)) return 'must be an array of { referralCode, event, userAgent?, clientAddress? }'
    if (value.length < 1 || value.length > MAX_TRACK_EVENTS) return `must hold 1 to ${MAX_TRACK_EVENTS} events`
    for (let i = 0; i < value.length; i++) {
      // Each entry under the rules of a single event: one description of them.
      const problem = firstProblem(linkTrackKeyed, value[i])
      if (problem !== null) return `has an invalid entry at ${i}: ${problem}`
    }
    return true
  },
)

export const linkTrackBatch = schema({ events: trackEvents })

export const linkAffiliate = schema({ affiliateId: uuid })

export const linkId = schema({ linkId: uuid })
