import { carriesAdClick } from '../domain/fraud-rules.js'
import type { IRequest } from 'itty-router'
import { REFERRAL_CODE } from '../domain/link.js'
import { AffiliateError, notFound } from '../errors.js'
import { originAllowed } from '../keys/origins.js'
import type { KeyStore } from '../keys/types.js'
import type { AddressThrottle } from '../limiter/address-throttle.js'
import { linkTrack } from '../schemas/links.js'
import { parseBody } from '../schemas/validate.js'
import type { Tracker, Visit } from '../tracking/tracker.js'
import { readJsonBody, type BodyLimits } from './body.js'
import { clientAddressOf } from './client-address.js'
import type { Runtime } from '../runtime.js'
import { envelope, toResponse } from './respond.js'

/** Whether a landing url (absolute, or a path with its query) carries an ad network's click id; a url that does not parse carries none. */
function landedFromAd(landingUrl: string): boolean {
  try {
    return carriesAdClick(new URL(landingUrl, 'https://landing.invalid').searchParams)
  } catch {
    return false
  }
}

/** The public tracking routes under `basePath`: no API key; limited per client address. */
export const REDIRECT_PATH = '/r/:referralCode'
export const BEACON_PATH = '/track'
export const BEACON_MESSAGE = 'Event tracked successfully'
export const PUBLISHABLE_KEY_HEADER = 'x-publishable-key'

export interface TrackingRoutesOptions {
  /** The tracker, made on the first tracked event. */
  tracker: () => Promise<Tracker>
  keyStore: KeyStore
  body: BodyLimits
  /** Requests per client address; null when the host turned the limit off. */
  limit: AddressThrottle | null
}

const invalidPublishableKey = () =>
  new AffiliateError(401, 'Invalid publishable key. Send a pk_ key in x-publishable-key.', { code: 'invalid_publishable_key' })
const originRefused = (origin: string) =>
  new AffiliateError(403, `Origin ${origin} is not allowed for this publishable key`, { code: 'origin_not_allowed' })

/** How long a browser may keep the preflight's answer: a day. */
const PREFLIGHT_MAX_AGE = '86400'

/**
 * The redirect (`GET /r/<referralCode>`), the beacon (`POST /track`) and its CORS preflight.
 * Errors are thrown; the handler answers them as every other error.
 */
export function trackingRoutes({ tracker, keyStore, body, limit }: TrackingRoutesOptions) {
  /** The visit, once its address has spent a token (429 with `Retry-After` when it has none). */
  function admit(request: Request, context: unknown, runtime: Runtime): Visit {
    const address = clientAddressOf(request, context)
    if (address !== undefined && limit) {
      limit.check(address)
      limit.spend(address)
    }
    return { address, userAgent: request.headers.get('user-agent') ?? '', runtime }
  }

  return {
    /** 302 to the link's url with `clickId` added (a bot: the url as it is, nothing counted). */
    async redirect(request: Request & IRequest, context: unknown, runtime: Runtime): Promise<Response> {
      const visit = { ...admit(request, context, runtime), paidAd: carriesAdClick(new URL(request.url).searchParams) }
      const code = request.params.referralCode ?? ''
      if (!REFERRAL_CODE.test(code)) throw notFound('Link')
      const { clickId, link } = await (await tracker()).track(code, 'click', visit, null)
      const location = new URL(link.url)
      if (clickId !== null) location.searchParams.set('clickId', clickId)
      return runtime.response(302, { location: location.toString(), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }, null)
    },

    /**
     * The preflight: any origin may ask (a preflight carries no key, so the key's origins cannot be
     * known yet); the POST itself is refused with 403 for an origin its key does not allow.
     */
    preflight(request: Request): Response {
      const origin = request.headers.get('origin')
      return new Response(null, {
        status: 204,
        headers: {
          ...(origin ? { 'access-control-allow-origin': origin } : {}),
          'access-control-allow-methods': 'POST, OPTIONS',
          'access-control-allow-headers': `content-type, ${PUBLISHABLE_KEY_HEADER}`,
          'access-control-max-age': PREFLIGHT_MAX_AGE,
          vary: 'Origin',
        },
      })
    },

    /**
     * `{ referralCode, event }` with a publishable key: 200 `{ clickId }` (null for a bot), with
     * `Access-Control-Allow-Origin` for an allowed `Origin`. Answers the CORS headers it may on
     * errors too, so the page can read why. `cors` is filled as soon as the origin is allowed.
     */
    async beacon(request: Request, context: unknown, runtime: Runtime, cors: Record<string, string>): Promise<Response> {
      const visit = admit(request, context, runtime)
      const key = request.headers.get(PUBLISHABLE_KEY_HEADER)
      const principal = key ? await keyStore.resolve(key, runtime) : null
      if (!principal?.publishable) throw invalidPublishableKey()
      const origin = request.headers.get('origin')
      if (origin !== null) {
        if (!originAllowed(principal.publishable.allowedOrigins, origin)) throw originRefused(origin)
        cors['access-control-allow-origin'] = origin
        cors.vary = 'Origin'
      }
      const input = parseBody(linkTrack, await readJsonBody(request, body), Object.fromEntries(new URL(request.url).searchParams))
      const tracked = { ...visit, paidAd: input.landingUrl !== undefined && landedFromAd(input.landingUrl) }
      const { clickId } = await (await tracker()).track(input.referralCode, input.event, tracked, principal.workspaceIds)
      return toResponse(envelope(200, BEACON_MESSAGE, { clickId }), cors, runtime)
    },
  }
}
