import { describe, expect, it } from 'vitest'
import {
  apiCampaignInput,
  campaignInput,
  expectValidation,
  fieldError,
  KEY_A,
  KEY_B,
  setup,
  UNKNOWN_ID,
  WS_A,
  WS_A2,
  WS_B,
} from '../support/helpers.js'

// Campaign routes over HTTP (service.fetch): create, read, update, delete, list.

const JSON_TYPE = 'application/json; charset=utf-8'
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const T0 = '2026-01-01T00:00:00.000Z'
const FORBIDDEN = { status: 403, code: 'forbidden', message: 'You do not have access to this workspace' }
const NOT_FOUND = '{"status":404,"code":"not_found","message":"Campaign not found"}'
const AMOUNT_MSG = 'amount must be a non-negative number with at most two decimals'
const PERCENT_MSG = 'amount must be from 0 to 100 for a percentage campaign'

type Ctx = ReturnType<typeof setup>

/** Creates a campaign over HTTP and answers its data; fails the test unless it is a 201. */
async function create({ call }: Ctx, overrides: Record<string, unknown> = {}, key = KEY_A) {
  const response = await call('POST', '/campaigns', { key, body: campaignInput(overrides) })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.data
}

const names = (response: { body: any }) => response.body.data.items.map((item: { campaignName: string }) => item.campaignName)

describe('POST /campaigns', () => {
  it('answers 201 with the campaign, its defaults, a payoutId and the clock time', async () => {
    const ctx = setup()
    ctx.clock.advance(1500)
    const response = await ctx.call('POST', '/campaigns', { body: campaignInput() })
    expect(response.status).toBe(201)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(Object.keys(response.body)).toEqual(['status', 'message', 'data'])
    expect(response.body.status).toBe(201)
    expect(response.body.message).toBe('Campaign created successfully')
    const data = response.body.data
    expect(data).toStrictEqual({
      id: expect.stringMatching(UUID_V4),
      campaignName: 'Spring launch',
      workspaceId: WS_A,
      commissionType: 'percentage',
      amount: 20,
      minimumPayoutAmount: 0,
      payoutId: expect.stringMatching(UUID_V4),
      url: 'https://shop.example.com/landing',
      requiresApprovalToJoin: false,
      collectAdditionalInfo: false,
      hideCustomerEmail: false,
      payoutTerm: 0,
      affiliatePortalWelcomeMessage: '',
      affiliateDashboardText: '',
      stripeCouponId: '',
      allowedUrlParameters: ['ref'],
      beaconInstalled: false,
      isDefault: false,
      currency: 'USD',
      attributionWindowDays: 30,
      recurringMonths: null,
      maxCommissionsPerCustomer: null,
      fraudRules: { self_referral: 'block', disposable_email: 'flag', paid_ad_click: 'off', address_burst: 'flag', refund_rate: 'flag' },
      createdAt: '2026-01-01T00:00:01.500Z',
      updatedAt: '2026-01-01T00:00:01.500Z',
    })
    expect(data.payoutId).not.toBe(data.id)
  })

  it('stores and answers every field it is given', async () => {
    const ctx = setup()
    const full = {
      campaignName: 'Partner program',
      workspaceId: WS_A2,
      commissionType: 'fixed',
      amount: 12.5,
      minimumPayoutAmount: 50,
      url: 'https://app.example.com/signup?plan=pro#top',
      requiresApprovalToJoin: true,
      collectAdditionalInfo: true,
      hideCustomerEmail: true,
      payoutTerm: 45,
      affiliatePortalWelcomeMessage: 'Welcome aboard',
      affiliateDashboardText: 'Share your link',
      stripeCouponId: 'COUPON_10',
      allowedUrlParameters: ['ref', 'via', 'a.b-c_d'],
      beaconInstalled: true,
      isDefault: true,
      currency: 'EUR',
      attributionWindowDays: 90,
      recurringMonths: 12,
      maxCommissionsPerCustomer: 3,
      fraudRules: { self_referral: 'flag', disposable_email: 'block', paid_ad_click: 'flag', address_burst: 'off', refund_rate: 'block' },
    }
    const data = await create(ctx, full)
    expect(data).toEqual({ ...full, id: data.id, payoutId: data.payoutId, createdAt: T0, updatedAt: T0 })
    expect((await ctx.call('GET', `/campaigns?campaignId=${data.id}`)).body.data).toEqual(data)
  })

  it('gives every campaign its own id and payoutId', async () => {
    const ctx = setup()
    const one = await create(ctx)
    const two = await create(ctx)
    expect(new Set([one.id, one.payoutId, two.id, two.payoutId]).size).toBe(4)
  })

  it('names every missing required field', async () => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns', { body: {} }), [
      fieldError('campaignName', 'campaignName is required'),
      fieldError('workspaceId', 'workspaceId is required'),
      fieldError('commissionType', 'commissionType is required'),
      fieldError('amount', 'amount is required'),
      fieldError('url', 'url is required'),
    ])
  })

  it.each(['campaignName', 'workspaceId', 'commissionType', 'amount', 'url'])('requires %s', async (field) => {
    const { call } = setup()
    const body: Record<string, unknown> = campaignInput()
    delete body[field]
    expectValidation(await call('POST', '/campaigns', { body }), [fieldError(field, `${field} is required`)])
  })

  it('names unknown and read-only fields, and applies none of them', async () => {
    const { call } = setup()
    const response = await call('POST', '/campaigns', {
      body: campaignInput({ id: UNKNOWN_ID, payoutId: UNKNOWN_ID, createdAt: T0, updatedAt: T0, colour: 'red', totalClicks: 3 }),
    })
    expectValidation(response, [
      fieldError('id', 'id is read-only'),
      fieldError('payoutId', 'payoutId is read-only'),
      fieldError('createdAt', 'createdAt is read-only'),
      fieldError('updatedAt', 'updatedAt is read-only'),
      fieldError('colour', 'colour is not a known field'),
      fieldError('totalClicks', 'totalClicks is not a known field'),
    ])
    expect((await call('GET', '/campaigns/list')).body.data.pagination.total).toBe(0)
  })

  it.each([
    ['three decimals', 12.345],
    ['negative', -1],
    ['a word', 'abc'],
    ['"NaN"', 'NaN'],
    ['"Infinity"', 'Infinity'],
    ['exponent notation beyond two decimals', 1e-7],
    ['null', null],
    ['a boolean', true],
    ['an empty string', ''],
  ])('refuses an amount that is %s', async (_, amount) => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns', { body: campaignInput({ amount }) }), [fieldError('amount', AMOUNT_MSG)])
  })

  it.each([
    ['three decimals', 0.001],
    ['negative', -0.5],
  ])('refuses a minimumPayoutAmount that is %s', async (_, minimumPayoutAmount) => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns', { body: campaignInput({ minimumPayoutAmount }) }), [
      fieldError('minimumPayoutAmount', 'minimumPayoutAmount must be a non-negative number with at most two decimals'),
    ])
  })

  it('accepts two decimals, zero and a percentage of exactly 100', async () => {
    const ctx = setup()
    expect((await create(ctx, { amount: 99.99 })).amount).toBe(99.99)
    expect((await create(ctx, { amount: 0 })).amount).toBe(0)
    expect((await create(ctx, { amount: 100 })).amount).toBe(100)
    expect((await create(ctx, { amount: 0.1, minimumPayoutAmount: 0.01 })).minimumPayoutAmount).toBe(0.01)
  })

  it('refuses a percentage over 100, but not a fixed amount over 100', async () => {
    const ctx = setup()
    for (const amount of [100.01, 101, 5000]) {
      expectValidation(await ctx.call('POST', '/campaigns', { body: campaignInput({ amount }) }), [fieldError('amount', PERCENT_MSG)])
    }
    expect((await create(ctx, { commissionType: 'fixed', amount: 5000 })).amount).toBe(5000)
    expect((await ctx.call('GET', '/campaigns/list')).body.data.pagination.total).toBe(1)
  })

  it('names a percentage over 100 together with the other failing fields', async () => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns', { body: campaignInput({ amount: 150, url: 'not a url' }) }), [
      fieldError('amount', PERCENT_MSG),
      fieldError('url', 'url must be an http or https URL'),
    ])
  })

  it('names amount once when it is both too large and over 100 percent', async () => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns', { body: campaignInput({ amount: 2_000_000_000, url: 'x' }) }), [
      fieldError('amount', 'amount must be at most 1000000000'),
      fieldError('url', 'url must be an http or https URL'),
    ])
  })

  it.each([
    ['campaignName', '', 'campaignName must not be empty'],
    ['campaignName', 42, 'campaignName must be a string'],
    ['campaignName', 'x'.repeat(201), 'campaignName must have at most 200 characters'],
    ['workspaceId', 'not-a-uuid', 'workspaceId must be a UUID'],
    ['commissionType', 'flat', 'commissionType must be one of: percentage, fixed'],
    ['url', 'ftp://files.example.com', 'url must be an http or https URL'],
    ['url', 'not a url', 'url must be an http or https URL'],
    ['requiresApprovalToJoin', 'true', 'requiresApprovalToJoin must be true or false'],
    ['collectAdditionalInfo', 1, 'collectAdditionalInfo must be true or false'],
    ['hideCustomerEmail', null, 'hideCustomerEmail must be true or false'],
    ['isDefault', 'yes', 'isDefault must be true or false'],
    ['payoutTerm', 30.5, 'payoutTerm must be an integer from 0 to 3650'],
    ['payoutTerm', -1, 'payoutTerm must be an integer from 0 to 3650'],
    ['payoutTerm', '30', 'payoutTerm must be an integer from 0 to 3650'],
    ['stripeCouponId', null, 'stripeCouponId must be a string'],
    ['affiliatePortalWelcomeMessage', 'x'.repeat(5001), 'affiliatePortalWelcomeMessage must have at most 5000 characters'],
  ])('refuses %s = %j', async (field, value, msg) => {
    const { call } = setup()
    expectValidation(await call('POST', '/campaigns', { body: campaignInput({ [field]: value }) }), [fieldError(field, msg)])
  })

  it.each([
    ['an empty list', []],
    ['a repeated name', ['ref', 'ref']],
    ['a name with a space', ['my ref']],
    ['a string', 'ref'],
    ['a list with a number', ['ref', 7]],
  ])('refuses allowedUrlParameters that is %s', async (_, allowedUrlParameters) => {
    const { call } = setup()
    const response = await call('POST', '/campaigns', { body: campaignInput({ allowedUrlParameters }) })
    expectValidation(response, [
      fieldError(
        'allowedUrlParameters',
        'allowedUrlParameters must be a list of 1 to 20 distinct parameter names of letters, digits, _ . or -',
      ),
    ])
  })

  it('answers one entry per failing field when many fail', async () => {
    const { call } = setup()
    const response = await call('POST', '/campaigns', {
      body: { campaignName: '', workspaceId: 'x', commissionType: 'percentage', amount: 1.234, url: 'nope', payoutTerm: 'soon', extra: 1 },
    })
    expectValidation(response, [
      fieldError('campaignName', 'campaignName must not be empty'),
      fieldError('workspaceId', 'workspaceId must be a UUID'),
      fieldError('amount', AMOUNT_MSG),
      fieldError('url', 'url must be an http or https URL'),
      fieldError('payoutTerm', 'payoutTerm must be an integer from 0 to 3650'),
      fieldError('extra', 'extra is not a known field'),
    ])
  })

  it("answers 403 for a workspace that is not the caller's, and stores nothing", async () => {
    const ctx = setup()
    for (const [key, workspaceId] of [
      [KEY_A, WS_B],
      [KEY_B, WS_A],
      [KEY_B, WS_A2],
      [KEY_A, UNKNOWN_ID],
    ] as const) {
      const response = await ctx.call('POST', '/campaigns', { key, body: campaignInput({ workspaceId }) })
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(response.body).toEqual(FORBIDDEN)
    }
    expect((await ctx.api.campaigns.list()).pagination.total).toBe(0)
  })
})

describe('POST /campaigns: one default per workspace', () => {
  it('making a campaign default clears the previous default of its workspace only', async () => {
    const ctx = setup()
    const first = await create(ctx, { campaignName: 'First', isDefault: true })
    const otherWorkspace = await create(ctx, { campaignName: 'Other', workspaceId: WS_A2, isDefault: true })
    const foreign = await create(ctx, { campaignName: 'Foreign', workspaceId: WS_B, isDefault: true }, KEY_B)
    ctx.clock.advance(60_000)
    const second = await create(ctx, { campaignName: 'Second', isDefault: true })
    expect(second.isDefault).toBe(true)

    const firstNow = (await ctx.call('GET', `/campaigns?campaignId=${first.id}`)).body.data
    expect(firstNow.isDefault).toBe(false)
    expect(firstNow.updatedAt).toBe('2026-01-01T00:01:00.000Z')
    expect((await ctx.call('GET', `/campaigns?campaignId=${otherWorkspace.id}`)).body.data).toEqual(otherWorkspace)
    expect((await ctx.call('GET', `/campaigns?campaignId=${foreign.id}`, { key: KEY_B })).body.data).toEqual(foreign)
  })

  it('creating a campaign that is not default leaves the default alone', async () => {
    const ctx = setup()
    const first = await create(ctx, { isDefault: true })
    await create(ctx, { isDefault: false })
    await create(ctx)
    expect((await ctx.call('GET', `/campaigns?campaignId=${first.id}`)).body.data).toEqual(first)
  })

  it('making one default through PUT clears the previous one', async () => {
    const ctx = setup()
    const first = await create(ctx, { isDefault: true })
    const second = await create(ctx)
    ctx.clock.advance(1000)
    const updated = await ctx.call('PUT', `/campaigns?campaignId=${second.id}`, { body: { isDefault: true } })
    expect(updated.body.data.isDefault).toBe(true)
    const firstNow = (await ctx.call('GET', `/campaigns?campaignId=${first.id}`)).body.data
    expect(firstNow).toEqual({ ...first, isDefault: false, updatedAt: '2026-01-01T00:00:01.000Z' })
    const defaults = (await ctx.api.campaigns.list({ workspaceId: WS_A })).items.filter((c) => c.isDefault)
    expect(defaults.map((c) => c.id)).toEqual([second.id])
  })

  it('setting the default again on the default itself keeps it default', async () => {
    const ctx = setup()
    const first = await create(ctx, { isDefault: true })
    const again = await ctx.call('PUT', `/campaigns?campaignId=${first.id}`, { body: { isDefault: true } })
    expect(again.body.data.isDefault).toBe(true)
  })
})

describe('GET /campaigns', () => {
  it('answers the campaign', async () => {
    const ctx = setup()
    const created = await create(ctx)
    const response = await ctx.call('GET', `/campaigns?campaignId=${created.id}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 200, message: 'Campaign retrieved successfully', data: created })
  })

  it('finds the campaign whatever the case of its id', async () => {
    const ctx = setup()
    const created = await create(ctx)
    expect((await ctx.call('GET', `/campaigns?campaignId=${created.id.toUpperCase()}`)).body.data).toEqual(created)
  })

  it('answers 400 without a campaignId, or with one that is not a UUID', async () => {
    const { call } = setup()
    expectValidation(await call('GET', '/campaigns'), [fieldError('campaignId', 'campaignId is required', 'query')])
    expectValidation(await call('GET', '/campaigns?campaignId='), [fieldError('campaignId', 'campaignId must be a UUID', 'query')])
    expectValidation(await call('GET', '/campaigns?campaignId=42'), [fieldError('campaignId', 'campaignId must be a UUID', 'query')])
    expectValidation(await call('GET', `/campaigns?id=${UNKNOWN_ID}`), [
      fieldError('campaignId', 'campaignId is required', 'query'),
      fieldError('id', 'id is not a known field', 'query'),
    ])
  })

  it("answers 404 alike for an unknown id and for another workspace's campaign", async () => {
    const ctx = setup()
    const theirs = await create(ctx, { workspaceId: WS_B }, KEY_B)
    const unknown = await ctx.call('GET', `/campaigns?campaignId=${UNKNOWN_ID}`)
    const foreign = await ctx.call('GET', `/campaigns?campaignId=${theirs.id}`)
    for (const response of [unknown, foreign]) {
      expect(response.status).toBe(404)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(response.text).toBe(NOT_FOUND)
    }
    expect([...foreign.headers]).toEqual([...unknown.headers])
    expect((await ctx.call('GET', `/campaigns?campaignId=${theirs.id}`, { key: KEY_B })).status).toBe(200)
  })

  it('lets a key read every one of its workspaces', async () => {
    const ctx = setup()
    const inA2 = await create(ctx, { workspaceId: WS_A2 })
    expect((await ctx.call('GET', `/campaigns?campaignId=${inA2.id}`)).body.data).toEqual(inA2)
  })
})

describe('PUT /campaigns', () => {
  it('changes only the fields sent and moves updatedAt to the clock time', async () => {
    const ctx = setup()
    const created = await create(ctx)
    ctx.clock.advance(90_000)
    const response = await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, { body: { campaignName: 'Summer sale', payoutTerm: 30 } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body.message).toBe('Campaign updated successfully')
    expect(response.body.status).toBe(200)
    expect(response.body.data).toStrictEqual({
      ...created,
      campaignName: 'Summer sale',
      payoutTerm: 30,
      updatedAt: '2026-01-01T00:01:30.000Z',
    })
    expect((await ctx.call('GET', `/campaigns?campaignId=${created.id}`)).body.data).toEqual(response.body.data)
  })

  it('rebuilds the url of the campaign links when its url changes', async () => {
    const ctx = setup()
    const created = await create(ctx, { url: 'https://shop.example.com/landing', allowedUrlParameters: ['ref', 'via'] })
    const affiliate = await ctx.api.affiliates.create({ email: 'ann@example.com', campaignId: created.id })
    await ctx.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-1' })
    await ctx.api.links.create({ affiliateId: affiliate.id, referralCode: 'ANN-2', urlParameter: 'via' })
    const response = await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, { body: { url: 'https://shop.example.com/spring?x=1' } })
    expect(response.status).toBe(200)
    expect(response.body.data.url).toBe('https://shop.example.com/spring?x=1')
    const links = (await ctx.call('GET', `/links?affiliateId=${affiliate.id}`)).body.data.items
    expect(links.map((link: { url: string }) => link.url).sort()).toEqual([
      'https://shop.example.com/spring?x=1&ref=ANN-1',
      'https://shop.example.com/spring?x=1&via=ANN-2',
    ])
  })

  it('changes every editable field at once, keeping id, payoutId, workspace and createdAt', async () => {
    const ctx = setup()
    const created = await create(ctx)
    ctx.clock.advance(5)
    const changes = {
      campaignName: 'All new',
      commissionType: 'fixed',
      amount: 250.5,
      minimumPayoutAmount: 25,
      url: 'http://new.example.org/',
      requiresApprovalToJoin: true,
      collectAdditionalInfo: true,
      hideCustomerEmail: true,
      payoutTerm: 45,
      affiliatePortalWelcomeMessage: 'Hi',
      affiliateDashboardText: 'Text',
      stripeCouponId: 'C1',
      allowedUrlParameters: ['via'],
      beaconInstalled: true,
      isDefault: true,
      currency: 'GBP',
      attributionWindowDays: 7,
      recurringMonths: 0,
      maxCommissionsPerCustomer: 1,
      fraudRules: { self_referral: 'off', disposable_email: 'off', paid_ad_click: 'block', address_burst: 'block', refund_rate: 'off' },
    }
    const response = await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, { body: changes })
    expect(response.body.data).toStrictEqual({
      ...changes,
      id: created.id,
      payoutId: created.payoutId,
      workspaceId: WS_A,
      createdAt: T0,
      updatedAt: '2026-01-01T00:00:00.005Z',
    })
  })

  it('refuses workspaceId and the other read-only fields, and unknown ones, changing nothing', async () => {
    const ctx = setup()
    const created = await create(ctx)
    const response = await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, {
      body: { campaignName: 'Sneaky', workspaceId: WS_A2, id: UNKNOWN_ID, payoutId: UNKNOWN_ID, createdAt: T0, updatedAt: T0, bogus: true },
    })
    expectValidation(response, [
      fieldError('workspaceId', 'workspaceId is read-only'),
      fieldError('id', 'id is read-only'),
      fieldError('payoutId', 'payoutId is read-only'),
      fieldError('createdAt', 'createdAt is read-only'),
      fieldError('updatedAt', 'updatedAt is read-only'),
      fieldError('bogus', 'bogus is not a known field'),
    ])
    expect((await ctx.call('GET', `/campaigns?campaignId=${created.id}`)).body.data).toEqual(created)
  })

  it.each([
    ['CR LF', 'https://shop.example.com/\r\nSet-Cookie: x=1'],
    ['a tab', 'https://shop.example.com/a\tb'],
    ['NUL', 'https://shop.example.com/\u0000'],
    ['DEL', 'https://shop.example.com/\u007f'],
    ['a C1 control', 'https://shop.example.com/\u0085'],
  ])('refuses a url with %s on create and on update (400), and stores nothing', async (_, url) => {
    const ctx = setup()
    const created = await create(ctx)
    const msg = 'url must be an http or https URL without control characters (such as CR, LF or tab)'
    expectValidation(await ctx.call('POST', '/campaigns', { body: campaignInput({ url }) }), [fieldError('url', msg)])
    expectValidation(await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, { body: { url } }), [fieldError('url', msg)])
    expect((await ctx.call('GET', `/campaigns?campaignId=${created.id}`)).body.data).toEqual(created)
    expect((await ctx.call('GET', `/campaigns/list?workspaceId=${created.workspaceId}`)).body.data.items).toHaveLength(1)
  })

  it('validates each field as on create', async () => {
    const ctx = setup()
    const created = await create(ctx)
    const response = await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, {
      body: { campaignName: '', amount: -2, url: 'mailto:a@b.c', commissionType: 'tiered', minimumPayoutAmount: 1.005 },
    })
    expectValidation(response, [
      fieldError('campaignName', 'campaignName must not be empty'),
      fieldError('amount', AMOUNT_MSG),
      fieldError('url', 'url must be an http or https URL'),
      fieldError('commissionType', 'commissionType must be one of: percentage, fixed'),
      fieldError('minimumPayoutAmount', 'minimumPayoutAmount must be a non-negative number with at most two decimals'),
    ])
  })

  it('names query and body failures in one answer', async () => {
    const { call } = setup()
    expectValidation(await call('PUT', '/campaigns', { body: { campaignName: '' } }), [
      fieldError('campaignId', 'campaignId is required', 'query'),
      fieldError('campaignName', 'campaignName must not be empty'),
    ])
  })

  it('answers 400 to an empty body', async () => {
    const ctx = setup()
    const created = await create(ctx)
    const response = await ctx.call('PUT', `/campaigns?campaignId=${created.id}`, { body: {} })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({ status: 400, code: 'invalid_body', message: 'Nothing to update: the request body names no field' })
  })

  it('refuses a percentage over 100 whichever of type and amount changes', async () => {
    const ctx = setup()
    const created = await create(ctx, { amount: 50 })
    const put = (body: object) => ctx.call('PUT', `/campaigns?campaignId=${created.id}`, { body })
    expectValidation(await put({ amount: 150 }), [fieldError('amount', PERCENT_MSG)])
    expect((await put({ commissionType: 'fixed', amount: 150 })).body.data).toMatchObject({ commissionType: 'fixed', amount: 150 })
    expectValidation(await put({ commissionType: 'percentage' }), [fieldError('amount', PERCENT_MSG)])
    expect((await put({ commissionType: 'percentage', amount: 100 })).body.data).toMatchObject({
      commissionType: 'percentage',
      amount: 100,
    })
    expectValidation(await put({ commissionType: 'percentage', amount: 150, url: 'bad' }), [
      fieldError('amount', PERCENT_MSG),
      fieldError('url', 'url must be an http or https URL'),
    ])
    expect((await ctx.call('GET', `/campaigns?campaignId=${created.id}`)).body.data).toMatchObject({
      commissionType: 'percentage',
      amount: 100,
    })
  })

  it("answers 404 alike for an unknown id and another workspace's campaign, and leaves theirs alone", async () => {
    const ctx = setup()
    const theirs = await create(ctx, { workspaceId: WS_B }, KEY_B)
    const unknown = await ctx.call('PUT', `/campaigns?campaignId=${UNKNOWN_ID}`, { body: { campaignName: 'Mine now' } })
    const foreign = await ctx.call('PUT', `/campaigns?campaignId=${theirs.id}`, { body: { campaignName: 'Mine now' } })
    expect(unknown.status).toBe(404)
    expect(foreign.status).toBe(404)
    expect(foreign.text).toBe(NOT_FOUND)
    expect(unknown.text).toBe(NOT_FOUND)
    expect((await ctx.call('GET', `/campaigns?campaignId=${theirs.id}`, { key: KEY_B })).body.data).toEqual(theirs)
  })
})

describe('DELETE /campaigns', () => {
  it('deletes the campaign and answers its id', async () => {
    const ctx = setup()
    const created = await create(ctx)
    const kept = await create(ctx, { campaignName: 'Kept' })
    const response = await ctx.call('DELETE', `/campaigns?campaignId=${created.id}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 200, message: 'Campaign deleted successfully', data: { id: created.id } })
    expect((await ctx.call('GET', `/campaigns?campaignId=${created.id}`)).text).toBe(NOT_FOUND)
    expect((await ctx.call('DELETE', `/campaigns?campaignId=${created.id}`)).text).toBe(NOT_FOUND)
    expect(names(await ctx.call('GET', '/campaigns/list'))).toEqual([kept.campaignName])
  })

  it('answers 400 without a campaignId', async () => {
    const { call } = setup()
    expectValidation(await call('DELETE', '/campaigns'), [fieldError('campaignId', 'campaignId is required', 'query')])
    expectValidation(await call('DELETE', '/campaigns?campaignId=abc'), [fieldError('campaignId', 'campaignId must be a UUID', 'query')])
  })

  it("answers 404 alike for an unknown id and another workspace's campaign, which survives", async () => {
    const ctx = setup()
    const theirs = await create(ctx, { workspaceId: WS_B }, KEY_B)
    const unknown = await ctx.call('DELETE', `/campaigns?campaignId=${UNKNOWN_ID}`)
    const foreign = await ctx.call('DELETE', `/campaigns?campaignId=${theirs.id}`)
    expect([unknown.status, foreign.status]).toEqual([404, 404])
    expect(foreign.text).toBe(unknown.text)
    expect(foreign.text).toBe(NOT_FOUND)
    expect((await ctx.call('GET', `/campaigns?campaignId=${theirs.id}`, { key: KEY_B })).status).toBe(200)
  })

  it('answers 422 while the campaign has affiliates, and deletes it once they are gone', async () => {
    const ctx = setup()
    const campaign = await create(ctx)
    const affiliate = await ctx.call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId: campaign.id } })
    const refused = await ctx.call('DELETE', `/campaigns?campaignId=${campaign.id}`)
    expect(refused.status).toBe(422)
    expect(refused.headers.get('content-type')).toBe(JSON_TYPE)
    expect(refused.body).toEqual({ status: 422, code: 'has_dependents', message: 'This campaign still has affiliates; delete them first' })
    expect((await ctx.call('GET', `/campaigns?campaignId=${campaign.id}`)).body.data).toEqual(campaign)
    expect((await ctx.call('DELETE', `/affiliates?affiliateId=${affiliate.body.data.id}`)).status).toBe(200)
    expect((await ctx.call('DELETE', `/campaigns?campaignId=${campaign.id}`)).status).toBe(200)
  })

  it('is not held back by affiliates of another campaign', async () => {
    const ctx = setup()
    const busy = await create(ctx, { campaignName: 'Busy' })
    const idle = await create(ctx, { campaignName: 'Idle' })
    await ctx.call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId: busy.id } })
    expect((await ctx.call('DELETE', `/campaigns?campaignId=${idle.id}`)).status).toBe(200)
  })
})

describe('GET /campaigns/list', () => {
  /** `count` campaigns in WS_A named `C01`..., one second apart. */
  async function many(ctx: Ctx, count: number) {
    const made = []
    for (let i = 1; i <= count; i++) {
      made.push(await ctx.api.campaigns.create(apiCampaignInput({ campaignName: `C${String(i).padStart(2, '0')}` })))
      ctx.clock.advance(1000)
    }
    return made
  }

  it('answers the first 10, newest first, with the pagination', async () => {
    const ctx = setup()
    await many(ctx, 12)
    const response = await ctx.call('GET', '/campaigns/list')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body.message).toBe('Campaigns retrieved successfully')
    expect(response.body.status).toBe(200)
    expect(Object.keys(response.body.data)).toEqual(['items', 'pagination'])
    expect(names(response)).toEqual(['C12', 'C11', 'C10', 'C09', 'C08', 'C07', 'C06', 'C05', 'C04', 'C03'])
    expect(response.body.data.pagination).toEqual({ page: 1, limit: 10, total: 12, totalPages: 2 })
  })

  it('answers items in the same shape as GET /campaigns', async () => {
    const ctx = setup()
    const created = await create(ctx)
    expect((await ctx.call('GET', '/campaigns/list')).body.data.items).toEqual([created])
  })

  it('pages through the whole list, and past its end answers no items', async () => {
    const ctx = setup()
    await many(ctx, 25)
    const page = async (n: number, limit = 10) =>
      (await ctx.call('GET', `/campaigns/list?page=${n}&limit=${limit}&orderValue=ASC`)).body.data
    const pages = [await page(1), await page(2), await page(3)]
    expect(pages.map((p) => p.items.length)).toEqual([10, 10, 5])
    expect(pages.flatMap((p) => p.items.map((c: { campaignName: string }) => c.campaignName))).toEqual(
      Array.from({ length: 25 }, (_, i) => `C${String(i + 1).padStart(2, '0')}`),
    )
    expect(pages.map((p) => p.pagination)).toEqual([1, 2, 3].map((n) => ({ page: n, limit: 10, total: 25, totalPages: 3 })))
    expect(await page(4)).toEqual({ items: [], pagination: { page: 4, limit: 10, total: 25, totalPages: 3 } })
    expect((await page(1, 5)).pagination).toEqual({ page: 1, limit: 5, total: 25, totalPages: 5 })
    expect((await page(1, 25)).pagination.totalPages).toBe(1)
    expect((await page(1, 24)).pagination.totalPages).toBe(2)
    expect((await page(7, 4)).items.map((c: { campaignName: string }) => c.campaignName)).toEqual(['C25'])
  })

  it('answers an empty list with no pages', async () => {
    const { call } = setup()
    expect((await call('GET', '/campaigns/list')).body.data).toEqual({
      items: [],
      pagination: { page: 1, limit: 10, total: 0, totalPages: 0 },
    })
  })

  it('takes a limit up to 100 and no more', async () => {
    const ctx = setup()
    await many(ctx, 101)
    const hundred = await ctx.call('GET', '/campaigns/list?limit=100')
    expect(hundred.body.data.items).toHaveLength(100)
    expect(hundred.body.data.pagination).toEqual({ page: 1, limit: 100, total: 101, totalPages: 2 })
    expectValidation(await ctx.call('GET', '/campaigns/list?limit=101'), [
      fieldError('limit', 'limit must be an integer from 1 to 100', 'query'),
    ])
  })

  it.each([
    ['page=0', 'page', 'page must be an integer from 1 to 1000000'],
    ['page=-1', 'page', 'page must be an integer from 1 to 1000000'],
    ['page=1.5', 'page', 'page must be an integer from 1 to 1000000'],
    ['page=abc', 'page', 'page must be an integer from 1 to 1000000'],
    ['page=', 'page', 'page must be an integer from 1 to 1000000'],
    ['page=1000001', 'page', 'page must be an integer from 1 to 1000000'],
    ['limit=0', 'limit', 'limit must be an integer from 1 to 100'],
    ['limit=1e2', 'limit', 'limit must be an integer from 1 to 100'],
    ['limit=ten', 'limit', 'limit must be an integer from 1 to 100'],
    ['orderValue=asc', 'orderValue', 'orderValue must be one of: ASC, DESC'],
    ['orderValue=UP', 'orderValue', 'orderValue must be one of: ASC, DESC'],
    ['orderType=amount', 'orderType', 'orderType must be one of: createdAt, updatedAt, campaignName'],
    ['orderType=id', 'orderType', 'orderType must be one of: createdAt, updatedAt, campaignName'],
    ['workspaceId=abc', 'workspaceId', 'workspaceId must be a UUID'],
    ['limit=5&limit=6', 'limit', 'limit must be given once'],
    ['orderValue=ASC&orderValue=DESC', 'orderValue', 'orderValue must be given once'],
    ['sort=name', 'sort', 'sort is not a known field'],
  ])('answers 400 to ?%s', async (query, path, msg) => {
    const { call } = setup()
    expectValidation(await call('GET', `/campaigns/list?${query}`), [fieldError(path, msg, 'query')])
  })

  it('names every failing query parameter at once', async () => {
    const { call } = setup()
    expectValidation(await call('GET', '/campaigns/list?page=0&limit=500&orderValue=sideways'), [
      fieldError('page', 'page must be an integer from 1 to 1000000', 'query'),
      fieldError('limit', 'limit must be an integer from 1 to 100', 'query'),
      fieldError('orderValue', 'orderValue must be one of: ASC, DESC', 'query'),
    ])
  })

  it('orders by createdAt either way, ties broken by id in the same direction', async () => {
    const ctx = setup()
    const early = await ctx.api.campaigns.create(apiCampaignInput({ campaignName: 'Early' }))
    ctx.clock.advance(1)
    // Three made at the same instant: their ids decide.
    const tied = [
      await ctx.api.campaigns.create(apiCampaignInput({ campaignName: 'T1' })),
      await ctx.api.campaigns.create(apiCampaignInput({ campaignName: 'T2' })),
      await ctx.api.campaigns.create(apiCampaignInput({ campaignName: 'T3' })),
    ]
    ctx.clock.advance(1)
    const late = await ctx.api.campaigns.create(apiCampaignInput({ campaignName: 'Late' }))
    const byId = [...tied].sort((a, b) => (a.id < b.id ? -1 : 1)).map((c) => c.campaignName)
    const ids = async (query: string) => names(await ctx.call('GET', `/campaigns/list?${query}`))
    expect(await ids('orderValue=ASC')).toEqual([early.campaignName, ...byId, late.campaignName])
    expect(await ids('orderType=createdAt&orderValue=ASC')).toEqual([early.campaignName, ...byId, late.campaignName])
    expect(await ids('orderValue=DESC')).toEqual([late.campaignName, ...[...byId].reverse(), early.campaignName])
    expect(await ids('')).toEqual(await ids('orderValue=DESC'))
  })

  it('orders by campaignName and by updatedAt', async () => {
    const ctx = setup()
    const b = await create(ctx, { campaignName: 'Bravo' })
    ctx.clock.advance(1000)
    await create(ctx, { campaignName: 'alpha' })
    ctx.clock.advance(1000)
    await create(ctx, { campaignName: 'Charlie' })
    ctx.clock.advance(1000)
    await ctx.call('PUT', `/campaigns?campaignId=${b.id}`, { body: { payoutTerm: 30 } })
    expect(names(await ctx.call('GET', '/campaigns/list?orderType=campaignName&orderValue=ASC'))).toEqual(['Bravo', 'Charlie', 'alpha'])
    expect(names(await ctx.call('GET', '/campaigns/list?orderType=campaignName&orderValue=DESC'))).toEqual(['alpha', 'Charlie', 'Bravo'])
    expect(names(await ctx.call('GET', '/campaigns/list?orderType=updatedAt'))).toEqual(['Bravo', 'Charlie', 'alpha'])
    expect(names(await ctx.call('GET', '/campaigns/list?orderType=updatedAt&orderValue=ASC'))).toEqual(['alpha', 'Charlie', 'Bravo'])
  })

  it('searches campaignName case-insensitively with contains, and counts only the matches', async () => {
    const ctx = setup()
    for (const campaignName of ['Spring Launch', 'SPRING sale', 'Autumn', 'Offspring']) {
      await create(ctx, { campaignName })
      ctx.clock.advance(1)
    }
    const response = await ctx.call('GET', '/campaigns/list?contains=spRing&limit=2')
    expect(names(response)).toEqual(['Offspring', 'SPRING sale'])
    expect(response.body.data.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 })
    expect(names(await ctx.call('GET', '/campaigns/list?contains=launch'))).toEqual(['Spring Launch'])
    expect(names(await ctx.call('GET', '/campaigns/list?contains=shop.example'))).toEqual([])
    expect((await ctx.call('GET', '/campaigns/list?contains=')).body.data.pagination.total).toBe(4)
  })

  it("filters by one of the caller's workspaces", async () => {
    const ctx = setup()
    await create(ctx, { campaignName: 'In A' })
    await create(ctx, { campaignName: 'In A2', workspaceId: WS_A2 })
    expect(names(await ctx.call('GET', `/campaigns/list?workspaceId=${WS_A2}`))).toEqual(['In A2'])
    expect(names(await ctx.call('GET', `/campaigns/list?workspaceId=${WS_A}`))).toEqual(['In A'])
    expect((await ctx.call('GET', `/campaigns/list?workspaceId=${WS_A2}`)).body.data.pagination.total).toBe(1)
  })

  it("answers 403 for a workspaceId that is not the caller's", async () => {
    const ctx = setup()
    await create(ctx, { workspaceId: WS_B }, KEY_B)
    for (const [key, workspaceId] of [
      [KEY_A, WS_B],
      [KEY_B, WS_A],
      [KEY_A, UNKNOWN_ID],
    ] as const) {
      const response = await ctx.call('GET', `/campaigns/list?workspaceId=${workspaceId}`, { key })
      expect(response.status).toBe(403)
      expect(response.body).toEqual(FORBIDDEN)
    }
  })

  it('never mixes workspaces between keys', async () => {
    const ctx = setup()
    await create(ctx, { campaignName: 'A one' })
    await create(ctx, { campaignName: 'A2 one', workspaceId: WS_A2 })
    await create(ctx, { campaignName: 'B one', workspaceId: WS_B }, KEY_B)
    await create(ctx, { campaignName: 'B two', workspaceId: WS_B }, KEY_B)
    const seenBy = async (key: string, query = '') => {
      const response = await ctx.call('GET', `/campaigns/list?${query}`, { key })
      return { names: names(response).sort(), total: response.body.data.pagination.total }
    }
    expect(await seenBy(KEY_A)).toEqual({ names: ['A one', 'A2 one'], total: 2 })
    expect(await seenBy(KEY_B)).toEqual({ names: ['B one', 'B two'], total: 2 })
    expect(await seenBy(KEY_A, 'contains=one')).toEqual({ names: ['A one', 'A2 one'], total: 2 })
    expect(await seenBy(KEY_B, 'contains=one')).toEqual({ names: ['B one'], total: 1 })
    expect(await seenBy(KEY_A, 'contains=B')).toEqual({ names: [], total: 0 })
  })
})
