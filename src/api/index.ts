import type { Affiliate } from '../domain/affiliate.js'
import type { Campaign } from '../domain/campaign.js'
import type { Commission, ReferredUser } from '../domain/commission.js'
import type { ReferralLink } from '../domain/link.js'
import type { AffiliateBalance, Payout, PayoutRunResult } from '../domain/payout.js'
import type { Principal } from '../keys/types.js'
import type { Access } from './access.js'
import { affiliateOperations, type AffiliateCreateInput, type AffiliateListQuery, type AffiliateUpdateInput } from './affiliates.js'
import { campaignOperations, type CampaignCreateInput, type CampaignListQuery, type CampaignUpdateInput } from './campaigns.js'
import {
  commissionOperations,
  type CommissionCreateInput,
  type CommissionListQuery,
  type CommissionRefundInput,
  type CommissionUpdateInput,
} from './commissions.js'
import { linkOperations, type LinkCreateInput, type LinkTrackBatch, type LinkTrackBatchInput, type LinkTrackInput } from './links.js'
import { payoutExportOperation, type PayoutExport, type PayoutExportQuery } from './payout-export.js'
import { payoutOperations, type PayoutItemsQuery, type PayoutListQuery, type PayoutRunInput, type PayoutUpdateInput } from './payouts.js'
import {
  referredUserOperations,
  type ReferredUserCreateInput,
  type ReferredUserListQuery,
  type ReferredUserUpdateInput,
} from './referred-users.js'
import type { Deps, Page } from './shared.js'
import { customerOperations, type CustomerListQuery, type CustomerUpdateInput } from './customers.js'
import { conversionOperations, type ConversionLeadInput, type ConversionRefundInput, type ConversionSaleInput } from './conversions.js'
import type { Customer, SaleRefundResult, SaleResult } from '../domain/customer.js'
import { eventOperations, type EventListQuery, type EventPage } from './events.js'
import {
  webhookOperations,
  type DeliveryListQuery,
  type DeliveryRetryInput,
  type WebhookCreateInput,
  type WebhookListQuery,
  type WebhookRotateInput,
  type WebhookTestInput,
  type WebhookUpdateInput,
} from './webhooks.js'
import type { Webhook, WebhookDelivery, WebhookWithSecret } from '../domain/webhook.js'
import type { AffiliateEvent } from '../events/types.js'
import { exportOperations, type AffiliateExportQuery, type CommissionExportQuery, type CsvExport } from './exports.js'
import {
  reportOperations,
  type ReportSummary,
  type ReportSummaryQuery,
  type ReportTimeseries,
  type ReportTimeseriesQuery,
  type ReportTopAffiliates,
  type ReportTopAffiliatesQuery,
} from './reports.js'

export type Operations = ReturnType<typeof createOperations>

/** Every operation, each taking the caller's access first; HTTP and the typed API both call these. */
export const createOperations = (deps: Deps) => ({
  campaigns: campaignOperations(deps),
  affiliates: affiliateOperations(deps),
  links: linkOperations(deps),
  commissions: commissionOperations(deps),
  referredUsers: referredUserOperations(deps),
  payouts: { ...payoutOperations(deps), export: payoutExportOperation(deps) },
  webhooks: webhookOperations(deps),
  events: eventOperations(deps),
  reports: reportOperations(deps),
  exports: exportOperations(deps),
  customers: customerOperations(deps),
  conversions: conversionOperations(deps),
})

export interface CampaignsApi {
  /** Creates a campaign. Making it `isDefault` clears the workspace's previous default. */
  create(input: CampaignCreateInput): Promise<Campaign>
  get(campaignId: string): Promise<Campaign>
  /** Changes only the fields given. A new `url` rebuilds the `url` of every link of the campaign. */
  update(campaignId: string, changes: CampaignUpdateInput): Promise<Campaign>
  /** Refused (422) while the campaign has affiliates. */
  delete(campaignId: string): Promise<{ id: string }>
  list(query?: CampaignListQuery): Promise<Page<Campaign>>
}

export interface AffiliatesApi {
  create(input: AffiliateCreateInput): Promise<Affiliate>
  get(affiliateId: string): Promise<Affiliate>
  /** Changes only the fields given. */
  update(affiliateId: string, changes: AffiliateUpdateInput): Promise<Affiliate>
  /** Refused (422) while the affiliate has commissions or payouts; deletes its links. */
  delete(affiliateId: string): Promise<{ id: string }>
  list(query?: AffiliateListQuery): Promise<Page<Affiliate>>
  /** Where its money stands now: held (not yet due), due, in payouts not yet paid, paid out. */
  balance(affiliateId: string): Promise<AffiliateBalance>
}

export interface LinksApi {
  /** Creates a link; the code is generated (`REF-XXXXXXXX`) unless `referralCode` is given. */
  create(input: LinkCreateInput): Promise<ReferralLink>
  /** Every link of the affiliate, newest first. */
  list(affiliateId: string): Promise<{ items: ReferralLink[] }>
  delete(linkId: string): Promise<{ id: string }>
  /** Counts an open or a click on the link and its affiliate. */
  track(input: LinkTrackInput): Promise<ReferralLink>
  /** Counts up to 1,000 opens and clicks in one transaction (all or none). */
  track(input: LinkTrackBatchInput): Promise<LinkTrackBatch>
}

export interface CommissionsApi {
  /** Moves the affiliate's (and link's) earnings and signups in the same transaction. */
  create(input: CommissionCreateInput): Promise<Commission>
  get(commissionId: string): Promise<Commission>
  /**
   * Changes only the fields given; status moves follow the state machine (422 otherwise). While the
   * affiliate is banned, the amount cannot go up and the status cannot move to `processing` or `paid` (422).
   */
  update(commissionId: string, changes: CommissionUpdateInput): Promise<Commission>
  /** Refused (422) for a `paid` commission, one in a payout and a clawback: money history is kept. */
  delete(commissionId: string): Promise<{ id: string }>
  list(query?: CommissionListQuery): Promise<Page<Commission>>
  /**
   * Refunds `amount` (default: what is left). Unpaid: the amount goes down (and it leaves its
   * payout). Paid: `refundedAmount` goes up and a clawback nets the refund into the next payout.
   */
  refund(input: CommissionRefundInput): Promise<Commission>
}

export interface ReferredUsersApi {
  create(input: ReferredUserCreateInput): Promise<ReferredUser>
  /** The newest record for this e-mail. */
  get(referredUser: string): Promise<ReferredUser>
  /** The same rules as `commissions.update`. */
  update(commissionId: string, changes: ReferredUserUpdateInput): Promise<ReferredUser>
  /** Refused (422) for a `paid` record, as `commissions.delete`. */
  delete(commissionId: string): Promise<{ id: string }>
  list(query?: ReferredUserListQuery): Promise<Page<ReferredUser>>
}

export interface PayoutsApi {
  /**
   * Groups due commissions (`pending`, `dueAt <= asOf`, in no payout) into one payout per affiliate
   * and campaign; `dryRun` shows the result and writes nothing.
   */
  run(input: PayoutRunInput): Promise<PayoutRunResult>
  list(query?: PayoutListQuery): Promise<Page<Payout>>
  get(payoutId: string): Promise<Payout>
  /** Moves a payout and its commissions: `paid` pays them, `failed` and `canceled` release them. */
  update(payoutId: string, changes: PayoutUpdateInput): Promise<Payout>
  /** The commissions in a payout, oldest first. */
  items(query: PayoutItemsQuery): Promise<Page<Commission>>
  /**
   * The payouts chosen (`status` default `pending`) as a CSV file: `csv` (every field), `paypal`
   * or `wise` (their upload files, only payouts paid by that method). `body` streams the file,
   * reading a page of payouts as it is read.
   */
  export(query: PayoutExportQuery): Promise<PayoutExport>
}

export interface WebhooksApi {
  /** Answers the webhook with its `secret` (`whsec_...`), shown in this answer only. */
  create(input: WebhookCreateInput): Promise<WebhookWithSecret>
  list(query?: WebhookListQuery): Promise<Page<Webhook>>
  get(webhookId: string): Promise<Webhook>
  /** Changes url, events, enabled or description; enabling a disabled webhook resends its held deliveries. */
  update(webhookId: string, changes: WebhookUpdateInput): Promise<Webhook>
  /** Deletes the webhook and its deliveries. */
  delete(webhookId: string): Promise<{ id: string }>
  /** A new secret, shown once; the previous one also signs for `overlapHours` (default 24). */
  rotateSecret(input: WebhookRotateInput): Promise<WebhookWithSecret>
  /** Queues a `webhook.test` event for this webhook alone; answers its delivery. */
  test(input: WebhookTestInput): Promise<WebhookDelivery>
  /** The delivery log, newest first, by webhook, event or status. */
  deliveries(query?: DeliveryListQuery): Promise<Page<WebhookDelivery>>
  /** Makes a delivery due now. */
  retryDelivery(input: DeliveryRetryInput): Promise<WebhookDelivery>
}

export interface EventsApi {
  /** Events oldest first (commit order), after the event `after`, of `type`; at most `limit` (≤ 100). */
  list(query?: EventListQuery): Promise<EventPage>
  get(eventId: string): Promise<AffiliateEvent>
}

/**
 * Figures of a workspace (or one campaign or affiliate of it) over a period `[from, to)` (default:
 * the 30 days up to now), read from hourly rollups kept with every write. See the README's "Reports".
 */
export interface ReportsApi {
  /** Opens, clicks, signups, conversion rate, commissions (and by status), clawbacks, paid out. */
  summary(query: ReportSummaryQuery): Promise<ReportSummary>
  /** The same per `interval` (default `day`) in `timezone` (default `UTC`), every bucket, empty ones included. */
  timeseries(query: ReportTimeseriesQuery): Promise<ReportTimeseries>
  /** The affiliates with any figure in the period, best first `by` (default `earnings`), at most `limit` (default 10, at most 100). */
  topAffiliates(query: ReportTopAffiliatesQuery): Promise<ReportTopAffiliates>
}

export interface ExportsApi {
  /** Every commission record the list filters match, oldest first, as a CSV file read a page at a time. */
  commissions(query?: CommissionExportQuery): Promise<CsvExport>
  /** Every affiliate the list filters match, oldest first, as a CSV file read a page at a time. */
  affiliates(query?: AffiliateExportQuery): Promise<CsvExport>
}

/** A host's customers: each bound to the affiliate that brought it (the first attribution wins). */
export interface CustomersApi {
  get(customerId: string): Promise<Customer>
  list(query?: CustomerListQuery): Promise<Page<Customer>>
  /** Changes its e-mail or name, or moves it to another affiliate (its future sales only). */
  update(customerId: string, changes: CustomerUpdateInput): Promise<Customer>
  /** Forgets the person (erases e-mail and name; `externalId` becomes the customer id) and keeps every commission. */
  delete(customerId: string): Promise<{ id: string }>
}

/**
 * Signups and sales as they happen: the service applies the campaign's reward rules itself.
 *
 * @example
 * await service.api.conversions.lead({ workspaceId, externalId: user.id, email: user.email, clickId })
 * await service.api.conversions.sale({ workspaceId, externalId: user.id, amount: '49.00', currency: 'USD', invoiceId: 'in_1' })
 */
export interface ConversionsApi {
  /** Makes the customer, bound to the affiliate the click, code or affiliate id names; a known `externalId` answers it unchanged. */
  lead(input: ConversionLeadInput): Promise<Customer>
  /** Makes the sale's commission by the campaign's rules, or says why none was made (`skipped`); a repeated `invoiceId` answers the first answer. */
  sale(input: ConversionSaleInput): Promise<SaleResult>
  /** Takes back the commission's share of a refunded sale (a clawback when it was paid); a repeated `refundId` answers the first answer. */
  refund(input: ConversionRefundInput): Promise<SaleRefundResult>
}

/** One namespace per resource. Validation and rules are those of HTTP; failures throw `AffiliateError`. */
export interface ResourceApi {
  campaigns: CampaignsApi
  affiliates: AffiliatesApi
  links: LinksApi
  commissions: CommissionsApi
  referredUsers: ReferredUsersApi
  payouts: PayoutsApi
  webhooks: WebhooksApi
  events: EventsApi
  reports: ReportsApi
  exports: ExportsApi
  customers: CustomersApi
  conversions: ConversionsApi
}

/**
 * The typed API. Called directly it acts as the embedding app, trusted with every workspace;
 * `as(principal)` gives the same API limited to that principal's workspaces, exactly as over HTTP.
 */
export interface AffiliateApi extends ResourceApi {
  as(principal: Principal): ResourceApi
}
