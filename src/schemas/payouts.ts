import { PAYOUT_STATUSES } from '../domain/payout-status.js'
import { bool, nullable, oneOf, queryInteger, text, timestamp, uuid, uuids } from './fields.js'
import { listQuery, MAX_LIMIT, MAX_PAGE } from './list.js'
import { allOptional, schema } from './validate.js'

const status = oneOf(PAYOUT_STATUSES)

/** `POST /payouts/run`. */
export const payoutRun = schema({
  workspaceId: uuid,
  ...allOptional({ campaignId: uuid, asOf: timestamp, dryRun: bool }),
})

export const payoutId = schema({ payoutId: uuid })

export const payoutList = listQuery(['createdAt', 'updatedAt', 'amount', 'status'] as const, {
  affiliateId: uuid,
  campaignId: uuid,
  status,
})

/** `PUT /payouts`: the move, and what the payment system said. */
export const payoutUpdate = schema(
  {
    status,
    ...allOptional({ externalReference: nullable(text(255, { min: 1 })), failureReason: nullable(text(1000, { min: 1 })) }),
  },
  ['payoutId', 'id', 'workspaceId', 'campaignId', 'affiliateId', 'currency', 'amount', 'commissionCount', 'payoutMethod', 'payoutEmail', 'periodEnd', 'paidAt', 'createdAt', 'updatedAt'],
)

/** `GET /payouts/items`: the commissions in one payout, a page at a time. */
export const payoutItems = schema({
  payoutId: uuid,
  ...allOptional({ page: queryInteger(1, MAX_PAGE), limit: queryInteger(1, MAX_LIMIT) }),
})

export const EXPORT_FORMATS = ['csv', 'paypal', 'wise'] as const

/** The most `payoutId`s one export names: one storage `in` condition. */
export const MAX_EXPORT_IDS = 500

/** `GET /payouts/export`: which file, and which payouts (`status` defaults to `pending`). */
export const payoutExport = schema({
  format: oneOf(EXPORT_FORMATS),
  ...allOptional({ workspaceId: uuid, campaignId: uuid, status, payoutId: uuids(MAX_EXPORT_IDS) }),
})
