import { AffiliateError } from '../errors.js'
import { STRIPE_INSTALL, stripeModule } from './stripe.js'

// The Stripe promotion codes of promo codes (SPEC wave 4, "Promo codes"): with an integration's
// restricted key, a promo code of a campaign with a `stripeCouponId` is made a Stripe promotion code
// (the customer's discount and the affiliate's attribution are one code), and deleting the promo
// code deactivates it. Through the official SDK, loaded lazily (an optional peer dependency), over
// its fetch HTTP client so every runtime can make the calls.

/** Where the SDK sends its requests: Stripe's API unless told (tests point it at a local server). */
export interface StripeApiOptions {
  /** @default 'api.stripe.com' */
  host?: string
  /** @default 443 */
  port?: number
  /** @default 'https' */
  protocol?: 'http' | 'https'
  /** Milliseconds a call may take. @default 20000 */
  timeoutMs?: number
}

/** The first API version whose promotion codes name their coupon as `promotion: { type: 'coupon', coupon }`. */
const PROMOTION_PARAMETER_SINCE = '2025-09-30'

/** The idempotency keys of the calls made for a promo code: the same promo code makes (or deactivates) one Stripe promotion code. */
export const createKeyOf = (promoCodeId: string): string => `affiliate-service-promo-code-create-${promoCodeId}`
export const deactivateKeyOf = (promoCodeId: string): string => `affiliate-service-promo-code-deactivate-${promoCodeId}`

/** What the promotion code is made of. */
export interface PromotionCodeRequest {
  promoCodeId: string
  workspaceId: string
  affiliateId: string
  /** Upper case, as the promo code keeps it. */
  code: string
  couponId: string
}

const unavailable = (cause: unknown) =>
  new AffiliateError(
    503,
    `Making Stripe promotion codes needs the stripe package (19 or later), which could not be loaded: run \`${STRIPE_INSTALL}\` in the host. Nothing was stored.`,
    { code: 'provider_unavailable', cause },
  )

/** A Stripe error as the API's answer: its refusals (4xx) are 422 `provider_refused`, the rest 502 `provider_error`, both with Stripe's message. */
function stripeFailure(error: unknown, doing: string): AffiliateError {
  const status =
    typeof error === 'object' && error !== null && 'statusCode' in error && typeof error.statusCode === 'number'
      ? error.statusCode
      : undefined
  const message = error instanceof Error ? error.message : String(error)
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    return new AffiliateError(422, `Stripe refused to ${doing}: ${message}`, { code: 'provider_refused', cause: error })
  }
  return new AffiliateError(502, `Stripe failed to ${doing}: ${message}`, { code: 'provider_error', cause: error })
}

const isMissing = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === 'resource_missing'

async function client(apiKey: string, options: StripeApiOptions) {
  const { default: Stripe } = await stripeModule().catch((error: unknown) => {
    throw unavailable(error)
  })
  if (Stripe.API_VERSION < PROMOTION_PARAMETER_SINCE) throw unavailable(new Error(`stripe speaks API version ${Stripe.API_VERSION}`))
  return new Stripe(apiKey, {
    httpClient: Stripe.createFetchHttpClient(),
    // The SDK retries a failed call itself, with the same idempotency key.
    maxNetworkRetries: 2,
    timeout: options.timeoutMs ?? 20_000,
    telemetry: false,
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.protocol === undefined ? {} : { protocol: options.protocol }),
  })
}

/** Makes the Stripe promotion code of a promo code (`stripe.promotionCodes.create`, idempotent per promo code); answers its id (`promo_…`). */
export async function createPromotionCode(apiKey: string, options: StripeApiOptions, request: PromotionCodeRequest): Promise<string> {
  const stripe = await client(apiKey, options)
  try {
    const made = await stripe.promotionCodes.create(
      {
        promotion: { type: 'coupon', coupon: request.couponId },
        code: request.code,
        metadata: { affiliateId: request.affiliateId, promoCodeId: request.promoCodeId, workspaceId: request.workspaceId },
      },
      { idempotencyKey: createKeyOf(request.promoCodeId) },
    )
    return made.id
  } catch (error) {
    throw stripeFailure(error, `make the promotion code ${request.code}`)
  }
}

/** Deactivates a Stripe promotion code (Stripe deletes none); one Stripe no longer knows is taken as gone. */
export async function deactivatePromotionCode(
  apiKey: string,
  options: StripeApiOptions,
  promoCodeId: string,
  promotionCodeId: string,
): Promise<void> {
  const stripe = await client(apiKey, options)
  try {
    await stripe.promotionCodes.update(promotionCodeId, { active: false }, { idempotencyKey: deactivateKeyOf(promoCodeId) })
  } catch (error) {
    if (isMissing(error)) return
    throw stripeFailure(error, `deactivate the promotion code ${promotionCodeId}`)
  }
}
