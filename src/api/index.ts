import type { Affiliate } from '../domain/affiliate.js'
import type { Campaign } from '../domain/campaign.js'
import type { Commission, ReferredUser } from '../domain/commission.js'
import type { ReferralLink } from '../domain/link.js'
import type { AffiliateBalance, Payout, PayoutRunResult } from '../domain/payout.js'
import type { Principal } from '../keys/types.js'
import type { Storage } from '../storage/types.js'
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
import type { Deps } from './shared.js'
import { customerOperations } from './customers.js'
import { conversionOperations } from './conversions.js'
import { integrationOperations } from './integrations.js'
import { promoCodeOperations } from './promo-codes.js'
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

/**
 * The operations over a storage, made the service's way (its commit hook, clock and webhook
 * policy). The service builds one; every path that runs operations (plain requests, idempotent
 * ones over a storage that also keeps their answer, the typed API) takes them from it.
 */
export type OperationsOn = (storage: Storage) => Operations

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
  integrations: integrationOperations(deps),
  promoCodes: promoCodeOperations(deps),
})
