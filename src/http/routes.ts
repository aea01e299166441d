import type { Access } from '../api/access.js'
import type { Operations } from '../api/index.js'
import { affiliateCreate, affiliateId, affiliateList, affiliateUpdate } from '../schemas/affiliates.js'
import { campaignCreate, campaignId, campaignList, campaignUpdate } from '../schemas/campaigns.js'
import {
  commissionCreate,
  commissionId,
  commissionList,
  commissionRefund,
  commissionReview,
  commissionUpdate,
  referredUserCreate,
  referredUserEmail,
  referredUserList,
  referredUserUpdate,
} from '../schemas/commissions.js'
import { linkAffiliate, linkCreate, linkId, linkTrackBatch, linkTrackKeyed } from '../schemas/links.js'
import { payoutExport, payoutId, payoutItems, payoutList, payoutRun, payoutUpdate } from '../schemas/payouts.js'
import { affiliateExport, commissionExport, reportSummary, reportTimeseries, reportTopAffiliates } from '../schemas/reports.js'
import type { Schema } from '../schemas/validate.js'
import { routeEntries, type Namespace, type RouteInfo, type RouteTable } from './route-table.js'
import { customerId, customerList, customerUpdate } from '../schemas/customers.js'
import { conversionLead, conversionRefund, conversionSale } from '../schemas/conversions.js'
import { integrationCreate, integrationId, integrationList, integrationUpdate, providerEventList } from '../schemas/integrations.js'
import { promoCodeCreate, promoCodeId, promoCodeList } from '../schemas/promo-codes.js'
import {
  deliveryList,
  deliveryRetry,
  eventId,
  eventList,
  webhookCreate,
  webhookId,
  webhookList,
  webhookRotate,
  webhookTest,
  webhookUpdate,
} from '../schemas/webhooks.js'

export { requestOf, routeTable, type Answer, type Method, type Model, type Namespace, type RouteInfo } from './route-table.js'

/** The query string as name -> value; a name given more than once -> every value, in order. */
export type Query = Record<string, string | string[]>

export interface Call {
  access: Access
  query: Query
  body: Record<string, unknown> | undefined
}

/** How a route's request is validated, and an example body for the OpenAPI document. */
export interface Validation {
  /** The query as the operation validates it. */
  readonly query?: Schema<any>
  /** The body as the operation validates it (POST and PUT). */
  readonly body?: Schema<any>
  /** Another body the operation takes instead (a batch), told apart by its fields. */
  readonly alternativeBody?: Schema<any>
  /** A body to show in the OpenAPI document. */
  readonly example?: Record<string, unknown>
}

/**
 * One route, described once: its metadata (`route-table.ts`) and its validation here. The HTTP
 * handler, the typed API (`service.api`), the HTTP client and `openapi.json` are all made from
 * the table, so none of them can leave the others behind.
 */
export interface Route extends RouteInfo, Validation {
  /** Where the operation lives: `service.api[namespace][name]`, `client[namespace][name]`. */
  readonly operation: readonly [Namespace, string]
}

const WORKSPACE = '3f9a1c2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b'
const CAMPAIGN = '8d6f4b2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d'
const AFFILIATE = '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c'
const COMMISSION = '7c1e9a4d-2b3f-4c5d-8e6f-0a1b2c3d4e5f'
const WEBHOOK = '2a7b9c1d-3e4f-4a5b-9c6d-7e8f9a0b1c2d'
const DELIVERY = '9b8a7c6d-5e4f-4d3c-8b2a-1f0e9d8c7b6a'

/** Each route's validation, keyed as the route table is: a route missing here fails to compile. */
export const validation = {
  campaigns: {
    list: { query: campaignList },
    get: { query: campaignId },
    create: {
      body: campaignCreate,
      example: {
        campaignName: 'Spring launch',
        workspaceId: WORKSPACE,
        commissionType: 'percentage',
        amount: 20,
        url: 'https://shop.example.com/',
      },
    },
    update: { query: campaignId, body: campaignUpdate },
    delete: { query: campaignId },
  },
  affiliates: {
    list: { query: affiliateList },
    get: { query: affiliateId },
    create: { body: affiliateCreate, example: { email: 'ann@example.com', campaignId: CAMPAIGN, firstName: 'Ann' } },
    update: { query: affiliateId, body: affiliateUpdate },
    delete: { query: affiliateId },
    balance: { query: affiliateId },
  },
  links: {
    list: { query: linkAffiliate },
    create: { body: linkCreate, example: { affiliateId: AFFILIATE, urlParameter: 'ref' } },
    delete: { query: linkId },
    track: { body: linkTrackKeyed, alternativeBody: linkTrackBatch, example: { referralCode: 'REF-7K2M9QXD', event: 'click' } },
  },
  commissions: {
    list: { query: commissionList },
    get: { query: commissionId },
    create: {
      body: commissionCreate,
      example: { campaignId: CAMPAIGN, affiliateId: AFFILIATE, amount: 49.5, referredUser: 'buyer@example.com' },
    },
    update: { query: commissionId, body: commissionUpdate },
    delete: { query: commissionId },
    refund: { body: commissionRefund, example: { commissionId: COMMISSION, amount: '10.00' } },
    release: { body: commissionReview, example: { commissionIds: [COMMISSION] } },
    void: { body: commissionReview, example: { commissionIds: [COMMISSION] } },
  },
  referredUsers: {
    list: { query: referredUserList },
    get: { query: referredUserEmail },
    create: { body: referredUserCreate, example: { referredTo: 'friend@example.com', affiliateId: AFFILIATE } },
    update: { query: commissionId, body: referredUserUpdate },
    delete: { query: commissionId },
  },
  payouts: {
    run: { body: payoutRun, example: { workspaceId: WORKSPACE, dryRun: true } },
    list: { query: payoutList },
    get: { query: payoutId },
    update: { query: payoutId, body: payoutUpdate },
    export: { query: payoutExport },
    items: { query: payoutItems },
  },
  webhooks: {
    create: {
      body: webhookCreate,
      example: {
        workspaceId: WORKSPACE,
        url: 'https://hooks.example.com/affiliates',
        events: ['commission.created', 'commission.refunded'],
      },
    },
    list: { query: webhookList },
    get: { query: webhookId },
    update: { query: webhookId, body: webhookUpdate },
    delete: { query: webhookId },
    rotateSecret: { body: webhookRotate, example: { webhookId: WEBHOOK, overlapHours: 24 } },
    test: { body: webhookTest, example: { webhookId: WEBHOOK } },
    deliveries: { query: deliveryList },
    retryDelivery: { body: deliveryRetry, example: { deliveryId: DELIVERY } },
  },
  events: {
    list: { query: eventList },
    get: { query: eventId },
  },
  reports: {
    summary: { query: reportSummary },
    timeseries: { query: reportTimeseries },
    topAffiliates: { query: reportTopAffiliates },
  },
  exports: {
    commissions: { query: commissionExport },
    affiliates: { query: affiliateExport },
  },
  customers: {
    list: { query: customerList },
    get: { query: customerId },
    update: { query: customerId, body: customerUpdate },
    delete: { query: customerId },
  },
  conversions: {
    lead: {
      body: conversionLead,
      example: { workspaceId: WORKSPACE, externalId: 'user_8812', email: 'buyer@example.com', affiliateId: AFFILIATE },
    },
    sale: {
      body: conversionSale,
      example: { workspaceId: WORKSPACE, externalId: 'user_8812', amount: '49.00', currency: 'USD', invoiceId: 'in_1PqR2s' },
    },
    refund: { body: conversionRefund, example: { workspaceId: WORKSPACE, invoiceId: 'in_1PqR2s', amount: '10.00', refundId: 're_3Kx9' } },
  },
  integrations: {
    create: {
      body: integrationCreate,
      example: { workspaceId: WORKSPACE, provider: 'stripe', signingSecret: 'whsec_5d2c8a1f', livemode: true },
    },
    list: { query: integrationList },
    get: { query: integrationId },
    update: { query: integrationId, body: integrationUpdate },
    delete: { query: integrationId },
    events: { query: providerEventList },
  },
  promoCodes: {
    create: { body: promoCodeCreate, example: { affiliateId: AFFILIATE, code: 'ALICE20' } },
    list: { query: promoCodeList },
    get: { query: promoCodeId },
    delete: { query: promoCodeId },
  },
} as const satisfies { readonly [N in Namespace]: { readonly [M in keyof RouteTable[N]]: Validation } }

export type Validations = typeof validation

/** Every keyed route under `basePath`. */
export const routes: readonly Route[] = routeEntries().map(([namespace, name, info]) => ({
  ...info,
  ...(validation[namespace] as Record<string, Validation>)[name],
  operation: [namespace, name] as const,
}))

/** The status a route answers on success: `statusIf`'s when the body asks for it, else `status`, else 201 for POST and 200 for the others. */
export function successStatus(route: Pick<Route, 'method' | 'status' | 'statusIf'>, body?: unknown): number {
  const alternative = route.statusIf
  if (alternative && (body as Record<string, unknown> | undefined)?.[alternative.field] === true) return alternative.status
  return route.status ?? (route.method === 'POST' ? 201 : 200)
}

/**
 * Runs a route's operation with a request's query and body, and answers what the operation
 * answered: its data, or an `Answered` with the status it chose (HTTP sends that status, the
 * typed API answers its data). POST operations take `(access, body, query)`, PUT `(access, query, body)`,
 * the others `(access, query)`.
 */
export function runRoute(route: Pick<Route, 'method' | 'operation'>, ops: Operations, call: Call): Promise<unknown> {
  const [namespace, name] = route.operation
  const target: Record<string, unknown> = ops[namespace]
  const operation = target[name]
  if (typeof operation !== 'function') throw new Error(`no operation ${namespace}.${name}`)
  // Each operation checks its own arguments (the route's schemas): here they are only passed on.
  const run = (...args: unknown[]): Promise<unknown> => operation.apply(target, args)
  if (route.method === 'POST') return run(call.access, call.body, call.query)
  if (route.method === 'PUT') return run(call.access, call.query, call.body)
  return run(call.access, call.query)
}
