import type { Access } from '../api/access.js'
import type { Operations } from '../api/index.js'
import { affiliateCreate, affiliateId, affiliateList, affiliateUpdate } from '../schemas/affiliates.js'
import { campaignCreate, campaignId, campaignList, campaignUpdate } from '../schemas/campaigns.js'
import {
  commissionCreate,
  commissionId,
  commissionList,
  commissionRefund,
  commissionUpdate,
  referredUserCreate,
  referredUserEmail,
  referredUserList,
  referredUserUpdate,
} from '../schemas/commissions.js'
import { linkAffiliate, linkCreate, linkId, linkTrack, linkTrackBatch } from '../schemas/links.js'
import { payoutExport, payoutId, payoutItems, payoutList, payoutRun, payoutUpdate } from '../schemas/payouts.js'
import { affiliateExport, commissionExport, reportSummary, reportTimeseries, reportTopAffiliates } from '../schemas/reports.js'
import type { Schema } from '../schemas/validate.js'
import { customerId, customerList, customerUpdate } from '../schemas/customers.js'
import { conversionLead, conversionRefund, conversionSale } from '../schemas/conversions.js'
import { statusChosenFor } from '../api/shared.js'
import { deliveryList, deliveryRetry, eventId, eventList, webhookCreate, webhookId, webhookList, webhookRotate, webhookTest, webhookUpdate } from '../schemas/webhooks.js'

/** The query string as name -> value; a name given more than once -> every value, in order. */
export type Query = Record<string, string | string[]>

export interface Call {
  access: Access
  query: Query
  body: Record<string, unknown> | undefined
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
export type Namespace = keyof Operations

/**
 * What a route answers in the envelope's `data`: one record, a page of them, all of them, or the
 * id deleted; or `csv`, a file streamed as it is (`{ filename, contentType, body }`), no envelope.
 */
export type Answer = { one: Model } | { page: Model } | { items: Model } | 'deleted' | 'csv'
export type Model =
  | 'campaign' | 'affiliate' | 'link' | 'linkTrack' | 'commission' | 'referredUser' | 'payout' | 'payoutRun' | 'balance'
  | 'webhook'
  | 'webhookWithSecret'
  | 'delivery'
  | 'event'
  | 'eventPage'
  | 'reportSummary' | 'reportTimeseries' | 'topAffiliates'
  | 'customer' | 'saleResult' | 'saleRefundResult'

/**
 * One route, described once. The HTTP handler, the typed API (`service.api`), the HTTP client and
 * `openapi.json` are all made from this table, so none of them can leave the others behind.
 *
 * The arguments of the typed API follow from the method: POST takes the body; GET and DELETE take
 * the value of `id` (the one query field that names the record) or, without `id`, the whole query;
 * PUT takes the `id` value and the body.
 */
export interface Route {
  method: Method
  path: string
  /** Where the operation lives: `service.api[namespace][name]`, `client[namespace][name]`. */
  operation: readonly [Namespace, string]
  /** The envelope's `message` on success, and the OpenAPI summary. */
  message: string
  /** @default 201 for POST, else 200 */
  status?: number
  /** Another success status, answered when the body's `field` is `true` (a dry run writes nothing: 200). */
  statusIf?: { field: string; status: number }
  /** Another success status the operation may choose for an answer (see `withStatus`), and when. */
  alternativeStatus?: { status: number; description: string }
  /** The query as the operation validates it. */
  query?: Schema<any>
  /** The body as the operation validates it (POST and PUT). */
  body?: Schema<any>
  /** Another body the operation takes instead (a batch), told apart by its fields. */
  alternativeBody?: Schema<any>
  /** The query field the typed API takes as its first argument. */
  id?: string
  answer: Answer
  /** A body to show in the OpenAPI document. */
  example?: Record<string, unknown>
}

const WORKSPACE = '3f9a1c2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b'
const CAMPAIGN = '8d6f4b2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d'
const AFFILIATE = '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c'
const COMMISSION = '7c1e9a4d-2b3f-4c5d-8e6f-0a1b2c3d4e5f'
const WEBHOOK = '2a7b9c1d-3e4f-4a5b-9c6d-7e8f9a0b1c2d'
const DELIVERY = '9b8a7c6d-5e4f-4d3c-8b2a-1f0e9d8c7b6a'

const route = (r: Route) => r

/** Every keyed route under `basePath`. */
export const routes: readonly Route[] = [
  route({ method: 'GET', path: '/campaigns/list', operation: ['campaigns', 'list'], message: 'Campaigns retrieved successfully', query: campaignList, answer: { page: 'campaign' } }),
  route({ method: 'GET', path: '/campaigns', operation: ['campaigns', 'get'], message: 'Campaign retrieved successfully', query: campaignId, id: 'campaignId', answer: { one: 'campaign' } }),
  route({ method: 'POST', path: '/campaigns', operation: ['campaigns', 'create'], message: 'Campaign created successfully', body: campaignCreate, answer: { one: 'campaign' }, example: { campaignName: 'Spring launch', workspaceId: WORKSPACE, commissionType: 'percentage', amount: 20, url: 'https://shop.example.com/' } }),
  route({ method: 'PUT', path: '/campaigns', operation: ['campaigns', 'update'], message: 'Campaign updated successfully', query: campaignId, id: 'campaignId', body: campaignUpdate, answer: { one: 'campaign' } }),
  route({ method: 'DELETE', path: '/campaigns', operation: ['campaigns', 'delete'], message: 'Campaign deleted successfully', query: campaignId, id: 'campaignId', answer: 'deleted' }),

  route({ method: 'GET', path: '/affiliates/list', operation: ['affiliates', 'list'], message: 'Affiliates retrieved successfully', query: affiliateList, answer: { page: 'affiliate' } }),
  route({ method: 'GET', path: '/affiliates', operation: ['affiliates', 'get'], message: 'Affiliate retrieved successfully', query: affiliateId, id: 'affiliateId', answer: { one: 'affiliate' } }),
  route({ method: 'POST', path: '/affiliates', operation: ['affiliates', 'create'], message: 'Affiliate created successfully', body: affiliateCreate, answer: { one: 'affiliate' }, example: { email: 'ann@example.com', campaignId: CAMPAIGN, firstName: 'Ann' } }),
  route({ method: 'PUT', path: '/affiliates', operation: ['affiliates', 'update'], message: 'Affiliate updated successfully', query: affiliateId, id: 'affiliateId', body: affiliateUpdate, answer: { one: 'affiliate' } }),
  route({ method: 'DELETE', path: '/affiliates', operation: ['affiliates', 'delete'], message: 'Affiliate deleted successfully', query: affiliateId, id: 'affiliateId', answer: 'deleted' }),
  route({ method: 'GET', path: '/affiliates/balance', operation: ['affiliates', 'balance'], message: 'Affiliate balance retrieved successfully', query: affiliateId, id: 'affiliateId', answer: { one: 'balance' } }),

  route({ method: 'GET', path: '/links', operation: ['links', 'list'], message: 'Links retrieved successfully', query: linkAffiliate, id: 'affiliateId', answer: { items: 'link' } }),
  route({ method: 'POST', path: '/links', operation: ['links', 'create'], message: 'Link created successfully', body: linkCreate, answer: { one: 'link' }, example: { affiliateId: AFFILIATE, urlParameter: 'ref' } }),
  route({ method: 'DELETE', path: '/links', operation: ['links', 'delete'], message: 'Link deleted successfully', query: linkId, id: 'linkId', answer: 'deleted' }),
  route({ method: 'POST', path: '/links/track', operation: ['links', 'track'], message: 'Link event tracked successfully', status: 200, body: linkTrack, alternativeBody: linkTrackBatch, answer: { one: 'linkTrack' }, example: { referralCode: 'REF-7K2M9QXD', event: 'click' } }),

  route({ method: 'GET', path: '/commissions/list', operation: ['commissions', 'list'], message: 'Commissions retrieved successfully', query: commissionList, answer: { page: 'commission' } }),
  route({ method: 'GET', path: '/commissions', operation: ['commissions', 'get'], message: 'Commission retrieved successfully', query: commissionId, id: 'commissionId', answer: { one: 'commission' } }),
  route({ method: 'POST', path: '/commissions', operation: ['commissions', 'create'], message: 'Commission created successfully', body: commissionCreate, answer: { one: 'commission' }, example: { campaignId: CAMPAIGN, affiliateId: AFFILIATE, amount: 49.5, referredUser: 'buyer@example.com' } }),
  route({ method: 'PUT', path: '/commissions', operation: ['commissions', 'update'], message: 'Commission updated successfully', query: commissionId, id: 'commissionId', body: commissionUpdate, answer: { one: 'commission' } }),
  route({ method: 'DELETE', path: '/commissions', operation: ['commissions', 'delete'], message: 'Commission deleted successfully', query: commissionId, id: 'commissionId', answer: 'deleted' }),
  route({ method: 'POST', path: '/commissions/refund', operation: ['commissions', 'refund'], message: 'Commission refunded successfully', status: 200, body: commissionRefund, answer: { one: 'commission' }, example: { commissionId: COMMISSION, amount: '10.00' } }),

  route({ method: 'GET', path: '/referred-users/list', operation: ['referredUsers', 'list'], message: 'Referred users retrieved successfully', query: referredUserList, answer: { page: 'referredUser' } }),
  route({ method: 'GET', path: '/referred-users', operation: ['referredUsers', 'get'], message: 'Referred user retrieved successfully', query: referredUserEmail, id: 'referredUser', answer: { one: 'referredUser' } }),
  route({ method: 'POST', path: '/referred-users', operation: ['referredUsers', 'create'], message: 'Referred user created successfully', body: referredUserCreate, answer: { one: 'referredUser' }, example: { referredTo: 'friend@example.com', affiliateId: AFFILIATE } }),
  route({ method: 'PUT', path: '/referred-users', operation: ['referredUsers', 'update'], message: 'Referred user updated successfully', query: commissionId, id: 'commissionId', body: referredUserUpdate, answer: { one: 'referredUser' } }),
  route({ method: 'DELETE', path: '/referred-users', operation: ['referredUsers', 'delete'], message: 'Referred user deleted successfully', query: commissionId, id: 'commissionId', answer: 'deleted' }),

  route({ method: 'POST', path: '/payouts/run', operation: ['payouts', 'run'], message: 'Payout run completed successfully', statusIf: { field: 'dryRun', status: 200 }, body: payoutRun, answer: { one: 'payoutRun' }, example: { workspaceId: WORKSPACE, dryRun: true } }),
  route({ method: 'GET', path: '/payouts/list', operation: ['payouts', 'list'], message: 'Payouts retrieved successfully', query: payoutList, answer: { page: 'payout' } }),
  route({ method: 'GET', path: '/payouts', operation: ['payouts', 'get'], message: 'Payout retrieved successfully', query: payoutId, id: 'payoutId', answer: { one: 'payout' } }),
  route({ method: 'PUT', path: '/payouts', operation: ['payouts', 'update'], message: 'Payout updated successfully', query: payoutId, id: 'payoutId', body: payoutUpdate, answer: { one: 'payout' } }),
  route({ method: 'GET', path: '/payouts/export', operation: ['payouts', 'export'], message: 'Payouts exported successfully', query: payoutExport, answer: 'csv' }),
  route({ method: 'GET', path: '/payouts/items', operation: ['payouts', 'items'], message: 'Payout items retrieved successfully', query: payoutItems, answer: { page: 'commission' } }),

  route({ method: 'POST', path: '/webhooks', operation: ['webhooks', 'create'], message: 'Webhook created successfully', body: webhookCreate, answer: { one: 'webhookWithSecret' }, example: { workspaceId: WORKSPACE, url: 'https://hooks.example.com/affiliates', events: ['commission.created', 'commission.refunded'] } }),
  route({ method: 'GET', path: '/webhooks/list', operation: ['webhooks', 'list'], message: 'Webhooks retrieved successfully', query: webhookList, answer: { page: 'webhook' } }),
  route({ method: 'GET', path: '/webhooks', operation: ['webhooks', 'get'], message: 'Webhook retrieved successfully', query: webhookId, id: 'webhookId', answer: { one: 'webhook' } }),
  route({ method: 'PUT', path: '/webhooks', operation: ['webhooks', 'update'], message: 'Webhook updated successfully', query: webhookId, id: 'webhookId', body: webhookUpdate, answer: { one: 'webhook' } }),
  route({ method: 'DELETE', path: '/webhooks', operation: ['webhooks', 'delete'], message: 'Webhook deleted successfully', query: webhookId, id: 'webhookId', answer: 'deleted' }),
  route({ method: 'POST', path: '/webhooks/rotate-secret', operation: ['webhooks', 'rotateSecret'], message: 'Webhook secret rotated successfully', status: 200, body: webhookRotate, answer: { one: 'webhookWithSecret' }, example: { webhookId: WEBHOOK, overlapHours: 24 } }),
  route({ method: 'POST', path: '/webhooks/test', operation: ['webhooks', 'test'], message: 'Webhook test queued successfully', body: webhookTest, answer: { one: 'delivery' }, example: { webhookId: WEBHOOK } }),
  route({ method: 'GET', path: '/webhooks/deliveries', operation: ['webhooks', 'deliveries'], message: 'Webhook deliveries retrieved successfully', query: deliveryList, answer: { page: 'delivery' } }),
  route({ method: 'POST', path: '/webhooks/deliveries/retry', operation: ['webhooks', 'retryDelivery'], message: 'Webhook delivery scheduled successfully', status: 200, body: deliveryRetry, answer: { one: 'delivery' }, example: { deliveryId: DELIVERY } }),

  route({ method: 'GET', path: '/events/list', operation: ['events', 'list'], message: 'Events retrieved successfully', query: eventList, answer: { one: 'eventPage' } }),
  route({ method: 'GET', path: '/events', operation: ['events', 'get'], message: 'Event retrieved successfully', query: eventId, id: 'eventId', answer: { one: 'event' } }),
  route({ method: 'GET', path: '/reports/summary', operation: ['reports', 'summary'], message: 'Report summary retrieved successfully', query: reportSummary, answer: { one: 'reportSummary' } }),
  route({ method: 'GET', path: '/reports/timeseries', operation: ['reports', 'timeseries'], message: 'Report time series retrieved successfully', query: reportTimeseries, answer: { one: 'reportTimeseries' } }),
  route({ method: 'GET', path: '/reports/top-affiliates', operation: ['reports', 'topAffiliates'], message: 'Top affiliates retrieved successfully', query: reportTopAffiliates, answer: { one: 'topAffiliates' } }),
  route({ method: 'GET', path: '/exports/commissions', operation: ['exports', 'commissions'], message: 'Commissions exported successfully', query: commissionExport, answer: 'csv' }),
  route({ method: 'GET', path: '/exports/affiliates', operation: ['exports', 'affiliates'], message: 'Affiliates exported successfully', query: affiliateExport, answer: 'csv' }),

  route({ method: 'POST', path: '/conversions/lead', operation: ['conversions', 'lead'], message: 'Lead recorded successfully', alternativeStatus: { status: 200, description: 'The externalId is already known: the customer, unchanged' }, body: conversionLead, answer: { one: 'customer' }, example: { workspaceId: WORKSPACE, externalId: 'user_8812', email: 'buyer@example.com', affiliateId: AFFILIATE } }),
  route({ method: 'POST', path: '/conversions/sale', operation: ['conversions', 'sale'], message: 'Sale recorded successfully', alternativeStatus: { status: 200, description: 'No commission was made (`skipped` says why), or the invoiceId was seen before: the first answer again' }, body: conversionSale, answer: { one: 'saleResult' }, example: { workspaceId: WORKSPACE, externalId: 'user_8812', amount: '49.00', currency: 'USD', invoiceId: 'in_1PqR2s' } }),
  route({ method: 'POST', path: '/conversions/refund', operation: ['conversions', 'refund'], message: 'Refund recorded successfully', status: 200, body: conversionRefund, answer: { one: 'saleRefundResult' }, example: { workspaceId: WORKSPACE, invoiceId: 'in_1PqR2s', amount: '10.00', refundId: 're_3Kx9' } }),
  route({ method: 'GET', path: '/customers/list', operation: ['customers', 'list'], message: 'Customers retrieved successfully', query: customerList, answer: { page: 'customer' } }),
  route({ method: 'GET', path: '/customers', operation: ['customers', 'get'], message: 'Customer retrieved successfully', query: customerId, id: 'customerId', answer: { one: 'customer' } }),
  route({ method: 'PUT', path: '/customers', operation: ['customers', 'update'], message: 'Customer updated successfully', query: customerId, id: 'customerId', body: customerUpdate, answer: { one: 'customer' } }),
  route({ method: 'DELETE', path: '/customers', operation: ['customers', 'delete'], message: 'Customer deleted successfully', query: customerId, id: 'customerId', answer: 'deleted' }),
]

/** The status a route answers on success: `statusIf`'s when the body asks for it, else `status`, else 201 for POST and 200 for the others. */
export function successStatus(route: Route, body?: unknown, answer?: unknown): number {
  const chosen = route.alternativeStatus ? statusChosenFor(answer) : undefined
  if (chosen !== undefined) return chosen
  const alternative = route.statusIf
  if (alternative && (body as Record<string, unknown> | undefined)?.[alternative.field] === true) return alternative.status
  return route.status ?? (route.method === 'POST' ? 201 : 200)
}

type Operation = (access: Access, ...args: unknown[]) => Promise<unknown>

/**
 * Runs a route's operation with a request's query and body. POST operations take
 * `(access, body, query)`, PUT `(access, query, body)`, the others `(access, query)`.
 */
export function runRoute(route: Route, ops: Operations, call: Call): Promise<unknown> {
  const [namespace, name] = route.operation
  const target = ops[namespace] as unknown as Record<string, Operation>
  if (route.method === 'POST') return target[name]!(call.access, call.body, call.query)
  if (route.method === 'PUT') return target[name]!(call.access, call.query, call.body)
  return target[name]!(call.access, call.query)
}

/** The query and body a call of the typed API (or the client) stands for: see `Route`. */
export function requestOf(route: Route, args: readonly unknown[]): { query: Record<string, unknown>; body: unknown } {
  const [first, second] = args
  switch (route.method) {
    case 'POST':
      return { query: {}, body: first }
    case 'PUT':
      return { query: { [route.id!]: first }, body: second }
    default:
      return { query: route.id ? { [route.id]: first } : ((first ?? {}) as Record<string, unknown>), body: undefined }
  }
}
