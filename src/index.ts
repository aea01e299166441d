export { createAffiliateService } from './service.js'
export type {
  AffiliateService,
  AffiliateServiceOptions,
  BackgroundJob,
  FailedKeyLimitOptions,
  NotificationJob,
  StartOptions,
  TrackingLimitOptions,
} from './service.js'
export type {
  MailboxMessage,
  MailboxReader,
  NotificationData,
  NotificationMessage,
  NotifyOptions,
  RenderedText,
} from './notifications/options.js'
export { NOTIFICATION_KINDS, type NotificationKind } from './notifications/kinds.js'
export { developmentMailbox, type DevelopmentMailbox, type MailboxInput } from './notifications/mailbox.js'
export type { SenderChoice, ServiceEvents, WebhookOptions } from './events/service-events.js'
export type { AffiliateEvent, EventType } from './events/types.js'
export type { Webhook, WebhookDelivery, WebhookWithSecret } from './domain/webhook.js'
export type { DeliveryResult, WebhookRequest, WebhookSender } from './webhooks/delivery.js'
export type { AttemptOutcome } from './webhooks/schedule.js'
export type { WebhookSignatureHeaders } from './webhooks/signing.js'
export type { WebhookAddressPolicy } from './webhooks/address.js'
export type { ErrorContext, ErrorSource, OnError } from './on-error.js'
export type { PortalOptions, PortalThemeVariable } from './portal/index.js'
export type { AdminIdentity, AdminOptions } from './admin/index.js'
export type { FetchContext } from './http/client-address.js'
export { surfaceOf, type ServiceSurface } from './surfaces.js'
export type { Runtime } from './runtime.js'
export type { IdempotencyOptions } from './http/idempotency.js'
export { AffiliateError, type AffiliateErrorOptions, type ErrorCode, type FieldError } from './errors.js'
export type { Clock } from './clock.js'
// What an embedder uses. A storage implementer's contract (records, `models`, `Where`,
// `defineStorage`, ...) is the `affiliate-service/storage` entry.
export { memoryStorage } from './storage/memory.js'
export { sqlJsStorage } from './storage/sqljs/storage.js'
export type { SqlJsStorage, SqlJsStorageOptions } from './storage/sqljs/storage.js'
export type { SqlJsJournal, SqlJsPersistence } from './storage/sqljs/persistence.js'
export type { Storage } from './storage/types.js'
export { memoryKeyStore } from './keys/memory.js'
export { API_KEY_PREFIX, generateApiKey, generatePublishableKey, PUBLISHABLE_KEY_PREFIX, storageKeyStore } from './keys/storage.js'
export type { ApiKeyCreateInput, ApiKeyInfo, PublishableKeyCreateInput, StorageKeyStore, StorageKeyStoreOptions } from './keys/storage.js'
export type { MemoryKeyEntry } from './keys/memory.js'
export type { KeyCreateInput, KeyInfo, KeyKind, KeyManagement, KeyStore, Principal } from './keys/types.js'
export { managesKeys } from './keys/types.js'
export type { Campaign } from './domain/campaign.js'
export type { Affiliate } from './domain/affiliate.js'
export type { ReferralLink } from './domain/link.js'
export type { Commission, ReferredUser } from './domain/commission.js'
export type { AffiliateBalance, Payout, PayoutRunResult, SkippedAffiliate } from './domain/payout.js'
export type { SkipReason } from './domain/payout-run.js'
export type { Customer, SaleRefundResult, SaleResult } from './domain/customer.js'
export type { PromoCode } from './domain/promo-code.js'
export type { PromoCodeCreateInput, PromoCodeListQuery } from './api/promo-codes.js'
export type { StripeApiOptions } from './integrations/stripe-promotion-codes.js'
export type { SaleSkipReason } from './domain/reward.js'
export type { CommissionKind, CommissionStatus, CommissionType, PayoutMethod, PayoutStatus } from './domain/records.js'
export type {
  AffiliateApi,
  AffiliatesApi,
  CampaignsApi,
  CommissionsApi,
  LinksApi,
  PayoutsApi,
  ReportsApi,
  ExportsApi,
  ReferredUsersApi,
  ResourceApi,
  WebhooksApi,
  EventsApi,
  CustomersApi,
  ConversionsApi,
  PromoCodesApi,
} from './http/typed-api.js'
export type { ConversionLeadInput, ConversionRefundInput, ConversionSaleInput } from './api/conversions.js'
export type { CustomerListQuery, CustomerUpdateInput } from './api/customers.js'
export type { LinkCreateInput, LinkTrackBatch, LinkTrackBatchInput, LinkTrackInput } from './api/links.js'
export type { CommissionCreateInput, CommissionListQuery, CommissionRefundInput, CommissionUpdateInput } from './api/commissions.js'
export type { PayoutItemsQuery, PayoutListQuery, PayoutRunInput, PayoutUpdateInput } from './api/payouts.js'
export type { PayoutExport, PayoutExportFormat, PayoutExportQuery } from './api/payout-export.js'
export type {
  ReportPeriod,
  ReportSummary,
  ReportSummaryQuery,
  ReportTimeseries,
  ReportTimeseriesQuery,
  ReportTopAffiliates,
  ReportTopAffiliatesQuery,
  TopAffiliate,
  TopAffiliatesBy,
} from './api/reports.js'
export type { CountAndAmount, ReportFigures, SeriesPoint } from './reports/read.js'
export type { AffiliateExportQuery, CommissionExportQuery, CsvExport } from './api/exports.js'
export type { ReferredUserCreateInput, ReferredUserListQuery, ReferredUserUpdateInput } from './api/referred-users.js'
export type { AffiliateCreateInput, AffiliateListQuery, AffiliateUpdateInput } from './api/affiliates.js'
export type { CampaignCreateInput, CampaignListQuery, CampaignUpdateInput } from './api/campaigns.js'
export type { Page, Pagination } from './api/shared.js'
export { memoryLimiterStore } from './limiter/memory-store.js'
export type { MemoryLimiterStore, MemoryLimiterStoreOptions } from './limiter/memory-store.js'
export { consumeToken } from './limiter/token-bucket.js'
export type { BucketState } from './limiter/token-bucket.js'
export type { LimitDecision, LimiterStore, RateLimitOptions, RateLimitRule } from './limiter/types.js'
export { isUuid, nameUuid, UUID_PATTERN } from './uuid.js'
export { exportRecords } from './records-io/export-records.js'
export type { ExportRecordsOptions, RecordsProgress } from './records-io/export-records.js'
export { importRecords } from './records-io/import-records.js'
export type { ImportRecordsOptions, ImportRecordsResult } from './records-io/import-records.js'
export { RECORDS_FORMAT, RECORDS_SCHEMA_VERSION, RECORDS_VERSION } from './records-io/format.js'
export type { ModelDigest, RecordsDigests, RecordsHeader, RecordsTrailer } from './records-io/format.js'
export { RecordsImportError } from './records-io/errors.js'
export type { RecordsImportErrorCode, RecordsImportErrorDetails } from './records-io/errors.js'
