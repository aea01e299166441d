import { COMMISSION_STATUSES } from '../domain/commission-status.js'
import { MAX_AMOUNT } from './campaigns.js'
import { email, integer, bool, money, nullable, oneOf, text, timestamp, uuid } from './fields.js'
import { referralCode } from './links.js'
import { listQuery } from './list.js'
import { allOptional, schema } from './validate.js'

const status = oneOf(COMMISSION_STATUSES)
const amount = money(MAX_AMOUNT)
const externalId = nullable(text(255, { min: 1 }))

const commissionEditable = {
  amount,
  adminEarnedAmount: amount,
  status,
  commissionDate: timestamp,
  remarks: nullable(text(5000)),
}

/** Set by the service (refunds and payouts), never by a request. */
const moneyTrail = ['kind', 'dueAt', 'payoutId', 'refundedAmount', 'reversesCommissionId']

const readOnly = ['commissionId', 'id', 'workspaceId', 'createdAt', 'updatedAt', ...moneyTrail]

export const commissionCreate = schema(
  {
    ...allOptional(commissionEditable),
    campaignId: uuid,
    referredUser: email,
    amount,
    // A clickId names the affiliate (and link) itself: then affiliateId may be left out.
    ...allOptional({ affiliateId: uuid, referralCode, clickId: uuid }),
  },
  readOnly,
  { requireOneOf: ['affiliateId', 'clickId'] },
)

export const commissionUpdate = schema(allOptional(commissionEditable), [
  ...readOnly,
  'campaignId',
  'affiliateId',
  'referredUser',
  'referralCode',
  'clickId',
])

export const commissionId = schema({ commissionId: uuid })

const orderFields = ['createdAt', 'updatedAt', 'commissionDate', 'amount', 'status'] as const
/** `from` and `to` bound `commissionDate`: from ≤ date < to. */
const filters = { affiliateId: uuid, campaignId: uuid, status, kind: oneOf(['sale', 'clawback'] as const), from: timestamp, to: timestamp }

export const commissionList = listQuery(orderFields, filters)

const referredEditable = {
  ...commissionEditable,
  payoutDate: nullable(timestamp),
  name: nullable(text(200)),
  isWalletPayment: integer(0, 1),
  chargeId: externalId,
  invoiceId: externalId,
  stripeSubscriptionId: externalId,
}

export const referredUserCreate = schema(
  {
    ...allOptional({
      ...referredEditable,
      workspaceId: uuid,
      campaignId: uuid,
      referralCode,
      // Accepted for compatibility and then ignored: the service works it out from the e-mails.
      isSelfReferral: bool,
      affiliateId: uuid,
      clickId: uuid,
    }),
    referredTo: email,
  },
  ['commissionId', 'id', 'referredUser', 'createdAt', 'updatedAt', ...moneyTrail],
  { requireOneOf: ['affiliateId', 'clickId'] },
)

export const referredUserUpdate = schema(allOptional(referredEditable), [
  'commissionId',
  'id',
  'referredTo',
  'referredUser',
  'affiliateId',
  'workspaceId',
  'campaignId',
  'referralCode',
  'clickId',
  'isSelfReferral',
  'createdAt',
  'updatedAt',
  ...moneyTrail,
])

export const referredUserEmail = schema({ referredUser: email })

export const referredUserList = listQuery(orderFields, filters)

/** `POST /commissions/refund`: `amount` defaults to what is left to refund; `dryRun` answers what would happen and writes nothing. */
export const commissionRefund = schema({ commissionId: uuid, ...allOptional({ amount, dryRun: bool }) })
