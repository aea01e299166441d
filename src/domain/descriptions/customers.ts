import * as check from '../checks.js'
import { model } from '../describe.js'
import { bool, indexedText, int, nullableText, stamps, text, timestamp } from './fields.js'
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
    /** Its click's time when a click brought it, else when its lead was made (a sale naming a code: the sale's `paidAt`). */
    attributedAt: timestamp({
      description:
        "When it was attributed: its click's time when a click brought it, else its lead's. A sale paid before earns nothing (`before_attribution`).",
    }),
    externalId: text({
      searched: true,
      description: "The host's id for its user; unique per workspace (the customer's id once forgotten).",
      input: externalId,
    }),
    email: text({
      searched: true,
      description: 'The empty string once forgotten, or when no e-mail was given.',
      input: check.email,
      update: 'optional',
    }),
    /** Lower-cased `email`: what signups are counted by. */
    emailKey: text(),
    name: text({ nullable: true, searched: true, input: check.nullable(check.text(200)), update: 'optional' }),
    // A Stripe customer (`cus_…`) binds it (its sales not yet attributed are attributed to it); null unbinds it.
    stripeCustomerId: text({
      nullable: true,
      description: 'Its Stripe customer: one customer per Stripe customer in a workspace.',
      input: check.nullable(providerId),
      update: 'optional',
    }),
    /** Where a campaign's `recurringMonths` count from. */
    firstSaleAt: timestamp({ nullable: true, description: 'When its earliest paid sale (since its attribution) was paid.' }),
    salesCount: int({ description: 'Its sales paid since its attribution.' }),
    /** Commissions its sales made: what `maxCommissionsPerCustomer` limits. */
    commissionCount: int(),
    /**
     * The fraud rules' view of the click that brought it (copied from it, as clicks are pruned): its
     * client address and device, hashed under the day's click salt; '' when no click did. In no answer;
     * erasure empties them.
     */
    clickAddress: text(),
    clickDevice: text(),
    clickPaidAd: bool(),
    /**
     * How many of its affiliate's customers (itself included) came from its click's address within the
     * 24 hours up to its arrival, counted once when it is made (0 without a click address): what
     * `address_burst` reads at each of its sales, without a query.
     */
    clickAddressCount: int(),
    ...stamps,
  },
  {
    unique: [
      { name: 'customers_workspace_external', fields: ['workspaceId', 'externalId'] },
      // The first attribution wins: a Stripe customer is bound to one customer of a workspace.
      { name: 'customers_workspace_stripe', fields: ['workspaceId', 'stripeCustomerId'] },
    ],
    // Signups are distinct e-mails per affiliate and per link, over customers and referred users.
    indexes: [
      ['workspaceId', 'externalId'],
      ['affiliateId', 'emailKey'],
      ['linkId', 'emailKey'],
      ['affiliateId', 'clickAddress'],
    ],
    answers: {
      customer: [
        'id',
        'workspaceId',
        'campaignId',
        'affiliateId',
        'linkId',
        'clickId',
        'attributedAt',
        'externalId',
        'email',
        'name',
        'stripeCustomerId',
        'firstSaleAt',
        'salesCount',
        'createdAt',
        'updatedAt',
      ],
    },
    list: { orderBy: ['createdAt', 'updatedAt', 'firstSaleAt', 'salesCount'] },
  },
)

/**
 * One sale a host reported (`POST /conversions/sale`) or a provider's event made, earning or not:
 * its `invoiceId` is unique per workspace, so a repeat answers `answer` again instead of paying
 * twice. Its charge and payment intent are unique too: a refund finds its sale by either.
 */
export const sales = model(
  {
    id: text(),
    workspaceId: indexedText,
    invoiceId: text(),
    chargeId: nullableText,
    /** The payment intent that paid it (Stripe), from whichever event named it. */
    paymentIntentId: nullableText,
    subscriptionId: nullableText,
    /**
     * The Stripe customer that paid it. A sale of a Stripe customer no customer is bound to yet is
     * kept with `customerId` null; binding that Stripe customer later attributes it then.
     */
    stripeCustomerId: nullableText,
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
      { name: 'sales_workspace_payment_intent', fields: ['workspaceId', 'paymentIntentId'] },
    ],
    // A refund finds its sale by charge, payment intent or invoice; binding a Stripe customer finds its sales not yet attributed.
    indexes: [
      ['workspaceId', 'invoiceId'],
      ['workspaceId', 'chargeId'],
      ['workspaceId', 'paymentIntentId'],
      ['workspaceId', 'stripeCustomerId'],
    ],
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
