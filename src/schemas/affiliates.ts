import { bool, email, nullable, oneOf, optionalEmail, text, uuid } from './fields.js'
import { listQuery } from './list.js'
import { allOptional, schema } from './validate.js'

const editable = {
  firstName: text(100),
  lastName: text(100),
  notes: text(5000),
  payoutEmail: optionalEmail,
  payoutMethod: nullable(oneOf(['PAYPAL', 'WISE', 'BANK_TRANSFER'] as const)),
  details: nullable(text(5000)),
  isActive: bool,
  isBanned: bool,
}

const readOnly = ['id', 'totalOpens', 'totalClicks', 'totalSignups', 'totalEarnings', 'createdAt', 'updatedAt']

export const affiliateCreate = schema(
  { ...allOptional(editable), email, campaignId: uuid, ...allOptional({ workspaceId: uuid }) },
  readOnly,
)

export const affiliateUpdate = schema(allOptional(editable), [...readOnly, 'email', 'campaignId', 'workspaceId'])

export const affiliateId = schema({ affiliateId: uuid })

/** An affiliate's standing, as lists filter by it: `pending` is awaiting approval (not active, not banned). */
export const AFFILIATE_STATUSES = ['active', 'pending', 'banned'] as const
export const affiliateStatus = oneOf(AFFILIATE_STATUSES)

export const affiliateList = listQuery(
  ['createdAt', 'updatedAt', 'email', 'firstName', 'lastName', 'totalEarnings', 'totalSignups', 'totalClicks', 'totalOpens'],
  { campaignId: uuid, email, status: affiliateStatus },
)
