import { email, uuid } from '../domain/checks.js'
import { commissions } from '../domain/descriptions/commissions.js'
import { createSchema, inputsOf, listSchema, updateSchema } from './model-schemas.js'
import { allOptional, schema } from './validate.js'

export const commissionCreate = createSchema(commissions)

export const commissionUpdate = updateSchema(commissions)

export const commissionId = schema({ commissionId: uuid })

export const commissionList = listSchema(commissions)

// The referred-user routes: the same records, named by `referredTo` when created, with the
// signup's fields too (payoutDate, name, …) besides the commission's.

const commissionFields = ['amount', 'adminEarnedAmount', 'status', 'commissionDate', 'remarks'] as const
const signupFields = ['payoutDate', 'name', 'isWalletPayment', 'chargeId', 'invoiceId', 'stripeSubscriptionId'] as const
const referredEditable = inputsOf(commissions, [...commissionFields, ...signupFields])

/** Set by the service (refunds and payouts), never by a request. */
const moneyTrail = ['kind', 'dueAt', 'payoutId', 'refundedAmount', 'reversesCommissionId']

export const referredUserCreate = schema(
  {
    ...allOptional({
      ...referredEditable,
      workspaceId: uuid,
      // isSelfReferral is accepted for compatibility and then ignored: the service works it out from the e-mails.
      ...inputsOf(commissions, ['campaignId', 'referralCode', 'isSelfReferral', 'affiliateId', 'clickId']),
    }),
    referredTo: email,
  },
  ['commissionId', 'id', 'referredUser', 'createdAt', 'updatedAt', ...moneyTrail],
  { requireOneOf: ['affiliateId', 'clickId'] },
)

export const referredUserUpdate = schema(allOptional(referredEditable), [
  'commissionId', 'id', 'referredTo', 'referredUser', 'affiliateId', 'workspaceId', 'campaignId', 'referralCode', 'clickId',
  'isSelfReferral', 'createdAt', 'updatedAt', ...moneyTrail,
])

export const referredUserEmail = schema({ referredUser: email })

export const referredUserList = commissionList

/** `POST /commissions/refund`: `amount` defaults to what is left to refund. */
export const commissionRefund = schema({ commissionId: uuid, ...allOptional(inputsOf(commissions, ['amount'])) })
