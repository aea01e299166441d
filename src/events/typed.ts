// Each event type with the `data` it carries: the union `verifyWebhook` answers, narrowed by `type`.

import type { Affiliate } from '../domain/affiliate.js'
import type { Customer } from '../domain/customer.js'
import type { Campaign } from '../domain/campaign.js'
import type { Commission, ReferredUser } from '../domain/commission.js'
import type { ReferralLink } from '../domain/link.js'
import type { Payout } from '../domain/payout.js'
import type { PromoCode } from '../domain/promo-code.js'
import type { CommissionStatus, PayoutStatus } from '../domain/records.js'
import type { Webhook } from '../domain/webhook.js'
import type { EventType } from './types.js'

/**
 * The `data` of each event type: the resource as the API answers it, plus `previousStatus` on
 * status changes. A referred user's changes are `commission.*` events whose data is the referred
 * user (a `Commission` with more fields). Every `EventType` must have an entry here (`AffiliateEventOf`
 * indexes it), so a new type does not compile until its data is named.
 */
export interface EventDataMap {
  'campaign.created': Campaign
  'campaign.updated': Campaign
  'campaign.deleted': Campaign
  'affiliate.created': Affiliate
  'affiliate.updated': Affiliate
  'affiliate.deleted': Affiliate
  'link.created': ReferralLink
  'link.deleted': ReferralLink
  'commission.created': Commission
  'commission.updated': Commission
  'commission.status_changed': Commission & { previousStatus: CommissionStatus }
  /** `previousStatus` when the refund moved the status (to `refunded`). */
  'commission.refunded': Commission & { previousStatus?: CommissionStatus }
  'commission.clawback_created': Commission
  'commission.deleted': Commission
  /** A commission made `hold` by the fraud rules: `holdReasons` names them. */
  'commission.held': Commission
  /** A held commission released after review (now `pending`); `previousHoldReasons`: why it was held. */
  'commission.released': Commission & { previousStatus: CommissionStatus; previousHoldReasons: string[] }
  /** A held commission voided after review (now `voided`, earning nothing); `previousHoldReasons`: why it was held. */
  'commission.voided': Commission & { previousStatus: CommissionStatus; previousHoldReasons: string[] }
  'referred_user.created': ReferredUser
  'payout.created': Payout
  'payout.updated': Payout
  'payout.status_changed': Payout & { previousStatus: PayoutStatus }
  'customer.created': Customer
  'customer.updated': Customer
  'customer.deleted': Customer
  'promo_code.created': PromoCode
  'promo_code.deleted': PromoCode
  'webhook.test': { webhook: Webhook }
}

/** One event of type `T`, as a webhook receives it and `GET /events` answers it. */
export interface AffiliateEventOf<T extends EventType> {
  /** The event id: also the `webhook-id` header, the same on every retry (drop duplicates by it). */
  id: string
  type: T
  createdAt: string
  workspaceId: string
  data: EventDataMap[T]
}

/** Any event: a union discriminated by `type`, so `switch (event.type)` narrows `data`. */
export type TypedAffiliateEvent = { [T in EventType]: AffiliateEventOf<T> }[EventType]
