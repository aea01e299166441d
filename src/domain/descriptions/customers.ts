import * as check from '../checks.js'
import { model } from '../describe.js'
import { indexedText, int, nullableText, stamps, text, timestamp } from './fields.js'
import { providerId } from './commissions.js'

/** The host's id for its user (`externalId`): any text it keeps, 1 to 255 characters. */
export const externalId = check.text(255, { min: 1 })

/**
 * A host's customer, bound once to the affiliate that brought it (the first attribution wins; only
 * an update moves it). Forgetting one erases `email`, `name` and `externalId` and keeps the money.
 */
export const customers = model(
  {
    id: text({ answerAs: 'customerId' }),
    workspaceId: indexedText,
    campaignId: text({ indexed: true, filter: check.uuid }),
    // Moving it to another affiliate moves its future sales only.
    affiliateId: text({ indexed: true, input: check.uuid, update: 'optional', filter: true }),
    linkId: nullableText,
    clickId: nullableText,
    externalId: text({ searched: true, description: "The host's id for its user; unique per workspace (the customer's id once forgotten).", input: externalId }),
    email: text({ searched: true, description: 'The empty string once forgotten, or when no e-mail was given.', input: check.email, update: 'optional' }),
    /** Lower-cased `email`: what signups are counted by. */
    emailKey: text(),
    name: text({ nullable: true, searched: true, input: check.nullable(check.text(200)), update: 'optional' }),
    stripeCustomerId: text({ nullable: true, input: check.nullable(providerId) }),
    /** Where a campaign's `recurringMonths` count from. */
    firstSaleAt: timestamp({ nullable: true, description: 'When its earliest paid sale was paid.' }),
    salesCount: int(),
    /** Commissions its sales made: what `maxCommissionsPerCustomer` limits. */
    commissionCount: int(),
    ...stamps,
  },
  {
    unique: [{ name: 'customers_workspace_external', fields: ['workspaceId', 'externalId'] }],
    // Signups are distinct e-mails per affiliate and per link, over customers and referred users.
    indexes: [['workspaceId', 'externalId'], ['workspaceId', 'stripeCustomerId'], ['affiliateId', 'emailKey'], ['linkId', 'emailKey']],
    answers: {
      customer: [
        'id', 'workspaceId', 'campaignId', 'affiliateId', 'linkId', 'clickId', 'externalId', 'email', 'name', 'stripeCustomerId',
        'firstSaleAt', 'salesCount', 'createdAt', 'updatedAt',
      ],
    },
    list: { orderBy: ['createdAt', 'updatedAt', 'firstSaleAt', 'salesCount'] },
  },
)

/**
 * One sale a host reported (`POST /conversions/sale`), earning or not: its `invoiceId` is unique
 * per workspace, so a repeat answers `answer` again instead of paying twice.
 */
export const sales = model(
  {
    id: text(),
    workspaceId: indexedText,
    invoiceId: text(),
    chargeId: nullableText,
    customerId: text({ nullable: true, indexed: true }),
    /** The commission it made, null when skipped. */
    commissionId: nullableText,
    currency: text(),
    amountMinor: int(),
    /** What refunds of the sale took back. */
    refundedMinor: int(),
    /** The commission's amount when made: refunds take back their share of it. */
    commissionMinor: int(),
    /** What refunds of the sale took back from the commission. */
    commissionRefundedMinor: int(),
    paidAt: timestamp(),
    /** JSON of the first answer's `data`, answered again to a repeat. */
    answer: text(),
    ...stamps,
  },
  {
    unique: [
      { name: 'sales_workspace_invoice', fields: ['workspaceId', 'invoiceId'] },
      { name: 'sales_workspace_charge', fields: ['workspaceId', 'chargeId'] },
    ],
    indexes: [['workspaceId', 'invoiceId'], ['workspaceId', 'chargeId']],
  },
)

/** One refund of a sale (`POST /conversions/refund`); a `refundId` is unique per workspace. */
export const saleRefunds = model(
  {
    id: text(),
    workspaceId: indexedText,
    saleId: indexedText,
    refundId: nullableText,
    amountMinor: int(),
    /** What it took back from the sale's commission. */
    commissionMinor: int(),
    /** JSON of the answer's `data`, answered again to a repeat of its `refundId`. */
    answer: text(),
    ...stamps,
  },
  {
    unique: [{ name: 'sale_refunds_workspace_refund', fields: ['workspaceId', 'refundId'] }],
    indexes: [['workspaceId', 'refundId']],
  },
)
