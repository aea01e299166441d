import { uuid } from '../domain/checks.js'
import { promoCodes } from '../domain/descriptions/promo-codes.js'
import { createSchema, listSchema } from './model-schemas.js'
import { schema } from './validate.js'

// `POST /promo-codes`, `GET /promo-codes/list`, `GET|DELETE /promo-codes` (SPEC wave 4, "Promo codes").

export const promoCodeCreate = createSchema(promoCodes)

export const promoCodeId = schema({ promoCodeId: uuid })

export const promoCodeList = listSchema(promoCodes)
