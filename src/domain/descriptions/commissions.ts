import * as check from '../checks.js'
import { model } from '../describe.js'
import { MAX_AMOUNT } from './campaigns.js'
import { bool, editable, indexedText, int, list, money, nullableText, required, stamps, text, timestamp } from './fields.js'
import { referralCode } from './links.js'

export const COMMISSION_STATUSES = ['pending', 'processing', 'paid', 'refunded', 'hold', 'voided'] as const
/**
 * The statuses a request may set (create, `PUT /commissions`): `hold` is set by the fraud rules and
 * left by `POST /commissions/release` or `/commissions/void`, which alone make `voided`.
 */
export const SETTABLE_COMMISSION_STATUSES = ['pending', 'processing', 'paid', 'refunded'] as const
/** A `sale` earns; a `clawback` (negative, made by refunding a paid sale) recovers money in the next payout. */
export const COMMISSION_KINDS = ['sale', 'clawback'] as const

/** A host's id for a payment (an invoice, a charge), 1 to 255 characters. */
export const providerId = check.text(255, { min: 1 })
const externalId = check.nullable(providerId)

const commissionAnswer = [
  'id',
  'campaignId',
  'workspaceId',
  'affiliateId',
  'referredUser',
  'amountMinor',
  'adminEarnedMinor',
  'status',
  'commissionDate',
  'remarks',
  'referralCode',
  'kind',
  'dueAt',
  'payoutId',
  'refundedMinor',
  'reversesCommissionId',
  'saleAmountMinor',
  'currency',
  'customerId',
  'invoiceId',
  'chargeId',
  'stripeSubscriptionId',
  'paymentIntentId',
  'holdReasons',
  'createdAt',
  'updatedAt',
] as const

/** A commission and a referred user are one record: the referred-user fields are null when unset. */
export const commissions = model(
  {
    id: text({ answerAs: 'commissionId' }),
    workspaceId: indexedText,
    campaignId: text({
      indexed: true,
      input: check.uuid,
      create: 'required',
      filter: true,
      form: { label: 'Campaign', control: 'select' },
    }),
    affiliateId: text({
      indexed: true,
      input: check.uuid,
      create: 'optional',
      filter: true,
      form: { label: 'Affiliate ID', hint: 'The affiliate who referred the sale (on their page in Affiliates).' },
    }),
    referredUser: text({
      searched: true,
      description: "The referred user's e-mail.",
      input: check.email,
      create: 'required',
      form: { label: 'Customer e-mail', control: 'email' },
    }),
    referredUserKey: indexedText,
    amountMinor: money('amount', { wire: 'string', input: check.money(MAX_AMOUNT), ...required, form: { label: 'Commission amount' } }),
    adminEarnedMinor: money('adminEarnedAmount', {
      wire: 'string',
      input: check.money(MAX_AMOUNT),
      ...editable,
      form: { label: 'Admin earned amount', hint: 'What the sale earned the program, for your records; default 0.' },
    }),
    status: text({
      values: COMMISSION_STATUSES,
      description:
        '`hold`: held for review by the fraud rules (not payable; see holdReasons); `voided`: voided after review (earns nothing, kept for history).',
      input: check.oneOf(SETTABLE_COMMISSION_STATUSES),
      ...editable,
      filter: check.oneOf(COMMISSION_STATUSES),
      form: { label: 'Status', none: 'Pending (default)' },
    }),
    commissionDate: timestamp({
      ...editable,
      form: { label: 'Date of the sale', hint: 'An ISO date-time such as 2026-03-01T12:00:00Z; default now.' },
    }),
    remarks: text({
      nullable: true,
      searched: true,
      input: check.nullable(check.text(5000)),
      ...editable,
      form: { label: 'Remarks', control: 'textarea' },
    }),
    // The referred-user fields: `/referred-users` requests give them (see schemas/commissions.ts).
    payoutDate: timestamp({ nullable: true, input: check.nullable(check.timestamp) }),
    name: text({ nullable: true, searched: true, input: check.nullable(check.text(200)) }),
    isSelfReferral: bool(),
    isWalletPayment: int({ input: check.integer(0, 1) }),
    chargeId: text({ nullable: true, input: externalId }),
    invoiceId: text({ nullable: true, input: externalId }),
    stripeSubscriptionId: text({ nullable: true, input: externalId }),
    /** The link the sale came through, when the request named its referral code. */
    linkId: nullableText,
    referralCode: text({
      nullable: true,
      description: 'The referral link the sale came through, when one was given.',
      input: referralCode,
      create: 'optional',
    }),
    kind: text({
      values: COMMISSION_KINDS,
      description: 'A clawback is the negative commission a refund of a paid sale makes.',
      filter: true,
    }),
    dueAt: timestamp({ description: "When it may be paid: commissionDate plus the campaign's payoutTerm days." }),
    /** The payout it is in, while it is in one (and after, once paid). */
    payoutId: text({ nullable: true, indexed: true, description: 'The payout it is in.' }),
    /** What refunds took back from it after it was paid; the amount stays what was paid. */
    refundedMinor: money('refundedAmount', { wire: 'string', description: 'What refunds took back after it was paid.' }),
    // Lists filter by it (a sale's clawbacks: its history), through the (workspaceId, kind) index of the few clawbacks.
    reversesCommissionId: text({
      nullable: true,
      filter: check.uuid,
      description: 'On a clawback: the paid sale it takes money back from.',
    }),
    saleAmountMinor: money('saleAmount', {
      wire: 'string',
      nullable: true,
      description: 'The sale it was made from (without tax, as the campaign rewards it); null when made by hand, and on a clawback.',
    }),
    /** Its campaign's currency (a sale's commission is only ever made in it). */
    currency: text({ description: "Its campaign's currency, ISO 4217." }),
    customerId: text({
      nullable: true,
      indexed: true,
      description: 'The customer whose sale made it (a clawback: of the sale it reverses); null when made by hand.',
    }),
    paymentIntentId: text({ nullable: true, description: "The sale's payment intent (Stripe), once an event named it." }),
    /** The fraud rules that flagged it (docs/fraud.md) while it is `hold`; emptied when it is released or voided (its `commission.held` event keeps them). */
    holdReasons: list({
      description:
        'The fraud rules that flagged it for review (self_referral, disposable_email, paid_ad_click, address_burst, refund_rate); empty unless it is held.',
    }),
    ...stamps,
  },
  {
    unique: [
      { name: 'commissions_workspace_invoice', fields: ['workspaceId', 'invoiceId'] },
      { name: 'commissions_workspace_charge', fields: ['workspaceId', 'chargeId'] },
    ],
    // Lists filtered by status (a quarter of a workspace, say) or kind (the few clawbacks) read one
    // index range, not the workspace; a period of a workspace is a range of commissionDate.
    indexes: [
      ['workspaceId', 'status'],
      ['workspaceId', 'kind'],
    ],
    ordered: [{ where: ['workspaceId'], orderBy: 'commissionDate' }],
    answers: {
      commission: commissionAnswer,
      referredUser: [...commissionAnswer, 'payoutDate', 'name', 'isSelfReferral', 'isWalletPayment'],
    },
    // A clickId names the affiliate (and link) itself: then affiliateId may be left out.
    inputs: { clickId: { kind: 'text', input: check.uuid, create: 'optional' } },
    requireOneOf: ['affiliateId', 'clickId'],
    /** `from` and `to` bound `commissionDate`: from ≤ date < to. */
    list: {
      orderBy: ['createdAt', 'updatedAt', 'commissionDate', 'amountMinor', 'status'],
      filters: { from: check.timestamp, to: check.timestamp },
    },
  },
)
