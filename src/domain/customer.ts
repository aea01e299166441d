import type { Commission } from './commission.js'
import type { SaleSkipReason } from './reward.js'
import { answerMapper } from './schema.js'

/** A host's customer as the API answers it: bound to the affiliate that brought it. */
export interface Customer {
  customerId: string
  workspaceId: string
  campaignId: string
  affiliateId: string
  /** The link it came through, when it came through one. */
  linkId: string | null
  /** The click it came from, when a click brought it. */
  clickId: string | null
  /** When it was attributed (its click's time, else its lead's): a sale paid before earns nothing. */
  attributedAt: string
  /** The host's id for its user; unique per workspace (the customer's own id once forgotten). */
  externalId: string
  /** The empty string once forgotten, or when no e-mail was given. */
  email: string
  name: string | null
  /** Its Stripe customer: one customer per Stripe customer in a workspace. */
  stripeCustomerId: string | null
  /** When its earliest paid sale (since its attribution) was paid. */
  firstSaleAt: string | null
  /** Its sales paid since its attribution. */
  salesCount: number
  createdAt: string
  updatedAt: string
}

export const toCustomer = answerMapper<'customers', Customer>('customers', 'customer')

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
