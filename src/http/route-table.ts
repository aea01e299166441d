// The route table's metadata: each route's method, path, success message and answer, and the
// query field the typed API takes as its first argument. It holds no validator, so the HTTP client
// (`affiliate-service/client`) can import it and stay small; `routes.ts` adds each route's query
// and body schemas for the server, the typed API and `openapi.json`.

/**
 * What a route answers in the envelope's `data`: one record, a page of them, all of them, or the
 * id deleted; or `csv`, a file streamed as it is (`{ filename, contentType, body }`), no envelope.
 */
export type Answer = { one: Model } | { page: Model } | { items: Model } | 'deleted' | 'csv'
export type Model =
  | 'campaign'
  | 'affiliate'
  | 'link'
  | 'linkTrack'
  | 'commission'
  | 'referredUser'
  | 'payout'
  | 'payoutRun'
  | 'balance'
  | 'webhook'
  | 'webhookWithSecret'
  | 'delivery'
  | 'event'
  | 'eventPage'
  | 'reportSummary'
  | 'reportTimeseries'
  | 'topAffiliates'
  | 'customer'
  | 'saleResult'
  | 'saleRefundResult'
  | 'refundPreview'
  | 'integration'
  | 'providerEvent'
  | 'promoCode'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

/**
 * One route, described once. The typed API's arguments follow from it, the same for every
 * resource: `get(id)`, `list(query)`, `create(input)`, `update(id, changes)`, `delete(id)`, and
 * actions `verb(id, input?)`. A route with an `id` takes that field's value first (in the query
 * for GET and DELETE and PUT, in the body for POST) and the rest of its query or body second.
 */
export interface RouteInfo {
  readonly method: Method
  readonly path: string
  /** The envelope's `message` on success, and the OpenAPI summary. */
  readonly message: string
  /** @default 201 for POST, else 200 */
  readonly status?: number
  /** Another success status, answered when the body's `field` is `true` (a dry run writes nothing: 200). */
  readonly statusIf?: { readonly field: string; readonly status: number }
  /**
   * With the body's `field` true the route writes nothing and answers `answer` instead (a preview);
   * `answerHas` is a property only that answer has, which tells the typed API's two answers apart.
   */
  readonly preview?: { readonly field: string; readonly answer: Answer; readonly answerHas: string }
  /** Another success status the operation may choose for an answer (an `Answered` with its status), and when. */
  readonly alternativeStatus?: { readonly status: number; readonly description: string }
  /** The field the typed API takes as its first argument. */
  readonly id?: string
  readonly answer: Answer
}

export const routeTable = {
  campaigns: {
    list: { method: 'GET', path: '/campaigns/list', message: 'Campaigns retrieved successfully', answer: { page: 'campaign' } },
    get: { method: 'GET', path: '/campaigns', message: 'Campaign retrieved successfully', id: 'campaignId', answer: { one: 'campaign' } },
    /** Creates a campaign. Making it `isDefault` clears the workspace's previous default. */
    create: { method: 'POST', path: '/campaigns', message: 'Campaign created successfully', answer: { one: 'campaign' } },
    /** Changes only the fields given. A new `url` rebuilds the `url` of every link of the campaign. */
    update: { method: 'PUT', path: '/campaigns', message: 'Campaign updated successfully', id: 'campaignId', answer: { one: 'campaign' } },
    /** Refused (422) while the campaign has affiliates. */
    delete: { method: 'DELETE', path: '/campaigns', message: 'Campaign deleted successfully', id: 'campaignId', answer: 'deleted' },
  },
  affiliates: {
    list: { method: 'GET', path: '/affiliates/list', message: 'Affiliates retrieved successfully', answer: { page: 'affiliate' } },
    get: {
      method: 'GET',
      path: '/affiliates',
      message: 'Affiliate retrieved successfully',
      id: 'affiliateId',
      answer: { one: 'affiliate' },
    },
    create: { method: 'POST', path: '/affiliates', message: 'Affiliate created successfully', answer: { one: 'affiliate' } },
    /** Changes only the fields given. */
    update: {
      method: 'PUT',
      path: '/affiliates',
      message: 'Affiliate updated successfully',
      id: 'affiliateId',
      answer: { one: 'affiliate' },
    },
    /** Refused (422) while the affiliate has commissions or payouts; deletes its links. */
    delete: { method: 'DELETE', path: '/affiliates', message: 'Affiliate deleted successfully', id: 'affiliateId', answer: 'deleted' },
    /** Where its money stands now: held (not yet due), due, in payouts not yet paid, paid out. */
    balance: {
      method: 'GET',
      path: '/affiliates/balance',
      message: 'Affiliate balance retrieved successfully',
      id: 'affiliateId',
      answer: { one: 'balance' },
    },
  },
  links: {
    /** Every link of `affiliateId`, newest first. */
    list: { method: 'GET', path: '/links', message: 'Links retrieved successfully', answer: { items: 'link' } },
    /** Creates a link; the code is generated (`REF-XXXXXXXX`) unless `referralCode` is given. */
    create: { method: 'POST', path: '/links', message: 'Link created successfully', answer: { one: 'link' } },
    delete: { method: 'DELETE', path: '/links', message: 'Link deleted successfully', id: 'linkId', answer: 'deleted' },
    /** Counts an open or a click on the link and its affiliate through the click capture (answers the link once written), or up to 1,000 `events` (answers `{ tracked, items }`). */
    track: { method: 'POST', path: '/links/track', message: 'Link event tracked successfully', status: 200, answer: { one: 'linkTrack' } },
  },
  commissions: {
    list: { method: 'GET', path: '/commissions/list', message: 'Commissions retrieved successfully', answer: { page: 'commission' } },
    get: {
      method: 'GET',
      path: '/commissions',
      message: 'Commission retrieved successfully',
      id: 'commissionId',
      answer: { one: 'commission' },
    },
    /** Moves the affiliate's (and link's) earnings and signups in the same transaction. */
    create: { method: 'POST', path: '/commissions', message: 'Commission created successfully', answer: { one: 'commission' } },
    /** Changes only the fields given; status moves follow the state machine (422 otherwise). */
    update: {
      method: 'PUT',
      path: '/commissions',
      message: 'Commission updated successfully',
      id: 'commissionId',
      answer: { one: 'commission' },
    },
    /** Refused (422) for money history: a `paid` commission, one in a payout, a clawback, one refunded after payment. */
    delete: { method: 'DELETE', path: '/commissions', message: 'Commission deleted successfully', id: 'commissionId', answer: 'deleted' },
    /** Refunds `amount` (default: what is left). Unpaid: the amount goes down (and it leaves a pending payout). Paid, or in a payout being paid: `refundedAmount` goes up and a clawback nets the refund into the next payout. `dryRun`: what would happen, and no write. */
    refund: {
      method: 'POST',
      path: '/commissions/refund',
      message: 'Commission refunded successfully',
      status: 200,
      id: 'commissionId',
      answer: { one: 'commission' },
      preview: { field: 'dryRun', answer: { one: 'refundPreview' }, answerHas: 'payoutChange' },
    },
    /** Held commissions (`hold`, flagged by the fraud rules) become `pending`: payable once due. All or none; `commission.released` each. */
    release: {
      method: 'POST',
      path: '/commissions/release',
      message: 'Commissions released successfully',
      status: 200,
      answer: { items: 'commission' },
    },
    /** Held commissions become `voided`: they earn nothing and are kept for history. All or none; `commission.voided` each. */
    void: {
      method: 'POST',
      path: '/commissions/void',
      message: 'Commissions voided successfully',
      status: 200,
      answer: { items: 'commission' },
    },
  },
  referredUsers: {
    list: {
      method: 'GET',
      path: '/referred-users/list',
      message: 'Referred users retrieved successfully',
      answer: { page: 'referredUser' },
    },
    /** The newest record for this e-mail. */
    get: {
      method: 'GET',
      path: '/referred-users',
      message: 'Referred user retrieved successfully',
      id: 'referredUser',
      answer: { one: 'referredUser' },
    },
    create: { method: 'POST', path: '/referred-users', message: 'Referred user created successfully', answer: { one: 'referredUser' } },
    update: {
      method: 'PUT',
      path: '/referred-users',
      message: 'Referred user updated successfully',
      id: 'commissionId',
      answer: { one: 'referredUser' },
    },
    delete: {
      method: 'DELETE',
      path: '/referred-users',
      message: 'Referred user deleted successfully',
      id: 'commissionId',
      answer: 'deleted',
    },
  },
  payouts: {
    /** Groups due commissions (`pending`, `dueAt <= asOf`, in no payout) into one payout per affiliate and campaign; `dryRun` shows the result and writes nothing. */
    run: {
      method: 'POST',
      path: '/payouts/run',
      message: 'Payout run completed successfully',
      statusIf: { field: 'dryRun', status: 200 },
      answer: { one: 'payoutRun' },
    },
    list: { method: 'GET', path: '/payouts/list', message: 'Payouts retrieved successfully', answer: { page: 'payout' } },
    get: { method: 'GET', path: '/payouts', message: 'Payout retrieved successfully', id: 'payoutId', answer: { one: 'payout' } },
    /** Moves a payout and its commissions: `paid` pays them, `failed` and `canceled` release them. */
    update: { method: 'PUT', path: '/payouts', message: 'Payout updated successfully', id: 'payoutId', answer: { one: 'payout' } },
    /** The payouts chosen (`status` default `pending`) as a CSV file: `csv`, `paypal` or `wise`; `body` streams it. */
    export: { method: 'GET', path: '/payouts/export', message: 'Payouts exported successfully', answer: 'csv' },
    /** The commissions in a payout, oldest first. */
    items: {
      method: 'GET',
      path: '/payouts/items',
      message: 'Payout items retrieved successfully',
      id: 'payoutId',
      answer: { page: 'commission' },
    },
  },
  webhooks: {
    /** Answers the webhook with its `secret` (`whsec_...`), shown in this answer only. */
    create: { method: 'POST', path: '/webhooks', message: 'Webhook created successfully', answer: { one: 'webhookWithSecret' } },
    list: { method: 'GET', path: '/webhooks/list', message: 'Webhooks retrieved successfully', answer: { page: 'webhook' } },
    get: { method: 'GET', path: '/webhooks', message: 'Webhook retrieved successfully', id: 'webhookId', answer: { one: 'webhook' } },
    update: { method: 'PUT', path: '/webhooks', message: 'Webhook updated successfully', id: 'webhookId', answer: { one: 'webhook' } },
    delete: { method: 'DELETE', path: '/webhooks', message: 'Webhook deleted successfully', id: 'webhookId', answer: 'deleted' },
    /** A new secret, shown once; the previous ones also sign until their overlap (`overlapHours`, default 24) ends. */
    rotateSecret: {
      method: 'POST',
      path: '/webhooks/rotate-secret',
      message: 'Webhook secret rotated successfully',
      status: 200,
      id: 'webhookId',
      answer: { one: 'webhookWithSecret' },
    },
    /** Queues a `webhook.test` event for this webhook alone; answers its delivery. */
    test: {
      method: 'POST',
      path: '/webhooks/test',
      message: 'Webhook test queued successfully',
      id: 'webhookId',
      answer: { one: 'delivery' },
    },
    deliveries: {
      method: 'GET',
      path: '/webhooks/deliveries',
      message: 'Webhook deliveries retrieved successfully',
      answer: { page: 'delivery' },
    },
    /** Makes a delivery due now. */
    retryDelivery: {
      method: 'POST',
      path: '/webhooks/deliveries/retry',
      message: 'Webhook delivery scheduled successfully',
      status: 200,
      id: 'deliveryId',
      answer: { one: 'delivery' },
    },
  },
  events: {
    /** Events oldest first (commit order), after the event `after`, of `type`; at most `limit` (≤ 100). */
    list: { method: 'GET', path: '/events/list', message: 'Events retrieved successfully', answer: { one: 'eventPage' } },
    get: { method: 'GET', path: '/events', message: 'Event retrieved successfully', id: 'eventId', answer: { one: 'event' } },
  },
  reports: {
    /** Opens, clicks, signups, conversion rate, commissions (and by status), clawbacks, paid out, over `[from, to)`. */
    summary: {
      method: 'GET',
      path: '/reports/summary',
      message: 'Report summary retrieved successfully',
      answer: { one: 'reportSummary' },
    },
    /** The same per `interval` (default `day`) in `timezone` (default `UTC`), empty buckets included. */
    timeseries: {
      method: 'GET',
      path: '/reports/timeseries',
      message: 'Report time series retrieved successfully',
      answer: { one: 'reportTimeseries' },
    },
    /** The affiliates with any figure in the period, best first `by` (default `earnings`). */
    topAffiliates: {
      method: 'GET',
      path: '/reports/top-affiliates',
      message: 'Top affiliates retrieved successfully',
      answer: { one: 'topAffiliates' },
    },
  },
  exports: {
    /** Every commission record the list filters match, as a CSV file read a page at a time. */
    commissions: { method: 'GET', path: '/exports/commissions', message: 'Commissions exported successfully', answer: 'csv' },
    /** Every affiliate the list filters match, as a CSV file read a page at a time. */
    affiliates: { method: 'GET', path: '/exports/affiliates', message: 'Affiliates exported successfully', answer: 'csv' },
  },
  customers: {
    list: { method: 'GET', path: '/customers/list', message: 'Customers retrieved successfully', answer: { page: 'customer' } },
    get: { method: 'GET', path: '/customers', message: 'Customer retrieved successfully', id: 'customerId', answer: { one: 'customer' } },
    /** Changes its e-mail or name, or moves it to another affiliate (its future sales only). */
    update: { method: 'PUT', path: '/customers', message: 'Customer updated successfully', id: 'customerId', answer: { one: 'customer' } },
    /** Forgets the person (erases e-mail and name; `externalId` becomes the customer id) and keeps every commission. */
    delete: { method: 'DELETE', path: '/customers', message: 'Customer deleted successfully', id: 'customerId', answer: 'deleted' },
  },
  conversions: {
    /** Makes the customer, bound to the affiliate the click, code or affiliate id names; a known `externalId` answers it unchanged (200). */
    lead: {
      method: 'POST',
      path: '/conversions/lead',
      message: 'Lead recorded successfully',
      alternativeStatus: { status: 200, description: 'The externalId is already known: the customer, unchanged' },
      answer: { one: 'customer' },
    },
    /** Makes the sale's commission by the campaign's rules, or says why none was made (`skipped`, 200); a repeated `invoiceId` answers the first answer. */
    sale: {
      method: 'POST',
      path: '/conversions/sale',
      message: 'Sale recorded successfully',
      alternativeStatus: {
        status: 200,
        description: 'No commission was made (`skipped` says why), or the invoiceId was seen before: the first answer again',
      },
      answer: { one: 'saleResult' },
    },
    /** Takes back the commission's share of a refunded sale (a clawback when it was paid); a repeated `refundId` answers the first answer. */
    refund: {
      method: 'POST',
      path: '/conversions/refund',
      message: 'Refund recorded successfully',
      status: 200,
      answer: { one: 'saleRefundResult' },
    },
  },
  integrations: {
    /** Connects a payment provider (Stripe); the answer names the endpoint to give it and never the signing secret. */
    create: { method: 'POST', path: '/integrations', message: 'Integration created successfully', answer: { one: 'integration' } },
    list: { method: 'GET', path: '/integrations/list', message: 'Integrations retrieved successfully', answer: { page: 'integration' } },
    get: {
      method: 'GET',
      path: '/integrations',
      message: 'Integration retrieved successfully',
      id: 'integrationId',
      answer: { one: 'integration' },
    },
    /** Changes the campaign, livemode or description, or replaces the signing secret. */
    update: {
      method: 'PUT',
      path: '/integrations',
      message: 'Integration updated successfully',
      id: 'integrationId',
      answer: { one: 'integration' },
    },
    /** Disconnects the provider and deletes its event log; what its events made stays. */
    delete: {
      method: 'DELETE',
      path: '/integrations',
      message: 'Integration deleted successfully',
      id: 'integrationId',
      answer: 'deleted',
    },
    /** The events the provider sent, by integration and status: processed, ignored or failed, and why. */
    events: {
      method: 'GET',
      path: '/integrations/events/list',
      message: 'Integration events retrieved successfully',
      answer: { page: 'providerEvent' },
    },
  },
  promoCodes: {
    /** Gives an affiliate a code (any case, kept upper-case, unique in the workspace); with the workspace's Stripe key and the campaign's `stripeCouponId`, makes its Stripe promotion code. */
    create: { method: 'POST', path: '/promo-codes', message: 'Promo code created successfully', answer: { one: 'promoCode' } },
    list: { method: 'GET', path: '/promo-codes/list', message: 'Promo codes retrieved successfully', answer: { page: 'promoCode' } },
    get: {
      method: 'GET',
      path: '/promo-codes',
      message: 'Promo code retrieved successfully',
      id: 'promoCodeId',
      answer: { one: 'promoCode' },
    },
    /** Deletes the code and deactivates its Stripe promotion code (when the workspace's Stripe key reaches it); its customers stay attributed. */
    delete: { method: 'DELETE', path: '/promo-codes', message: 'Promo code deleted successfully', id: 'promoCodeId', answer: 'deleted' },
  },
} as const satisfies Record<string, Record<string, RouteInfo>>

export type RouteTable = typeof routeTable
export type Namespace = keyof RouteTable

/** Every route of the table with where its operation lives: `[namespace, name, route]`. */
export const routeEntries = (): [Namespace, string, RouteInfo][] =>
  Object.entries(routeTable).flatMap(([namespace, verbs]) =>
    Object.entries(verbs as Record<string, RouteInfo>).map(
      ([name, route]) => [namespace as Namespace, name, route] as [Namespace, string, RouteInfo],
    ),
  )

/** The query and body one call of the typed API (or the client) stands for: see `RouteInfo`. */
export function requestOf(route: RouteInfo, args: readonly unknown[]): { query: Record<string, unknown>; body: unknown } {
  const [first, second] = args
  const rest = (second ?? {}) as Record<string, unknown>
  if (route.method === 'POST') return { query: {}, body: route.id ? { ...rest, [route.id]: first } : first }
  if (route.method === 'PUT') return { query: { [route.id!]: first }, body: second }
  return { query: route.id ? { ...rest, [route.id]: first } : ((first ?? {}) as Record<string, unknown>), body: undefined }
}

/**
 * An object shaped like the route table, `namespace.name(...args)` calling `call` with its route:
 * the typed API and the HTTP client are both made by it. `Api` is the type computed from the table
 * (`ResourceApi`); this is the one place where the table's runtime shape meets that type.
 */
export function apiOf<Api>(call: (route: RouteInfo, operation: readonly [Namespace, string], args: unknown[]) => Promise<unknown>): Api {
  const api: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {}
  for (const [namespace, name, route] of routeEntries()) {
    ;(api[namespace] ??= {})[name] = (...args) => call(route, [namespace, name], args)
  }
  return api as Api
}
