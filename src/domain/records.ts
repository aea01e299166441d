import type { RecordOfModel } from './describe.js'
import type { Descriptions } from './descriptions/index.js'

// The shapes kept in storage, inferred from the models' descriptions (./descriptions), as Drizzle's
// `$inferSelect` is from a table: a field is written once, there. Money is integer minor units
// (cents), timestamps are ISO strings, and `*Key` fields are lower-cased copies that uniqueness and
// look-ups use.

/** Every model's record, by model name. */
export type ModelRecords = { [M in keyof Descriptions]: RecordOfModel<Descriptions[M]> }

export type CampaignRecord = ModelRecords['campaigns']
export type AffiliateRecord = ModelRecords['affiliates']
export type LinkRecord = ModelRecords['links']
/** A commission and a referred user are one record: the referred-user fields are null when unset. */
export type CommissionRecord = ModelRecords['commissions']
export type CustomerRecord = ModelRecords['customers']
export type SaleRecord = ModelRecords['sales']
export type SaleRefundRecord = ModelRecords['saleRefunds']
export type IntegrationRecord = ModelRecords['integrations']
export type ProviderEventRecord = ModelRecords['providerEvents']
export type PromoCodeRecord = ModelRecords['promoCodes']
export type PayoutRecord = ModelRecords['payouts']
export type ApiKeyRecord = ModelRecords['apiKeys']
export type ClickRecord = ModelRecords['clicks']
export type SettingRecord = ModelRecords['settings']
export type IdempotencyRecord = ModelRecords['idempotency']
export type EventRecord = ModelRecords['events']
export type WebhookRecord = ModelRecords['webhooks']
export type WebhookDeliveryRecord = ModelRecords['webhookDeliveries']
export type SequenceRecord = ModelRecords['sequences']
export type RollupRecord = ModelRecords['rollups']
export type PortalTokenRecord = ModelRecords['portalTokens']
export type AdminSessionRecord = ModelRecords['adminSessions']
export type NotificationRecord = ModelRecords['notifications']
export type NotificationPreferenceRecord = ModelRecords['notificationPreferences']

export type CommissionType = CampaignRecord['commissionType']
export type PayoutMethod = PayoutRecord['payoutMethod']
export type CommissionStatus = CommissionRecord['status']
/** A `sale` earns; a `clawback` (negative, made by refunding a paid sale) recovers money in the next payout. */
export type CommissionKind = CommissionRecord['kind']
export type PayoutStatus = PayoutRecord['status']
export type ApiKeyKind = ApiKeyRecord['kind']
export type WebhookDeliveryStatus = WebhookDeliveryRecord['status']
export type ProviderEventStatus = ProviderEventRecord['status']
