import { bool, email, uuid, uuids } from '../domain/checks.js'
import { commissions } from '../domain/descriptions/commissions.js'
import { createSchema, inputsOf, listSchema, readOnlyOf, updateSchema } from './model-schemas.js'
import { allOptional, schema } from './validate.js'

export const commissionCreate = createSchema(commissions)

export const commissionUpdate = updateSchema(commissions)

export const commissionId = schema({ commissionId: uuid })

export const commissionList = listSchema(commissions)

// The referred-user routes: the same records, named by `referredTo` when created, with the
// signup's fields too (payoutDate, name, …) besides the commission's.

const commissionFields = ['amount', 'adminEarnedAmount', 'status', 'commissionDate', 'remarks'] as const
const signupFields = ['payoutDate', 'name', 'isWalletPayment', 'chargeId', 'invoiceId', 'stripeSubscriptionId'] as const
const referredEditable = allOptional(inputsOf(commissions, [...commissionFields, ...signupFields]))

const referredCreate = {
  ...referredEditable,
  // isSelfReferral is accepted for compatibility and then ignored: the service works it out from the e-mails.
  ...allOptional({
    workspaceId: uuid,
    ...inputsOf(commissions, ['campaignId', 'referralCode', 'isSelfReferral', 'affiliateId', 'clickId']),
  }),
  referredTo: email,
}

export const referredUserCreate = schema(referredCreate, readOnlyOf(commissions, referredCreate, 'referredUser'), {
  requireOneOf: ['affiliateId', 'clickId'],
})

export const referredUserUpdate = schema(referredEditable, [...readOnlyOf(commissions, referredEditable, 'referredUser'), 'referredTo'])

export const referredUserEmail = schema({ referredUser: email })

export const referredUserList = commissionList

/** `POST /commissions/refund`: `amount` defaults to what is left to refund; `dryRun` answers what would happen and writes nothing. */
export const commissionRefund = schema({ commissionId: uuid, ...allOptional({ ...inputsOf(commissions, ['amount']), dryRun: bool }) })

/** The most commissions one release or void may name. */
export const MAX_REVIEWED = 100

/** `POST /commissions/release` and `/commissions/void`: the held commissions to review (1 to 100), all or none. */
export const commissionReview = schema({ commissionIds: uuids(MAX_REVIEWED) })
