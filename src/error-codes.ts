// Every error `code` the service answers, with the status it comes with and what it means. The
// OpenAPI document and docs/api.md list them from here; `AffiliateError.code` is typed by it.

export const ERROR_CODES = {
  validation_error: [400, 'One or more fields are refused; `errors` names each (at most 50).'],
  invalid_json: [400, 'The body is not JSON.'],
  invalid_body: [400, 'The body is not a JSON object, or a PUT names no field.'],
  invalid_idempotency_key: [400, 'The `Idempotency-Key` header is not 1 to 255 characters.'],
  client_closed: [400, 'The client closed the request before its body ended.'],
  invalid_signature: [
    400,
    'A provider event (Stripe) whose signature, timestamp or integration does not check out: the same answer for all three.',
  ],
  invalid_api_key: [401, 'Missing or unknown key (`x-auth-service`, or `Authorization: Bearer`; both sent and different too).'],
  invalid_publishable_key: [401, 'Missing or unknown `pk_` key on the beacon.'],
  forbidden: [403, "A `workspaceId` that is not one of the key's workspaces."],
  origin_not_allowed: [403, "The beacon's `Origin` is not one of the publishable key's `allowedOrigins`."],
  not_found: [404, "No such record in the workspaces the key sees (another workspace's ids answer the same)."],
  endpoint_not_found: [404, 'No route at this path.'],
  method_not_allowed: [405, 'The path exists, the method does not; `Allow` lists the methods.'],
  body_timeout: [408, 'The body did not arrive within `bodyTimeoutMs`; the connection is closed.'],
  idempotency_in_progress: [409, 'A request with this `Idempotency-Key` is still running.'],
  payout_run_conflict: [409, 'Another payout run took some of the same commissions at the same time; run again.'],
  body_too_large: [413, 'The body is over `maxBodyBytes`.'],
  unsupported_media_type: [415, 'The body is not `application/json`.'],
  idempotency_key_reused: [422, 'This `Idempotency-Key` was used with a different request.'],
  invalid_status_transition: [422, 'The status cannot move from the current one to the one asked (the message names both).'],
  duplicate: [
    422,
    'A unique value is taken: an e-mail in the campaign, a referral code, an `invoiceId`, `chargeId` or `stripeCustomerId` in the workspace, a `refundId` used for another sale.',
  ],
  affiliate_banned: [422, 'The affiliate is banned: it earns nothing and its money cannot move to being paid.'],
  money_history: [
    422,
    'The record is money history (paid, in a payout, refunded after payment, a clawback): it cannot be deleted or re-dated.',
  ],
  attribution_window: [422, "The click is outside the campaign's attribution window, or later than the sale."],
  unknown_click: [422, 'No click with this `clickId` is kept.'],
  attribution_mismatch: [422, 'The `clickId`, `referralCode`, `affiliateId` or `campaignId` given name different affiliates or campaigns.'],
  workspace_mismatch: [422, 'A record named is in another workspace than the one given.'],
  has_dependents: [
    422,
    'The record still has others that depend on it (a campaign with affiliates, an affiliate with commissions or payouts).',
  ],
  has_customers: [422, 'The affiliate has customers bound to it and cannot be deleted; ban it instead.'],
  currency_locked: [422, "A campaign's currency cannot change once it has commissions."],
  limit_reached: [422, 'A per-record limit is reached (links per affiliate).'],
  refund_refused: [
    422,
    'The refund is refused: a clawback, an already refunded commission, a zero amount, nothing left, or more than what is left.',
  ],
  amount_locked: [422, "The commission's amounts or status cannot change in its state (paid, in a payout, a clawback)."],
  invalid_as_of: [422, '`asOf` is in the future: commissions are paid once due.'],
  webhook_disabled: [422, 'The webhook is disabled; enable it first.'],
  fraud_self_referral: [
    422,
    "A lead refused by the campaign's `self_referral` fraud rule set to `block`: the customer is the affiliate (same e-mail once normalised, or the affiliate's own device).",
  ],
  fraud_disposable_email: [
    422,
    "A lead refused by the campaign's `disposable_email` fraud rule set to `block`: the e-mail's domain is a disposable one.",
  ],
  fraud_paid_ad_click: [422, "A lead refused by the campaign's `paid_ad_click` fraud rule set to `block`: the click came from a paid ad."],
  fraud_address_burst: [
    422,
    "A lead refused by the campaign's `address_burst` fraud rule set to `block`: more than 3 of the affiliate's customers came from one address within 24 hours.",
  ],
  fraud_refund_rate: [
    422,
    "A lead refused by the campaign's `refund_rate` fraud rule set to `block`: over 30 % of the affiliate's sales of the last 90 days were refunded.",
  ],
  not_under_review: [422, 'Only a held commission (`hold`) can be released or voided; the message names its status.'],
  rule_violation: [422, 'Another business rule refused the change; the message says which.'],
  provider_refused: [
    422,
    "A payment provider refused a call the service made for the request (Stripe: a promotion code it would not make, a key without the permission); the message is the provider's. Nothing was stored.",
  ],
  rate_limited: [429, 'Over the rate limit; wait `Retry-After` seconds.'],
  internal_error: [500, 'An unexpected error; it is reported to `onError` and its details are never answered.'],
  provider_error: [
    502,
    "A payment provider could not be reached, or failed, during a call the service made for the request (Stripe's message is given). Nothing was stored: send the request again.",
  ],
  provider_unavailable: [
    503,
    "A provider's event that this install cannot handle yet (Stripe's without the `stripe` package installed): reported to `onError`; the provider delivers it again. Also a promo code that needs a Stripe promotion code made without the package.",
  ],
} as const satisfies Record<string, readonly [number, string]>
