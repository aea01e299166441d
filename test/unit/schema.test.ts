import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { toAffiliate } from '../../src/domain/affiliate.js'
import { toCampaign } from '../../src/domain/campaign.js'
import { toCommission, toReferredUser } from '../../src/domain/commission.js'
import { toLink } from '../../src/domain/link.js'
import { answerJsonSchema } from '../../src/domain/answers.js'
import { fieldJsonSchema } from '../../src/domain/describe.js'
import { descriptions as schema } from '../../src/domain/descriptions/index.js'
import { models } from '../../src/storage/index.js'
import { affiliate, campaign, commission, link } from '../../src/storage/sample-records.js'

// The one description of the records: the answers derived from it match their JSON Schemas, in
// the order and names the API has always used.
const ajv = new Ajv({ strict: true, allErrors: true })
addFormats.default(ajv)

const answers = [
  ['campaigns', 'campaign', () => toCampaign(campaign({ amountMinor: 12_50, allowedUrlParameters: ['ref'] }))],
  ['affiliates', 'affiliate', () => toAffiliate(affiliate({ totalEarningsMinor: 1_05, payoutMethod: null }))],
  ['links', 'link', () => toLink(link({ totalEarningsMinor: 99 }))],
  ['commissions', 'commission', () => toCommission(commission({ amountMinor: 12_50, remarks: null }))],
  ['commissions', 'referredUser', () => toReferredUser(commission({ payoutDate: '2026-01-02T03:04:05.000Z', name: 'N' }))],
] as const

describe.each(answers)('the %s answer %s', (model, answer, make) => {
  it('matches its JSON Schema, every field present and no other', () => {
    const validate = ajv.compile(answerJsonSchema(model, answer))
    const value = make()
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true)
    expect(Object.keys(value)).toEqual(Object.keys(answerJsonSchema(model, answer).properties as object))
  })
})

it('answers keep their names, order and money forms', () => {
  const record = commission({ amountMinor: 12_50, adminEarnedMinor: 3, referralCode: 'REF-1', saleAmountMinor: 62_50, invoiceId: 'in_1' })
  expect(Object.entries(toCommission(record))).toEqual([
    ['commissionId', record.id],
    ['campaignId', record.campaignId],
    ['workspaceId', record.workspaceId],
    ['affiliateId', record.affiliateId],
    ['referredUser', record.referredUser],
    ['amount', '12.50'],
    ['adminEarnedAmount', '0.03'],
    ['status', 'pending'],
    ['commissionDate', record.commissionDate],
    ['remarks', null],
    ['referralCode', 'REF-1'],
    ['kind', 'sale'],
    ['dueAt', record.dueAt],
    ['payoutId', null],
    ['refundedAmount', '0.00'],
    ['reversesCommissionId', null],
    ['saleAmount', '62.50'],
    ['currency', 'EUR'],
    ['customerId', null],
    ['invoiceId', 'in_1'],
    ['chargeId', null],
    ['stripeSubscriptionId', null],
    ['paymentIntentId', null],
    ['holdReasons', []],
    ['createdAt', record.createdAt],
    ['updatedAt', record.updatedAt],
  ])
  // A nullable amount is null in answers, not "0.00".
  expect(toCommission(commission({ saleAmountMinor: null })).saleAmount).toBeNull()
  const stored = campaign({ amountMinor: 12_50, minimumPayoutMinor: 1_00, allowedUrlParameters: ['a'] })
  const answered = toCampaign(stored)
  expect(answered).toMatchObject({ amount: 12.5, minimumPayoutAmount: 1 })
  expect(answered.allowedUrlParameters).not.toBe(stored.allowedUrlParameters)
})

it('each field gives its JSON Schema: timestamps are date-time, nullable fields allow null, enums list their values', () => {
  expect(fieldJsonSchema(schema.commissions.fields.createdAt)).toEqual({ type: 'string', format: 'date-time' })
  expect(fieldJsonSchema(schema.commissions.fields.payoutDate)).toEqual({ type: ['string', 'null'], format: 'date-time' })
  expect(fieldJsonSchema(schema.commissions.fields.amountMinor)).toMatchObject({ type: 'string' })
  expect(fieldJsonSchema(schema.campaigns.fields.amountMinor)).toMatchObject({ type: 'number' })
  expect(fieldJsonSchema(schema.affiliates.fields.payoutMethod)).toMatchObject({
    type: ['string', 'null'],
    enum: ['PAYPAL', 'WISE', 'BANK_TRANSFER', null],
  })
})

it('models derive from the description: constraints, look-ups and search fields', () => {
  expect(models.links.unique).toEqual([{ name: 'links_referral_code', fields: ['referralCode'] }])
  expect(models.commissions.indexes).toContainEqual(['workspaceId', 'status'])
  expect(models.affiliates.search).toEqual(['email', 'firstName', 'lastName'])
  expect(models.commissions.fields.find((field) => field.name === 'remarks')).toEqual({ name: 'remarks', kind: 'text', nullable: true })
})
