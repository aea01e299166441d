import { bool, oneOf, queryInteger, timestamp, uuid, uuids } from '../domain/checks.js'
import { payouts } from '../domain/descriptions/payouts.js'
import { MAX_LIMIT, MAX_PAGE } from './list.js'
import { inputsOf, listSchema, updateSchema } from './model-schemas.js'
import { allOptional, schema } from './validate.js'

const { status } = inputsOf(payouts, ['status'])

/** `POST /payouts/run`. */
export const payoutRun = schema({
  workspaceId: uuid,
  ...allOptional({ campaignId: uuid, asOf: timestamp, dryRun: bool }),
})

export const payoutId = schema({ payoutId: uuid })

export const payoutList = listSchema(payouts)

/** `PUT /payouts`: the move, and what the payment system said. */
export const payoutUpdate = updateSchema(payouts)

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
