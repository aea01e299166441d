import { email, nullable, text, uuid } from './fields.js'
import { listQuery } from './list.js'
import { allOptional, schema } from './validate.js'

/** The host's id for its user (`externalId`): any text it keeps, 1 to 255 characters. */
export const externalId = text(255, { min: 1 })

const readOnly = [
  'customerId', 'id', 'workspaceId', 'campaignId', 'linkId', 'clickId', 'externalId', 'stripeCustomerId', 'firstSaleAt', 'salesCount',
  'createdAt', 'updatedAt',
]

/** `PUT /customers`: moving it to another affiliate moves its future sales only. */
export const customerUpdate = schema(allOptional({ affiliateId: uuid, email, name: nullable(text(200)) }), readOnly)

export const customerId = schema({ customerId: uuid })

export const customerList = listQuery(['createdAt', 'updatedAt', 'firstSaleAt', 'salesCount'] as const, { affiliateId: uuid, campaignId: uuid })
