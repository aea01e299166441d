import { email, nullable, text, uuid } from './fields.js'
import { listQuery } from './list.js'
import { allOptional, schema } from './validate.js'

/** The host's id for its user (`externalId`): any text it keeps, 1 to 255 characters. */
export const externalId = text(255, { min: 1 })

const readOnly = [
  'customerId', 'id', 'workspaceId', 'campaignId', 'linkId', 'clickId', 'attributedAt', 'externalId', 'firstSaleAt', 'salesCount',
  'createdAt', 'updatedAt',
]

/** A Stripe customer id (`cus_…`), as Stripe gives it. */
export const stripeCustomerId = text(255, { min: 1 })

/**
 * `PUT /customers`: moving it to another affiliate moves its future sales only; a Stripe customer
 * binds it (its sales not yet attributed are attributed to it), null unbinds it.
 */
export const customerUpdate = schema(allOptional({ affiliateId: uuid, email, name: nullable(text(200)), stripeCustomerId: nullable(stripeCustomerId) }), readOnly)

export const customerId = schema({ customerId: uuid })

export const customerList = listQuery(['createdAt', 'updatedAt', 'firstSaleAt', 'salesCount'] as const, { affiliateId: uuid, campaignId: uuid })
