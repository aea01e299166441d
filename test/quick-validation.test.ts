import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as affiliates from '../src/schemas/affiliates.js'
import * as campaigns from '../src/schemas/campaigns.js'
import * as commissions from '../src/schemas/commissions.js'
import * as links from '../src/schemas/links.js'
import { fieldErrors, type Schema } from '../src/schemas/validate.js'
import { UNKNOWN_ID, WS_A } from './helpers.js'

// The quick path of `fieldErrors` (plain checks of flat fields) must answer exactly what
// superstruct answers, on valid and invalid input alike: it is compared here with the same schema
// with the quick path taken away.

const isSchema = (value: unknown): value is Schema<unknown> => typeof value === 'object' && value !== null && 'struct' in value
const schemas = Object.entries({ ...campaigns, ...affiliates, ...links, ...commissions } as Record<string, unknown>).flatMap(
  ([name, value]): [string, Schema<unknown>][] => (isSchema(value) ? [[name, value]] : []),
)

const values = fc.oneof(
  fc.constantFrom(
    '', 'a', '1', '0', '007', '100', '101', '1000001', '-1', '1.5', WS_A, UNKNOWN_ID, WS_A.toUpperCase(), 'a@example.com',
    'https://shop.example.com/', 'percentage', 'fixed', 'pending', 'paid', 'open', 'click', 'ASC', 'DESC', 'createdAt',
    'REF-AAAAAAAA', '2026-01-01T00:00:00.000Z', 'PAYPAL', '\u0000', 'x'.repeat(300),
  ),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -5, max: 200 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.constantFrom('ref', 'via', 'a b', 'ref'), { maxLength: 3 }),
  fc.array(fc.constantFrom('1', '2', WS_A), { minLength: 2, maxLength: 2 }),
)

/** A valid value for each field name, so that generated input is valid often enough to matter. */
const validByName: Record<string, unknown> = {
  campaignName: 'Spring', workspaceId: WS_A, commissionType: 'fixed', amount: 10, minimumPayoutAmount: '2.50',
  url: 'https://shop.example.com/', email: 'a@example.com', campaignId: UNKNOWN_ID, affiliateId: UNKNOWN_ID,
  referredUser: 'a@example.com', referredTo: 'b@example.com', referralCode: 'REF-AAAAAAAA', event: 'click',
  linkId: UNKNOWN_ID, commissionId: UNKNOWN_ID, page: '2', limit: '10', orderValue: 'ASC', status: 'pending',
  payoutMethod: null, remarks: 'ok', isActive: true, payoutTerm: 30, allowedUrlParameters: ['ref', 'via'],
  commissionDate: '2026-01-01T00:00:00.000Z', isWalletPayment: 1,
}

describe('quick validation', () => {
  it('every schema of the service is flat, so every request takes the quick path when valid', () => {
    expect(schemas.length).toBeGreaterThan(15)
    for (const [name, schema] of schemas) expect(schema.flat, name).toBeDefined()
  })

  it.each(schemas)('%s: answers what superstruct answers, value and errors', (_name, schema) => {
    const slow: Schema<unknown> = { ...schema, flat: undefined }
    const names = [...schema.fields, 'id', 'unknownField', 'toString']
    // Every required field valid, then some fields replaced, added or removed at random.
    const base = Object.fromEntries(
      [...schema.fields].filter((name) => !schema.flat!.find(([field]) => field === name)![1].check(undefined)).map((name) => [name, validByName[name]]),
    )
    const change = fc.oneof(values, fc.constantFrom(...Object.values(validByName)))
    const input = fc.tuple(fc.dictionary(fc.constantFrom(...names), change, { maxKeys: 4 }), fc.subarray(Object.keys(base))).map(
      ([changes, dropped]) => {
        const value: Record<string, unknown> = { ...base, ...changes }
        for (const name of dropped.slice(0, 1)) delete value[name]
        return value
      },
    )
    let valid = 0
    fc.assert(
      fc.property(input, fc.constantFrom('body' as const, 'query' as const), (value, location) => {
        const copy = { ...value }
        const quick = fieldErrors(schema, value, location)
        expect(value).toEqual(copy)
        expect(quick).toEqual(fieldErrors(slow, value, location))
        if (quick.errors.length === 0) valid++
      }),
      { numRuns: 400 },
    )
    expect(valid).toBeGreaterThan(0)
  })

  it('coerces query integers on the quick path as superstruct does, on a copy', () => {
    const query = { page: '2', limit: '10', workspaceId: WS_A }
    const answer = fieldErrors(campaigns.campaignList, query, 'query')
    expect(answer).toEqual({ value: { page: 2, limit: 10, workspaceId: WS_A }, errors: [] })
    expect(answer).toEqual(fieldErrors({ ...campaigns.campaignList, flat: undefined }, query, 'query'))
    expect(query.page).toBe('2')
  })
})
