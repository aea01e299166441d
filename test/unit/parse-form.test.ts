import { describe, expect, it } from 'vitest'
import { AffiliateError } from '../../src/errors.js'
import { campaignCreate, campaignList, campaignUpdate } from '../../src/schemas/campaigns.js'
import type { Form } from '../../src/site/form-reader.js'
import { parseForm, parseQuery } from '../../src/site/parse-form.js'

// A form's text becomes the route's request as each field's description says, then the route's own
// schema checks it: the admin's forms are refused as the API refuses the same request.

const WS = '11111111-1111-4111-8111-111111111111'
const formOf = (fields: Record<string, string | string[]>): Form => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) params.append(name, one)
  return { get: (name) => params.get(name) ?? '', all: (name) => params.getAll(name), has: (name) => params.has(name) }
}
const refusal = (run: () => unknown) => {
  try {
    run()
  } catch (error) {
    if (error instanceof AffiliateError) return error.errors?.map((e) => e.msg)
    throw error
  }
  throw new Error('not refused')
}

describe('parseForm', () => {
  const sent = { campaignName: 'Spring', url: 'https://shop.example.com', commissionType: 'fixed', amount: '5' }

  it('turns text into what each field holds: integers, booleans (a ticked box sends true after its hidden false), lists', () => {
    const input = parseForm(
      campaignCreate,
      formOf({
        ...sent,
        payoutTerm: '14',
        isDefault: ['false', 'true'],
        hideCustomerEmail: 'false',
        allowedUrlParameters: 'ref, via  src',
        csrf: 'x',
      }),
      { workspaceId: WS },
    )
    expect(input).toEqual({
      ...sent,
      workspaceId: WS,
      payoutTerm: 14,
      isDefault: true,
      hideCustomerEmail: false,
      allowedUrlParameters: ['ref', 'via', 'src'],
    })
  })

  it('leaves a blank field out of a new record (its default is stored), and keeps it on an edit: null where the field may be null', () => {
    expect(parseForm(campaignCreate, formOf({ ...sent, recurringMonths: '', stripeCouponId: '' }), { workspaceId: WS })).not.toHaveProperty(
      'recurringMonths',
    )
    expect(parseForm(campaignUpdate, formOf({ recurringMonths: '', stripeCouponId: '' }), {}, { keep: true })).toEqual({
      recurringMonths: null,
      stripeCouponId: '',
    })
  })

  it("refuses with the route's own messages, text that is no number passed on as typed", () => {
    expect(refusal(() => parseForm(campaignUpdate, formOf({ payoutTerm: 'soon', url: 'nope' })))?.sort()).toEqual([
      'payoutTerm must be an integer from 0 to 3650',
      'url must be an http or https URL',
    ])
    expect(refusal(() => parseForm(campaignCreate, formOf({ url: 'https://x.example.com' }), { workspaceId: WS }))).toEqual([
      'campaignName is required',
      'commissionType is required',
      'amount is required',
    ])
  })
})

describe('parseQuery', () => {
  it("takes the list route's filters from a URL, blank ones left out, and checks them", () => {
    const params = new URLSearchParams({ contains: 'spr', orderType: 'campaignName', page: '2', orderValue: '', notice: 'x' })
    expect(parseQuery(campaignList, params, { workspaceId: WS, limit: 20 })).toEqual({
      contains: 'spr',
      orderType: 'campaignName',
      page: 2,
      workspaceId: WS,
      limit: 20,
    })
    expect(refusal(() => parseQuery(campaignList, new URLSearchParams({ orderType: 'amount' })))).toEqual([
      'orderType must be one of: createdAt, updatedAt, campaignName',
    ])
  })
})
