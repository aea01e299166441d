import { uuid } from '../domain/checks.js'
import { campaigns } from '../domain/descriptions/campaigns.js'
import { createSchema, listSchema, updateSchema } from './model-schemas.js'
import { schema } from './validate.js'

export const campaignCreate = createSchema(campaigns)

export const campaignUpdate = updateSchema(campaigns)

export const campaignId = schema({ campaignId: uuid })

export const campaignList = listSchema(campaigns)
