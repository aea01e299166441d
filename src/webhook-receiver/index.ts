// The `affiliate-service/webhooks` entry: what a webhook receiver needs, and nothing of the service.

export { verifyWebhook, WebhookVerificationError } from './verify.js'
export type { WebhookHeaders } from './verify.js'
export type { AffiliateEventOf, EventDataMap, TypedAffiliateEvent as AffiliateEvent } from '../events/typed.js'
export { EVENT_TYPES } from '../events/types.js'
export type { EventType } from '../events/types.js'
export type { Affiliate } from '../domain/affiliate.js'
export type { Campaign } from '../domain/campaign.js'
export type { Commission, ReferredUser } from '../domain/commission.js'
export type { ReferralLink } from '../domain/link.js'
export type { Payout } from '../domain/payout.js'
export type { CommissionStatus, PayoutStatus } from '../domain/records.js'
export type { Webhook } from '../domain/webhook.js'
