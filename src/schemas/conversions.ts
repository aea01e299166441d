import { check, email, money, timestamp, uuid } from '../domain/checks.js'
import { MAX_AMOUNT } from '../domain/descriptions/campaigns.js'
import { providerId } from '../domain/descriptions/commissions.js'
import { customers } from '../domain/descriptions/customers.js'
import { referralCode } from '../domain/descriptions/links.js'
import { promoCode } from '../domain/descriptions/promo-codes.js'
import { inputsOf } from './model-schemas.js'
import { allOptional, schema } from './validate.js'

const { externalId, name, stripeCustomerId } = inputsOf(customers, ['externalId', 'name', 'stripeCustomerId'])

/** An amount of a sale or refund: more than zero, at most two decimals. */
const positiveAmount = money(MAX_AMOUNT, { positive: true })

// Any ISO 4217 code is taken: a sale in another currency than its campaign's is skipped
// (`currency_mismatch`), not refused, so a host can send every sale as it comes.
const CURRENCY = /^[A-Z]{3}$/
const saleCurrency = check<string>(
  'saleCurrency',
  { type: 'string', pattern: CURRENCY.source, description: 'The ISO 4217 code of the sale, such as USD.' },
  (value) => (typeof value === 'string' && CURRENCY.test(value)) || 'must be an ISO 4217 currency code of three capital letters',
)

/** The ways a lead or sale names who brought it; a lead takes exactly one. */
export const ATTRIBUTIONS = ['clickId', 'referralCode', 'promoCode', 'affiliateId'] as const

/** `POST /conversions/lead`. */
export const conversionLead = schema(
  {
    workspaceId: uuid,
    externalId,
    email,
    ...allOptional({ name, stripeCustomerId, clickId: uuid, referralCode, promoCode, affiliateId: uuid }),
  },
  [],
  { requireOneOf: [...ATTRIBUTIONS] },
)

/** `POST /conversions/sale`. */
export const conversionSale = schema(
  {
    workspaceId: uuid,
    ...allOptional({ externalId, clickId: uuid, referralCode, promoCode, email }),
    amount: positiveAmount,
    currency: saleCurrency,
    invoiceId: providerId,
    ...allOptional({ chargeId: providerId, subscriptionId: providerId, paidAt: timestamp }),
  },
  [],
  { requireOneOf: ['externalId', 'email'] },
)

/** `POST /conversions/refund`: `amount` is of the sale, and defaults to what is left of it. */
export const conversionRefund = schema(
  {
    workspaceId: uuid,
    ...allOptional({ invoiceId: providerId, chargeId: providerId, amount: positiveAmount, refundId: providerId }),
  },
  [],
  { requireOneOf: ['invoiceId', 'chargeId'] },
)
