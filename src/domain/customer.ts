import type { Commission } from './commission.js'
import type { SaleSkipReason } from './reward.js'
import { answerMapper, type AnswerOf } from './answers.js'

/** A host's customer as the API answers it: bound to the affiliate that brought it (see descriptions/customers.ts). */
export type Customer = AnswerOf<'customers', 'customer'>

export const toCustomer = answerMapper('customers', 'customer')

/** What `POST /conversions/sale` answers: the commission made, or why none was. */
export interface SaleResult {
  /** Null when the sale could not be attributed to anyone. */
  customer: Customer | null
  commission: Commission | null
  skipped: SaleSkipReason | null
}

/** What `POST /conversions/refund` answers: the sale's commission after the refund, and the clawback when it had been paid. */
export interface SaleRefundResult {
  commission: Commission
  clawback: Commission | null
}
