import { uuid } from '../domain/checks.js'
import { customers } from '../domain/descriptions/customers.js'
import { listSchema, updateSchema } from './model-schemas.js'
import { schema } from './validate.js'

/**
 * `PUT /customers`: moving it to another affiliate moves its future sales only; a Stripe customer
 * binds it (its sales not yet attributed are attributed to it), null unbinds it.
 */
export const customerUpdate = updateSchema(customers)

export const customerId = schema({ customerId: uuid })

export const customerList = listSchema(customers)
