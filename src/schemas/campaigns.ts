import { bool, currency, field, httpUrl, integer, money, nullable, oneOf, text, uuid } from './fields.js'
import { listQuery } from './list.js'
import { allOptional, schema } from './validate.js'

const PARAMETER = /^[A-Za-z0-9_.-]{1,64}$/

const urlParameters = field<string[]>(
  'urlParameters',
  { type: 'array', items: { type: 'string', pattern: PARAMETER.source }, minItems: 1, maxItems: 20, uniqueItems: true },
  (value) => {
    const ok =
      Array.isArray(value) &&
      value.length >= 1 &&
      value.length <= 20 &&
      value.every((item) => typeof item === 'string' && PARAMETER.test(item)) &&
      new Set(value).size === value.length
    return ok || 'must be a list of 1 to 20 distinct parameter names of letters, digits, _ . or -'
  },
)

/** Largest fixed amount, in currency units. Keeps every sum of minor units a safe integer. */
export const MAX_AMOUNT = 1_000_000_000

const editable = {
  campaignName: text(200, { min: 1 }),
  commissionType: oneOf(['percentage', 'fixed'] as const),
  amount: money(MAX_AMOUNT),
  minimumPayoutAmount: money(MAX_AMOUNT),
  url: httpUrl,
  requiresApprovalToJoin: bool,
  collectAdditionalInfo: bool,
  hideCustomerEmail: bool,
  payoutTerm: integer(0, 3650),
  affiliatePortalWelcomeMessage: text(5000),
  affiliateDashboardText: text(5000),
  stripeCouponId: text(255),
  allowedUrlParameters: urlParameters,
  isDefault: bool,
  currency,
  attributionWindowDays: integer(1, 365),
  recurringMonths: nullable(integer(0, 120)),
  maxCommissionsPerCustomer: nullable(
    field<number>('atLeastOne', { type: 'integer', minimum: 1 }, (value) => Number.isSafeInteger(value) && (value as number) >= 1 || 'must be an integer of 1 or more'),
  ),
}

const readOnly = ['id', 'payoutId', 'createdAt', 'updatedAt']

export const campaignCreate = schema(
  {
    ...allOptional(editable),
    campaignName: editable.campaignName,
    commissionType: editable.commissionType,
    amount: editable.amount,
    url: editable.url,
    workspaceId: uuid,
  },
  readOnly,
)

export const campaignUpdate = schema(allOptional(editable), [...readOnly, 'workspaceId'])

export const campaignId = schema({ campaignId: uuid })

export const campaignList = listQuery(['createdAt', 'updatedAt', 'campaignName'])
