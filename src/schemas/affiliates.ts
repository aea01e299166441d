import { uuid } from '../domain/checks.js'
import { affiliates } from '../domain/descriptions/affiliates.js'
import { createSchema, listSchema, updateSchema } from './model-schemas.js'
import { schema } from './validate.js'

export const affiliateCreate = createSchema(affiliates)

export const affiliateUpdate = updateSchema(affiliates)

export const affiliateId = schema({ affiliateId: uuid })

export const affiliateList = listSchema(affiliates)
