import { describe, expect, it } from 'vitest'
import type { LinkRecord } from '../../src/storage/index.js'
import { commission as sampleCommission } from '../../src/storage/sample-records.js'
import { campaignInput, expectValidation, fieldError, KEY_A, KEY_B, setup, UNKNOWN_ID, WS_A, WS_A2, WS_B } from '../support/helpers.js'

// Affiliate routes over HTTP (service.fetch): create, read, update, delete, list.

const JSON_TYPE = 'application/json; charset=utf-8'
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const T0 = '2026-01-01T00:00:00.000Z'
const FORBIDDEN = { status: 403, code: 'forbidden', message: 'You do not have access to this workspace' }
const NOT_FOUND = '{"status":404,"code":"not_found","message":"Affiliate not found"}'

type Ctx = ReturnType<typeof setup>

async function campaign(ctx: Ctx, overrides: Record<string, unknown> = {}, key = KEY_A): Promise<{ id: string; workspaceId: string }> {
  const response = await ctx.call('POST', '/campaigns', { key, body: campaignInput(overrides) })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.data
}

/** Creates an affiliate over HTTP and answers its data; fails the test unless it is a 201. */
async function affiliate(ctx: Ctx, body: Record<string, unknown>, key = KEY_A) {
  const response = await ctx.call('POST', '/affiliates', { key, body })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.data
}

/** A commission record written straight into the storage, as the commissions routes would. */
async function insertCommission(ctx: Ctx, of: { id: string; workspaceId: string; campaignId: string }) {
  const record = sampleCommission({
    id: crypto.randomUUID(),
    workspaceId: of.workspaceId,
    campaignId: of.campaignId,
    affiliateId: of.id,
    amountMinor: 1000,
    adminEarnedMinor: 4000,
    commissionDate: T0,
    createdAt: T0,
    updatedAt: T0,
  })
  await ctx.storage.transaction((tx) => tx.insert('commissions', record))
  return record
}

/** A referral link record written straight into the storage. */
async function insertLink(ctx: Ctx, of: { id: string; workspaceId: string; campaignId: string }, referralCode: string) {
  const record: LinkRecord = {
    id: crypto.randomUUID(),
    workspaceId: of.workspaceId,
    campaignId: of.campaignId,
    affiliateId: of.id,
    userId: null,
    referralCode,
    urlParameter: 'ref',
    shareUrl: `https://shop.example.com/landing?via=${referralCode}`,
    url: `https://shop.example.com/landing?ref=${referralCode}`,
    totalOpens: 0,
    totalClicks: 0,
    totalSignups: 0,
    totalEarningsMinor: 0,
    createdAt: T0,
    updatedAt: T0,
  }
  await ctx.storage.transaction((tx) => tx.insert('links', record))
  return record
}

const linksOf = (ctx: Ctx, affiliateId: string) =>
  ctx.storage.transaction(async (tx) => (await tx.find('links', { where: { affiliateId } })).map((link) => link.referralCode).sort())

const emails = (response: { body: any }) => response.body.data.items.map((item: { email: string }) => item.email)

describe('POST /affiliates', () => {
  it("answers 201 with the affiliate, its defaults, the campaign's workspace and the clock time", async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx, { workspaceId: WS_A2 })
    ctx.clock.advance(250)
    const response = await ctx.call('POST', '/affiliates', { body: { email: 'Jane.Doe@Example.com', campaignId } })
    expect(response.status).toBe(201)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(Object.keys(response.body)).toEqual(['status', 'message', 'data'])
    expect(response.body.status).toBe(201)
    expect(response.body.message).toBe('Affiliate created successfully')
    expect(response.body.data).toStrictEqual({
      id: expect.stringMatching(UUID_V4),
      email: 'Jane.Doe@Example.com',
      firstName: '',
      lastName: '',
      notes: '',
      workspaceId: WS_A2,
      campaignId,
      payoutEmail: '',
      payoutMethod: null,
      details: null,
      isActive: true,
      isBanned: false,
      totalOpens: 0,
      totalClicks: 0,
      totalSignups: 0,
      totalEarnings: 0,
      createdAt: '2026-01-01T00:00:00.250Z',
      updatedAt: '2026-01-01T00:00:00.250Z',
    })
  })

  it('stores and answers every field it is given', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const body = {
      email: 'max@example.com',
      firstName: 'Max',
      lastName: 'Power',
      notes: 'Met at the conference',
      workspaceId: WS_A,
      campaignId,
      payoutEmail: 'pay@example.com',
      payoutMethod: 'WISE',
      details: 'IBAN on file',
      isActive: false,
      isBanned: true,
    }
    const data = await affiliate(ctx, body)
    expect(data).toStrictEqual({
      ...body,
      id: data.id,
      totalOpens: 0,
      totalClicks: 0,
      totalSignups: 0,
      totalEarnings: 0,
      createdAt: T0,
      updatedAt: T0,
    })
    expect((await ctx.call('GET', `/affiliates?affiliateId=${data.id}`)).body.data).toEqual(data)
  })

  it.each(['PAYPAL', 'WISE', 'BANK_TRANSFER', null])('accepts payoutMethod %s', async (payoutMethod) => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    expect((await affiliate(ctx, { email: 'a@example.com', campaignId, payoutMethod })).payoutMethod).toBe(payoutMethod)
  })

  it('makes an affiliate of a campaign that requires approval inactive unless told otherwise', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx, { requiresApprovalToJoin: true })
    expect((await affiliate(ctx, { email: 'a@example.com', campaignId })).isActive).toBe(false)
    expect((await affiliate(ctx, { email: 'b@example.com', campaignId, isActive: true })).isActive).toBe(true)
  })

  it('names the missing email and campaignId', async () => {
    const { call } = setup()
    expectValidation(await call('POST', '/affiliates', { body: {} }), [
      fieldError('email', 'email is required'),
      fieldError('campaignId', 'campaignId is required'),
    ])
    expectValidation(await call('POST', '/affiliates', { body: { email: 'a@example.com' } }), [
      fieldError('campaignId', 'campaignId is required'),
    ])
  })

  it.each(['plainaddress', 'a@b', '@example.com', 'a b@example.com', 'a@example..com', '', 42])('refuses email %j', async (email) => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    expectValidation(await ctx.call('POST', '/affiliates', { body: { email, campaignId } }), [
      fieldError('email', 'email must be a valid e-mail address'),
    ])
  })

  it.each([
    ['campaignId', 'abc', 'campaignId must be a UUID'],
    ['workspaceId', 'abc', 'workspaceId must be a UUID'],
    ['payoutEmail', 'nope', 'payoutEmail must be a valid e-mail address or an empty string'],
    ['payoutMethod', 'VENMO', 'payoutMethod must be one of: PAYPAL, WISE, BANK_TRANSFER'],
    ['payoutMethod', 'paypal', 'payoutMethod must be one of: PAYPAL, WISE, BANK_TRANSFER'],
    ['details', 12, 'details must be a string'],
    ['firstName', null, 'firstName must be a string'],
    ['lastName', 'x'.repeat(101), 'lastName must have at most 100 characters'],
    ['notes', ['a'], 'notes must be a string'],
    ['isActive', 'yes', 'isActive must be true or false'],
    ['isBanned', 0, 'isBanned must be true or false'],
  ])('refuses %s = %j', async (field, value, msg) => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    expectValidation(await ctx.call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId, [field]: value } }), [
      fieldError(field, msg),
    ])
  })

  it('names read-only and unknown fields, one entry each, and stores nothing', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const response = await ctx.call('POST', '/affiliates', {
      body: {
        email: 'not-an-email',
        campaignId,
        id: UNKNOWN_ID,
        totalOpens: 1,
        totalClicks: 1,
        totalSignups: 1,
        totalEarnings: 100,
        createdAt: T0,
        updatedAt: T0,
        phone: '555',
      },
    })
    expectValidation(response, [
      fieldError('email', 'email must be a valid e-mail address'),
      fieldError('id', 'id is read-only'),
      fieldError('totalOpens', 'totalOpens is read-only'),
      fieldError('totalClicks', 'totalClicks is read-only'),
      fieldError('totalSignups', 'totalSignups is read-only'),
      fieldError('totalEarnings', 'totalEarnings is read-only'),
      fieldError('createdAt', 'createdAt is read-only'),
      fieldError('updatedAt', 'updatedAt is read-only'),
      fieldError('phone', 'phone is not a known field'),
    ])
    expect((await ctx.api.affiliates.list()).pagination.total).toBe(0)
  })

  it('answers 422 to an email already in the campaign, whatever its case', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    await affiliate(ctx, { email: 'jane@example.com', campaignId })
    for (const email of ['jane@example.com', 'JANE@EXAMPLE.COM', 'Jane@Example.Com']) {
      const response = await ctx.call('POST', '/affiliates', { body: { email, campaignId } })
      expect(response.status).toBe(422)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(response.body).toEqual({
        status: 422,
        code: 'duplicate',
        message: 'An affiliate with this email already exists in this campaign',
      })
    }
    expect((await ctx.api.affiliates.list()).pagination.total).toBe(1)
  })

  it('lets one email join two campaigns', async () => {
    const ctx = setup()
    const one = await campaign(ctx, { campaignName: 'One' })
    const two = await campaign(ctx, { campaignName: 'Two' })
    await affiliate(ctx, { email: 'jane@example.com', campaignId: one.id })
    await affiliate(ctx, { email: 'JANE@example.com', campaignId: two.id })
    expect((await ctx.api.affiliates.list()).pagination.total).toBe(2)
  })

  it('admits one of two concurrent sign-ups with the same email', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const responses = await Promise.all([
      ctx.call('POST', '/affiliates', { body: { email: 'race@example.com', campaignId } }),
      ctx.call('POST', '/affiliates', { body: { email: 'RACE@example.com', campaignId } }),
    ])
    expect(responses.map((r) => r.status).sort()).toEqual([201, 422])
    expect((await ctx.api.affiliates.list()).pagination.total).toBe(1)
  })

  it('frees the email once the affiliate is deleted', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const first = await affiliate(ctx, { email: 'jane@example.com', campaignId })
    await ctx.call('DELETE', `/affiliates?affiliateId=${first.id}`)
    await affiliate(ctx, { email: 'jane@example.com', campaignId })
  })

  it("takes the workspaceId when it is the campaign's, and answers 422 when it is another of the caller's", async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx, { workspaceId: WS_A })
    expect((await affiliate(ctx, { email: 'a@example.com', campaignId, workspaceId: WS_A })).workspaceId).toBe(WS_A)
    const response = await ctx.call('POST', '/affiliates', { body: { email: 'b@example.com', campaignId, workspaceId: WS_A2 } })
    expect(response.status).toBe(422)
    expect(response.body).toEqual({
      status: 422,
      code: 'workspace_mismatch',
      message: "workspaceId does not match the campaign's workspace",
    })
  })

  it("answers 403 for a workspaceId that is not the caller's", async () => {
    const ctx = setup()
    const theirs = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    const mine = await campaign(ctx)
    for (const [campaignId, workspaceId] of [
      [theirs.id, WS_B],
      [mine.id, WS_B],
      [mine.id, UNKNOWN_ID],
    ]) {
      const response = await ctx.call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId, workspaceId } })
      expect(response.status).toBe(403)
      expect(response.body).toEqual(FORBIDDEN)
    }
    expect((await ctx.api.affiliates.list()).pagination.total).toBe(0)
  })

  it("answers 404 alike for an unknown campaign and another workspace's campaign", async () => {
    const ctx = setup()
    const theirs = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    const unknown = await ctx.call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId: UNKNOWN_ID } })
    const foreign = await ctx.call('POST', '/affiliates', { body: { email: 'a@example.com', campaignId: theirs.id } })
    expect(unknown.status).toBe(404)
    expect(foreign.text).toBe(unknown.text)
    expect(foreign.text).toBe('{"status":404,"code":"not_found","message":"Campaign not found"}')
    expect((await ctx.api.affiliates.list()).pagination.total).toBe(0)
  })
})

describe('GET /affiliates', () => {
  it('answers the affiliate', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const created = await affiliate(ctx, { email: 'a@example.com', campaignId })
    const response = await ctx.call('GET', `/affiliates?affiliateId=${created.id}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 200, message: 'Affiliate retrieved successfully', data: created })
    expect((await ctx.call('GET', `/affiliates?affiliateId=${created.id.toUpperCase()}`)).body.data).toEqual(created)
  })

  it('answers 400 without an affiliateId, or with one that is not a UUID', async () => {
    const { call } = setup()
    expectValidation(await call('GET', '/affiliates'), [fieldError('affiliateId', 'affiliateId is required', 'query')])
    expectValidation(await call('GET', '/affiliates?affiliateId=xyz'), [fieldError('affiliateId', 'affiliateId must be a UUID', 'query')])
    expectValidation(await call('GET', `/affiliates?affiliateId=${UNKNOWN_ID}&affiliateId=${UNKNOWN_ID}`), [
      fieldError('affiliateId', 'affiliateId must be given once', 'query'),
    ])
  })

  it("answers 404 alike for an unknown id and another workspace's affiliate", async () => {
    const ctx = setup()
    const theirCampaign = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    const theirs = await affiliate(ctx, { email: 'b@example.com', campaignId: theirCampaign.id }, KEY_B)
    const unknown = await ctx.call('GET', `/affiliates?affiliateId=${UNKNOWN_ID}`)
    const foreign = await ctx.call('GET', `/affiliates?affiliateId=${theirs.id}`)
    for (const response of [unknown, foreign]) {
      expect(response.status).toBe(404)
      expect(response.headers.get('content-type')).toBe(JSON_TYPE)
      expect(response.text).toBe(NOT_FOUND)
    }
    expect([...foreign.headers]).toEqual([...unknown.headers])
  })
})

describe('PUT /affiliates', () => {
  it('changes only the fields sent and moves updatedAt to the clock time', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx, { requiresApprovalToJoin: true })
    const created = await affiliate(ctx, { email: 'a@example.com', campaignId, firstName: 'Ann', payoutMethod: 'PAYPAL', details: 'x' })
    ctx.clock.advance(3_600_000)
    const response = await ctx.call('PUT', `/affiliates?affiliateId=${created.id}`, { body: { isActive: true, lastName: 'Lee' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body.status).toBe(200)
    expect(response.body.message).toBe('Affiliate updated successfully')
    expect(response.body.data).toStrictEqual({ ...created, isActive: true, lastName: 'Lee', updatedAt: '2026-01-01T01:00:00.000Z' })
    expect((await ctx.call('GET', `/affiliates?affiliateId=${created.id}`)).body.data).toEqual(response.body.data)
  })

  it('changes every editable field, and can clear payoutMethod and details', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const created = await affiliate(ctx, { email: 'a@example.com', campaignId, payoutMethod: 'PAYPAL', details: 'old' })
    const changes = {
      firstName: 'New',
      lastName: 'Name',
      notes: 'Notes',
      payoutEmail: 'pay@example.com',
      payoutMethod: null,
      details: null,
      isActive: false,
      isBanned: true,
    }
    const response = await ctx.call('PUT', `/affiliates?affiliateId=${created.id}`, { body: changes })
    expect(response.body.data).toStrictEqual({ ...created, ...changes })
    const cleared = await ctx.call('PUT', `/affiliates?affiliateId=${created.id}`, { body: { payoutEmail: '' } })
    expect(cleared.body.data.payoutEmail).toBe('')
  })

  it('refuses email, campaignId, workspaceId and the other read-only fields, changing nothing', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const created = await affiliate(ctx, { email: 'a@example.com', campaignId })
    const response = await ctx.call('PUT', `/affiliates?affiliateId=${created.id}`, {
      body: {
        firstName: 'Sneaky',
        email: 'b@example.com',
        campaignId: UNKNOWN_ID,
        workspaceId: WS_A2,
        id: UNKNOWN_ID,
        totalOpens: 9,
        totalClicks: 9,
        totalSignups: 9,
        totalEarnings: 9,
        createdAt: T0,
        updatedAt: T0,
        nickname: 'x',
      },
    })
    expectValidation(response, [
      fieldError('email', 'email is read-only'),
      fieldError('campaignId', 'campaignId is read-only'),
      fieldError('workspaceId', 'workspaceId is read-only'),
      fieldError('id', 'id is read-only'),
      fieldError('totalOpens', 'totalOpens is read-only'),
      fieldError('totalClicks', 'totalClicks is read-only'),
      fieldError('totalSignups', 'totalSignups is read-only'),
      fieldError('totalEarnings', 'totalEarnings is read-only'),
      fieldError('createdAt', 'createdAt is read-only'),
      fieldError('updatedAt', 'updatedAt is read-only'),
      fieldError('nickname', 'nickname is not a known field'),
    ])
    expect((await ctx.call('GET', `/affiliates?affiliateId=${created.id}`)).body.data).toEqual(created)
  })

  it('answers 400 without an affiliateId, naming body failures too', async () => {
    const { call } = setup()
    expectValidation(await call('PUT', '/affiliates', { body: { isActive: true } }), [
      fieldError('affiliateId', 'affiliateId is required', 'query'),
    ])
    expectValidation(await call('PUT', '/affiliates', { body: { isActive: 'yes', payoutMethod: 'CASH' } }), [
      fieldError('affiliateId', 'affiliateId is required', 'query'),
      fieldError('isActive', 'isActive must be true or false'),
      fieldError('payoutMethod', 'payoutMethod must be one of: PAYPAL, WISE, BANK_TRANSFER'),
    ])
  })

  it('answers 400 to an empty body', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const created = await affiliate(ctx, { email: 'a@example.com', campaignId })
    const response = await ctx.call('PUT', `/affiliates?affiliateId=${created.id}`, { body: {} })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({ status: 400, code: 'invalid_body', message: 'Nothing to update: the request body names no field' })
  })

  it("answers 404 alike for an unknown id and another workspace's affiliate, and leaves theirs alone", async () => {
    const ctx = setup()
    const theirCampaign = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    const theirs = await affiliate(ctx, { email: 'b@example.com', campaignId: theirCampaign.id }, KEY_B)
    const unknown = await ctx.call('PUT', `/affiliates?affiliateId=${UNKNOWN_ID}`, { body: { isBanned: true } })
    const foreign = await ctx.call('PUT', `/affiliates?affiliateId=${theirs.id}`, { body: { isBanned: true } })
    expect([unknown.status, foreign.status]).toEqual([404, 404])
    expect(foreign.text).toBe(NOT_FOUND)
    expect(unknown.text).toBe(NOT_FOUND)
    expect((await ctx.call('GET', `/affiliates?affiliateId=${theirs.id}`, { key: KEY_B })).body.data).toEqual(theirs)
  })
})

describe('DELETE /affiliates', () => {
  it('deletes the affiliate with its links, and answers its id', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const doomed = await affiliate(ctx, { email: 'a@example.com', campaignId })
    const kept = await affiliate(ctx, { email: 'b@example.com', campaignId })
    await insertLink(ctx, doomed, 'DOOMED-1')
    await insertLink(ctx, doomed, 'DOOMED-2')
    await insertLink(ctx, kept, 'KEPT-1')
    const response = await ctx.call('DELETE', `/affiliates?affiliateId=${doomed.id}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body).toEqual({ status: 200, message: 'Affiliate deleted successfully', data: { id: doomed.id } })
    expect((await ctx.call('GET', `/affiliates?affiliateId=${doomed.id}`)).text).toBe(NOT_FOUND)
    expect(await linksOf(ctx, doomed.id)).toEqual([])
    expect(await linksOf(ctx, kept.id)).toEqual(['KEPT-1'])
    expect(emails(await ctx.call('GET', '/affiliates/list'))).toEqual(['b@example.com'])
    // The deleted links' codes are free again.
    await insertLink(ctx, kept, 'DOOMED-1')
  })

  it('answers 422 while the affiliate has commissions, keeping it and its links', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const earner = await affiliate(ctx, { email: 'a@example.com', campaignId })
    await insertLink(ctx, earner, 'EARNER-1')
    const commission = await insertCommission(ctx, earner)
    const refused = await ctx.call('DELETE', `/affiliates?affiliateId=${earner.id}`)
    expect(refused.status).toBe(422)
    expect(refused.headers.get('content-type')).toBe(JSON_TYPE)
    expect(refused.body).toEqual({
      status: 422,
      code: 'has_dependents',
      message: 'This affiliate still has commissions; delete them first',
    })
    expect((await ctx.call('GET', `/affiliates?affiliateId=${earner.id}`)).body.data).toEqual(earner)
    expect(await linksOf(ctx, earner.id)).toEqual(['EARNER-1'])
    await ctx.storage.transaction((tx) => tx.delete('commissions', commission.id))
    expect((await ctx.call('DELETE', `/affiliates?affiliateId=${earner.id}`)).status).toBe(200)
    expect(await linksOf(ctx, earner.id)).toEqual([])
  })

  it("is not held back by another affiliate's commissions", async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const earner = await affiliate(ctx, { email: 'a@example.com', campaignId })
    const idle = await affiliate(ctx, { email: 'b@example.com', campaignId })
    await insertCommission(ctx, earner)
    expect((await ctx.call('DELETE', `/affiliates?affiliateId=${idle.id}`)).status).toBe(200)
  })

  it('answers 400 without an affiliateId', async () => {
    const { call } = setup()
    expectValidation(await call('DELETE', '/affiliates'), [fieldError('affiliateId', 'affiliateId is required', 'query')])
  })

  it("answers 404 alike for an unknown id and another workspace's affiliate, which survives with its links", async () => {
    const ctx = setup()
    const theirCampaign = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    const theirs = await affiliate(ctx, { email: 'b@example.com', campaignId: theirCampaign.id }, KEY_B)
    await insertLink(ctx, theirs, 'THEIRS-1')
    const unknown = await ctx.call('DELETE', `/affiliates?affiliateId=${UNKNOWN_ID}`)
    const foreign = await ctx.call('DELETE', `/affiliates?affiliateId=${theirs.id}`)
    expect([unknown.status, foreign.status]).toEqual([404, 404])
    expect(foreign.text).toBe(unknown.text)
    expect(foreign.text).toBe(NOT_FOUND)
    expect((await ctx.call('GET', `/affiliates?affiliateId=${theirs.id}`, { key: KEY_B })).status).toBe(200)
    expect(await linksOf(ctx, theirs.id)).toEqual(['THEIRS-1'])
  })
})

describe('GET /affiliates/list', () => {
  /** One campaign in WS_A and `count` affiliates in it, one second apart. */
  async function many(ctx: Ctx, count: number) {
    const { id: campaignId } = await campaign(ctx)
    for (let i = 1; i <= count; i++) {
      await ctx.api.affiliates.create({ email: `user${String(i).padStart(3, '0')}@example.com`, campaignId })
      ctx.clock.advance(1000)
    }
    return campaignId
  }

  it('answers the first 10, newest first, with the pagination', async () => {
    const ctx = setup()
    await many(ctx, 11)
    const response = await ctx.call('GET', '/affiliates/list')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(JSON_TYPE)
    expect(response.body.status).toBe(200)
    expect(response.body.message).toBe('Affiliates retrieved successfully')
    expect(emails(response)).toEqual(Array.from({ length: 10 }, (_, i) => `user${String(11 - i).padStart(3, '0')}@example.com`))
    expect(response.body.data.pagination).toEqual({ page: 1, limit: 10, total: 11, totalPages: 2 })
  })

  it('filters by status: active, pending (awaiting approval) and banned, with exact totals', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const active = await affiliate(ctx, { email: 'active@example.com', campaignId, isActive: true })
    const pending = await affiliate(ctx, { email: 'pending@example.com', campaignId, isActive: false })
    const banned = await affiliate(ctx, { email: 'banned@example.com', campaignId, isActive: true, isBanned: true })
    const bannedPending = await affiliate(ctx, { email: 'banned-pending@example.com', campaignId, isActive: false, isBanned: true })
    const q = async (status: string) => (await ctx.call('GET', `/affiliates/list?status=${status}`)).body.data
    expect((await q('active')).items.map((a: { id: string }) => a.id)).toEqual([active.id])
    expect((await q('pending')).items.map((a: { id: string }) => a.id)).toEqual([pending.id])
    // Made in the same millisecond, maybe: their order is the id's, so compared as a set.
    expect((await q('banned')).items.map((a: { id: string }) => a.id).sort()).toEqual([bannedPending.id, banned.id].sort())
    expect((await q('banned')).pagination.total).toBe(2)
    const bad = await ctx.call('GET', '/affiliates/list?status=awaiting')
    expect(bad.status).toBe(400)
    const csv = await (
      await ctx.service.fetch(
        new Request('http://test.local/api/v1/exports/affiliates?status=pending', { headers: { 'x-auth-service': KEY_A } }),
      )
    ).text()
    expect(csv).toContain('pending@example.com')
    expect(csv).not.toContain('active@example.com')
  })

  it('answers items in the same shape as GET /affiliates', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const created = await affiliate(ctx, { email: 'a@example.com', campaignId, details: 'd' })
    expect((await ctx.call('GET', '/affiliates/list')).body.data.items).toEqual([created])
  })

  it('pages through the whole list, and past its end answers no items', async () => {
    const ctx = setup()
    await many(ctx, 23)
    const page = async (query: string) => (await ctx.call('GET', `/affiliates/list?orderValue=ASC&${query}`)).body.data
    const seen: string[] = []
    for (let n = 1; n <= 5; n++) {
      const data = await page(`page=${n}&limit=5`)
      expect(data.pagination).toEqual({ page: n, limit: 5, total: 23, totalPages: 5 })
      expect(data.items).toHaveLength(n < 5 ? 5 : 3)
      seen.push(...data.items.map((item: { email: string }) => item.email))
    }
    expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => `user${String(i + 1).padStart(3, '0')}@example.com`))
    expect(await page('page=6&limit=5')).toEqual({ items: [], pagination: { page: 6, limit: 5, total: 23, totalPages: 5 } })
    expect(await page('page=1000000&limit=100')).toEqual({ items: [], pagination: { page: 1000000, limit: 100, total: 23, totalPages: 1 } })
  })

  it('takes a limit up to 100 and no more', async () => {
    const ctx = setup()
    await many(ctx, 101)
    const response = await ctx.call('GET', '/affiliates/list?limit=100&page=2')
    expect(emails(response)).toEqual(['user001@example.com'])
    expect(response.body.data.pagination).toEqual({ page: 2, limit: 100, total: 101, totalPages: 2 })
    expectValidation(await ctx.call('GET', '/affiliates/list?limit=101'), [
      fieldError('limit', 'limit must be an integer from 1 to 100', 'query'),
    ])
  })

  it.each([
    ['page=0', 'page', 'page must be an integer from 1 to 1000000'],
    ['page=2.0', 'page', 'page must be an integer from 1 to 1000000'],
    ['limit=-5', 'limit', 'limit must be an integer from 1 to 100'],
    ['limit=%20', 'limit', 'limit must be an integer from 1 to 100'],
    [
      'orderType=payoutEmail',
      'orderType',
      'orderType must be one of: createdAt, updatedAt, email, firstName, lastName, totalEarnings, totalSignups, totalClicks, totalOpens',
    ],
    ['orderValue=descending', 'orderValue', 'orderValue must be one of: ASC, DESC'],
    ['campaignId=nope', 'campaignId', 'campaignId must be a UUID'],
    ['workspaceId=nope', 'workspaceId', 'workspaceId must be a UUID'],
    ['contains=a&contains=b', 'contains', 'contains must be given once'],
    ['email=nope', 'email', 'email must be a valid e-mail address'],
    ['payoutEmail=a@example.com', 'payoutEmail', 'payoutEmail is not a known field'],
  ])('answers 400 to ?%s', async (query, path, msg) => {
    const { call } = setup()
    expectValidation(await call('GET', `/affiliates/list?${query}`), [fieldError(path, msg, 'query')])
  })

  it('finds the affiliates with exactly this e-mail, whatever its case, with email', async () => {
    const ctx = setup()
    const { id: first } = await campaign(ctx)
    const { id: second } = await campaign(ctx)
    for (const [email, campaignId] of [
      ['Jane@Example.com', first],
      ['jane@example.com', second],
      ['mary.jane@example.com', first],
    ] as const) {
      expect((await ctx.call('POST', '/affiliates', { body: { email, campaignId } })).status).toBe(201)
    }
    const found = await ctx.call('GET', '/affiliates/list?email=JANE%40example.com')
    expect(found.status).toBe(200)
    expect(found.body.data.items.map((a: { email: string }) => a.email).sort()).toEqual(['Jane@Example.com', 'jane@example.com'])
    expect(found.body.data.pagination.total).toBe(2)
  })

  it('searches email, firstName and lastName case-insensitively with contains', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const people = [
      { email: 'jane@example.com', firstName: 'Jane', lastName: 'Doe' },
      { email: 'bob@example.com', firstName: 'Robert', lastName: 'Janeway' },
      { email: 'MARY.JANE@example.com', firstName: 'Mary', lastName: 'Smith' },
      { email: 'max@example.com', firstName: 'Max', lastName: 'Power', notes: 'jane referred me', payoutEmail: 'jane@pay.example.com' },
    ]
    for (const person of people) {
      await affiliate(ctx, { ...person, campaignId })
      ctx.clock.advance(1)
    }
    const response = await ctx.call('GET', '/affiliates/list?contains=JaNe')
    expect(emails(response)).toEqual(['MARY.JANE@example.com', 'bob@example.com', 'jane@example.com'])
    expect(response.body.data.pagination.total).toBe(3)
    expect(emails(await ctx.call('GET', '/affiliates/list?contains=robert'))).toEqual(['bob@example.com'])
    expect(emails(await ctx.call('GET', '/affiliates/list?contains=POWER'))).toEqual(['max@example.com'])
    expect(emails(await ctx.call('GET', '/affiliates/list?contains=pay.example'))).toEqual([])
  })

  it('filters by campaignId and by workspaceId', async () => {
    const ctx = setup()
    const one = await campaign(ctx, { campaignName: 'One' })
    const two = await campaign(ctx, { campaignName: 'Two' })
    const three = await campaign(ctx, { campaignName: 'Three', workspaceId: WS_A2 })
    await affiliate(ctx, { email: 'one@example.com', campaignId: one.id })
    ctx.clock.advance(1)
    await affiliate(ctx, { email: 'two@example.com', campaignId: two.id })
    ctx.clock.advance(1)
    await affiliate(ctx, { email: 'three@example.com', campaignId: three.id })
    expect(emails(await ctx.call('GET', `/affiliates/list?campaignId=${one.id}`))).toEqual(['one@example.com'])
    expect(emails(await ctx.call('GET', `/affiliates/list?campaignId=${one.id.toUpperCase()}`))).toEqual(['one@example.com'])
    expect(emails(await ctx.call('GET', `/affiliates/list?workspaceId=${WS_A}`))).toEqual(['two@example.com', 'one@example.com'])
    expect(emails(await ctx.call('GET', `/affiliates/list?workspaceId=${WS_A2}`))).toEqual(['three@example.com'])
    expect(emails(await ctx.call('GET', `/affiliates/list?workspaceId=${WS_A2}&campaignId=${one.id}`))).toEqual([])
    expect((await ctx.call('GET', `/affiliates/list?campaignId=${UNKNOWN_ID}`)).body.data.pagination.total).toBe(0)
  })

  it("answers nothing for another workspace's campaignId", async () => {
    const ctx = setup()
    const theirs = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    await affiliate(ctx, { email: 'b@example.com', campaignId: theirs.id }, KEY_B)
    const response = await ctx.call('GET', `/affiliates/list?campaignId=${theirs.id}`)
    expect(response.status).toBe(200)
    expect(response.body.data).toEqual({ items: [], pagination: { page: 1, limit: 10, total: 0, totalPages: 0 } })
  })

  it("answers 403 for a workspaceId that is not the caller's", async () => {
    const ctx = setup()
    for (const [key, workspaceId] of [
      [KEY_A, WS_B],
      [KEY_B, WS_A2],
    ] as const) {
      const response = await ctx.call('GET', `/affiliates/list?workspaceId=${workspaceId}`, { key })
      expect(response.status).toBe(403)
      expect(response.body).toEqual(FORBIDDEN)
    }
  })

  it('orders by createdAt either way, ties broken by id in the same direction', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const made = []
    for (const email of ['p@example.com', 'q@example.com', 'r@example.com', 's@example.com'])
      made.push(await affiliate(ctx, { email, campaignId }))
    const byId = made.sort((a, b) => (a.id < b.id ? -1 : 1)).map((a) => a.email)
    expect(emails(await ctx.call('GET', '/affiliates/list?orderType=createdAt&orderValue=ASC'))).toEqual(byId)
    expect(emails(await ctx.call('GET', '/affiliates/list?orderType=createdAt&orderValue=DESC'))).toEqual([...byId].reverse())
  })

  it('orders by name, email and counters, ties broken by id', async () => {
    const ctx = setup()
    const { id: campaignId } = await campaign(ctx)
    const people = [
      { email: 'carol@example.com', firstName: 'Zoe', lastName: 'Adams', earnings: 1250, clicks: 3 },
      { email: 'alice@example.com', firstName: 'Yan', lastName: 'Brown', earnings: 99, clicks: 3 },
      { email: 'bob@example.com', firstName: 'Xia', lastName: 'Clark', earnings: 100_000, clicks: 7 },
    ]
    const ids: Record<string, string> = {}
    for (const person of people) {
      const created = await affiliate(ctx, { email: person.email, firstName: person.firstName, lastName: person.lastName, campaignId })
      ids[person.email] = created.id
      await ctx.storage.transaction((tx) =>
        tx.increment('affiliates', created.id, { totalEarningsMinor: person.earnings, totalClicks: person.clicks }),
      )
      ctx.clock.advance(1000)
    }
    const order = async (query: string) => emails(await ctx.call('GET', `/affiliates/list?${query}`))
    expect(await order('orderType=email&orderValue=ASC')).toEqual(['alice@example.com', 'bob@example.com', 'carol@example.com'])
    expect(await order('orderType=firstName&orderValue=ASC')).toEqual(['bob@example.com', 'alice@example.com', 'carol@example.com'])
    expect(await order('orderType=lastName&orderValue=DESC')).toEqual(['bob@example.com', 'alice@example.com', 'carol@example.com'])
    expect(await order('orderType=totalEarnings&orderValue=DESC')).toEqual(['bob@example.com', 'carol@example.com', 'alice@example.com'])
    expect(await order('orderType=totalEarnings&orderValue=ASC')).toEqual(['alice@example.com', 'carol@example.com', 'bob@example.com'])
    // carol and alice tie on clicks: the id decides, in the direction asked.
    const tied = [ids['carol@example.com']!, ids['alice@example.com']!].sort()
    const tiedEmails = tied.map((id) => Object.keys(ids).find((email) => ids[email] === id))
    expect(await order('orderType=totalClicks&orderValue=ASC')).toEqual([...tiedEmails, 'bob@example.com'])
    expect(await order('orderType=totalClicks&orderValue=DESC')).toEqual(['bob@example.com', ...[...tiedEmails].reverse()])
    const first = (await ctx.call('GET', '/affiliates/list?orderType=totalEarnings&orderValue=DESC&limit=1')).body.data.items[0]
    expect(first.totalEarnings).toBe(1000)
  })

  it('never mixes workspaces between keys', async () => {
    const ctx = setup()
    const a = await campaign(ctx)
    const a2 = await campaign(ctx, { workspaceId: WS_A2 })
    const b = await campaign(ctx, { workspaceId: WS_B }, KEY_B)
    await affiliate(ctx, { email: 'same@example.com', campaignId: a.id })
    await affiliate(ctx, { email: 'a2@example.com', campaignId: a2.id })
    await affiliate(ctx, { email: 'same@example.com', campaignId: b.id }, KEY_B)
    await affiliate(ctx, { email: 'b@example.com', campaignId: b.id }, KEY_B)
    const seenBy = async (key: string, query = '') => {
      const response = await ctx.call('GET', `/affiliates/list?${query}`, { key })
      return response.body.data.items.map((item: { workspaceId: string }) => item.workspaceId).sort()
    }
    expect(await seenBy(KEY_A)).toEqual([WS_A, WS_A2].sort())
    expect(await seenBy(KEY_B)).toEqual([WS_B, WS_B])
    expect(await seenBy(KEY_A, 'contains=same')).toEqual([WS_A])
    expect(await seenBy(KEY_B, 'contains=same')).toEqual([WS_B])
    expect(await seenBy(KEY_B, `campaignId=${a.id}`)).toEqual([])
  })
})
