import { describe, expect, it } from 'vitest'
import { KEY_B, NO_SALE, UNKNOWN_ID, USER_A, WS_A, WS_A2, WS_B, setup } from '../support/helpers.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Campaigns in A (two), A2 and B, with affiliates; Ann has a payout e-mail of her own. */
async function world() {
  const env = setup()
  const { api } = env
  const campaign = (workspaceId: string, campaignName: string) =>
    api.campaigns.create({ campaignName, workspaceId, commissionType: 'fixed', amount: 5, url: 'https://shop.example.com/' })
  const campaign1 = await campaign(WS_A, 'One')
  const campaign2 = await campaign(WS_A, 'Two')
  const campaignA2 = await campaign(WS_A2, 'A2')
  const campaignB = await campaign(WS_B, 'B')
  const ann = await api.affiliates.create({ email: 'Ann@Example.com', payoutEmail: 'ann.PAYOUTS@example.com', campaignId: campaign1.id })
  const bob = await api.affiliates.create({ email: 'bob@example.com', campaignId: campaign1.id })
  const dee = await api.affiliates.create({ email: 'dee@example.com', campaignId: campaignA2.id })
  const zed = await api.affiliates.create({ email: 'zed@example.com', campaignId: campaignB.id })
  const body = (affiliate: { id: string }, overrides: Record<string, unknown> = {}) => ({
    referredTo: 'signup@example.com',
    affiliateId: affiliate.id,
    ...overrides,
  })
  const count = async () => (await api.commissions.list()).pagination.total
  return { ...env, campaign1, campaign2, campaignA2, campaignB, ann, bob, dee, zed, body, count }
}

const path = (email: string) => `/referred-users?referredUser=${encodeURIComponent(email)}`

describe('POST /referred-users', () => {
  it('takes referredTo and answers referredUser, string amounts, and null for what was not given', async () => {
    const { call, clock, ann, campaign1 } = await world()
    clock.advance(42)
    const res = await call('POST', '/referred-users', {
      body: { referredTo: 'New.User@example.com', affiliateId: ann.id, amount: '12.5', adminEarnedAmount: '0.1' },
    })
    expect(res.status).toBe(201)
    const now = new Date(clock.now()).toISOString()
    expect(res.body).toEqual({
      status: 201,
      message: 'Referred user created successfully',
      data: {
        commissionId: expect.stringMatching(UUID),
        campaignId: campaign1.id,
        workspaceId: WS_A,
        affiliateId: ann.id,
        referredUser: 'New.User@example.com',
        amount: '12.50',
        adminEarnedAmount: '0.10',
        status: 'pending',
        commissionDate: now,
        remarks: null,
        referralCode: null,
        kind: 'sale',
        dueAt: now,
        payoutId: null,
        refundedAmount: '0.00',
        reversesCommissionId: null,
        ...NO_SALE,
        payoutDate: null,
        name: null,
        isSelfReferral: false,
        isWalletPayment: 0,
        createdAt: now,
        updatedAt: now,
      },
    })
    expect(res.body.data).not.toHaveProperty('referredTo')
  })

  it('defaults the amounts to 0.00 and stores every optional field given', async () => {
    const { api, ann, campaign1 } = await world()
    const made = await api.referredUsers.create({
      referredTo: 'full@example.com',
      affiliateId: ann.id,
      workspaceId: WS_A,
      campaignId: campaign1.id,
      status: 'processing',
      payoutDate: '2026-02-01T00:00:00+01:00',
      name: 'Full Name',
      remarks: 'came from the newsletter',
      isWalletPayment: 1,
      chargeId: 'ch_1',
      invoiceId: 'in_1',
      stripeSubscriptionId: 'sub_1',
    })
    expect(made).toMatchObject({
      amount: '0.00',
      adminEarnedAmount: '0.00',
      status: 'processing',
      payoutDate: '2026-01-31T23:00:00.000Z',
      name: 'Full Name',
      remarks: 'came from the newsletter',
      isWalletPayment: 1,
      chargeId: 'ch_1',
      invoiceId: 'in_1',
      stripeSubscriptionId: 'sub_1',
    })
    expect(await api.referredUsers.get('FULL@example.com')).toEqual(made)
  })

  it.each([
    ['the affiliate e-mail in another case', 'ann@EXAMPLE.com', false, true],
    ['the payout e-mail in another case', 'Ann.Payouts@Example.COM', false, true],
    ['someone else, whatever the request claims', 'other@example.com', true, false],
    ['someone else', 'other@example.com', undefined, false],
  ])('computes isSelfReferral for %s', async (_name, referredTo, claimed, expected) => {
    const { call, api, ann } = await world()
    const res = await call('POST', '/referred-users', { body: { referredTo, affiliateId: ann.id, isSelfReferral: claimed } })
    expect(res.status).toBe(201)
    expect(res.body.data.isSelfReferral).toBe(expected)
    expect((await api.referredUsers.get(referredTo)).isSelfReferral).toBe(expected)
  })

  it('does not treat an affiliate without a payout e-mail as self-referring anybody else', async () => {
    const { api, bob } = await world()
    expect((await api.referredUsers.create({ referredTo: 'someone@example.com', affiliateId: bob.id })).isSelfReferral).toBe(false)
    expect((await api.referredUsers.create({ referredTo: 'BOB@example.com', affiliateId: bob.id })).isSelfReferral).toBe(true)
  })

  it('answers 403 for a workspaceId that is not the caller, before anything else', async () => {
    const { call, api, ann, zed, body, count } = await world()
    const res = await call('POST', '/referred-users', { body: body(ann, { workspaceId: WS_B }) })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ status: 403, code: 'forbidden', message: 'You do not have access to this workspace' })
    const scoped = api.as({ keyId: 'k', userId: USER_A, workspaceIds: [WS_A] })
    await expect(scoped.referredUsers.create(body(zed, { workspaceId: WS_B }))).rejects.toMatchObject({ status: 403 })
    expect(await count()).toBe(0)
  })

  it('answers 422 for a workspaceId or campaignId that is not the affiliate', async () => {
    const { call, api, ann, campaign2, campaignA2, body, count } = await world()
    const workspace = await call('POST', '/referred-users', { body: body(ann, { workspaceId: WS_A2 }) })
    expect(workspace.status).toBe(422)
    expect(workspace.body).toEqual({
      status: 422,
      code: 'workspace_mismatch',
      message: "workspaceId does not match the affiliate's workspace",
    })
    const campaign = await call('POST', '/referred-users', { body: body(ann, { campaignId: campaign2.id }) })
    expect(campaign.status).toBe(422)
    expect(campaign.body).toEqual({ status: 422, code: 'attribution_mismatch', message: 'The affiliate does not belong to this campaign' })
    expect((await call('POST', '/referred-users', { body: body(ann, { campaignId: campaignA2.id }) })).status).toBe(422)
    expect(await count()).toBe(0)
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 0, totalEarnings: 0 })
    expect((await call('POST', '/referred-users', { body: body(ann, { workspaceId: WS_A, campaignId: ann.campaignId }) })).status).toBe(201)
  })

  it('answers 404 alike for unknown and foreign affiliates and campaigns', async () => {
    const { call, ann, zed, campaignB, body, count } = await world()
    const unknown = await call('POST', '/referred-users', { body: body({ id: UNKNOWN_ID }) })
    const foreign = await call('POST', '/referred-users', { body: body(zed) })
    expect(unknown.status).toBe(404)
    expect(foreign.body).toEqual(unknown.body)
    expect((await call('POST', '/referred-users', { body: body(ann, { campaignId: campaignB.id }) })).status).toBe(404)
    expect(await count()).toBe(0)
  })

  it('answers 422 for a banned affiliate', async () => {
    const { call, api, ann, body, count } = await world()
    await call('PUT', `/affiliates?affiliateId=${ann.id}`, { body: { isBanned: true } })
    const res = await call('POST', '/referred-users', { body: body(ann, { amount: '3.00' }) })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ status: 422, code: 'affiliate_banned', message: 'This affiliate is banned and cannot earn commissions' })
    expect(await count()).toBe(0)
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 0, totalEarnings: 0 })
  })

  it.each([
    ['no referredTo', { referredTo: undefined }, 'referredTo', 'referredTo is required'],
    ['a bad referredTo', { referredTo: 'nobody' }, 'referredTo', 'referredTo must be a valid e-mail address'],
    ['referredUser instead of referredTo', { referredUser: 'x@example.com' }, 'referredUser', 'referredUser is read-only'],
    ['three decimals', { amount: '1.234' }, 'amount', 'amount must be a non-negative number with at most two decimals'],
    [
      'a negative amount',
      { adminEarnedAmount: '-1' },
      'adminEarnedAmount',
      'adminEarnedAmount must be a non-negative number with at most two decimals',
    ],
    ['NaN', { amount: 'NaN' }, 'amount', 'amount must be a non-negative number with at most two decimals'],
    ['a bad payoutDate', { payoutDate: 'soon' }, 'payoutDate', 'payoutDate must be an ISO 8601 timestamp'],
    [
      'a payoutDate that is not a calendar date',
      { payoutDate: '2026-06-31T00:00:00Z' },
      'payoutDate',
      'payoutDate must be an ISO 8601 timestamp',
    ],
    ['isWalletPayment 2', { isWalletPayment: 2 }, 'isWalletPayment', 'isWalletPayment must be an integer from 0 to 1'],
    ['an empty invoiceId', { invoiceId: '' }, 'invoiceId', 'invoiceId must not be empty'],
    ['a non-boolean isSelfReferral', { isSelfReferral: 'yes' }, 'isSelfReferral', 'isSelfReferral must be true or false'],
    ['an unknown field', { plan: 'pro' }, 'plan', 'plan is not a known field'],
    ['a read-only commissionId', { commissionId: UNKNOWN_ID }, 'commissionId', 'commissionId is read-only'],
  ])('refuses %s with 400', async (_name, overrides, field, msg) => {
    const { call, ann, body, count } = await world()
    const res = await call('POST', '/referred-users', { body: body(ann, overrides) })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      status: 400,
      code: 'validation_error',
      message: 'Validation error',
      errors: [{ type: 'field', msg, path: field, location: 'body' }],
    })
    expect(await count()).toBe(0)
  })

  it('requires referredTo and affiliateId and nothing else', async () => {
    const { call } = await world()
    const res = await call('POST', '/referred-users', { body: {} })
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['affiliateId', 'referredTo'])
  })
})

describe('GET /referred-users', () => {
  it('answers the newest record for the e-mail, case-insensitively', async () => {
    const { call, api, clock, ann, bob, body } = await world()
    await api.referredUsers.create(body(ann, { referredTo: 'Pat@example.com', name: 'first' }))
    clock.advance(1000)
    const newest = await api.referredUsers.create(body(bob, { referredTo: 'PAT@EXAMPLE.COM', name: 'second' }))
    clock.advance(1000)
    await api.referredUsers.create(body(bob, { referredTo: 'someone@example.com' }))
    const res = await call('GET', path('pat@example.com'))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 200, message: 'Referred user retrieved successfully', data: newest })
  })

  it('looks only in the caller workspaces: a newer record elsewhere is invisible, and one only elsewhere is 404', async () => {
    const { call, api, clock, ann, zed, dee, body } = await world()
    const mine = await api.referredUsers.create(body(ann, { referredTo: 'shared@example.com' }))
    clock.advance(1000)
    const theirs = await api.referredUsers.create(body(zed, { referredTo: 'shared@example.com' }))
    await api.referredUsers.create(body(zed, { referredTo: 'only-b@example.com' }))
    expect((await call('GET', path('shared@example.com'))).body.data).toEqual(mine)
    expect((await call('GET', path('shared@example.com'), { key: KEY_B })).body.data).toEqual(theirs)
    expect(await api.referredUsers.get('shared@example.com')).toEqual(theirs)
    const elsewhere = await call('GET', path('only-b@example.com'))
    const nowhere = await call('GET', path('nobody@example.com'))
    expect(nowhere.status).toBe(404)
    expect(nowhere.body).toEqual({ status: 404, code: 'not_found', message: 'Referred user not found' })
    expect(elsewhere.body).toEqual(nowhere.body)
    // Both of the key's workspaces are searched.
    clock.advance(1000)
    const inA2 = await api.referredUsers.create(body(dee, { referredTo: 'shared@example.com' }))
    expect((await call('GET', path('shared@example.com'))).body.data).toEqual(inA2)
  })

  it('answers 400 without a valid e-mail', async () => {
    const { call } = await world()
    const missing = await call('GET', '/referred-users')
    expect(missing.status).toBe(400)
    expect(missing.body.errors).toEqual([{ type: 'field', msg: 'referredUser is required', path: 'referredUser', location: 'query' }])
    expect((await call('GET', '/referred-users?referredUser=not-mail')).status).toBe(400)
  })
})

describe('PUT /referred-users', () => {
  it('changes only the fields given, normalising dates and amounts', async () => {
    const { call, api, clock, ann, body } = await world()
    const created = await api.referredUsers.create(body(ann, { name: 'Pat', amount: '4.00', chargeId: 'ch_9' }))
    clock.advance(5000)
    const res = await call('PUT', `/referred-users?commissionId=${created.commissionId}`, {
      body: { payoutDate: '2026-03-01T12:00:00-02:00', amount: '4.5', chargeId: null, status: 'processing' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      status: 200,
      message: 'Referred user updated successfully',
      data: {
        ...created,
        payoutDate: '2026-03-01T14:00:00.000Z',
        amount: '4.50',
        chargeId: null,
        status: 'processing',
        updatedAt: new Date(clock.now()).toISOString(),
      },
    })
    expect((await api.affiliates.get(ann.id)).totalEarnings).toBe(4.5)
    const cleared = await api.referredUsers.update(created.commissionId, { payoutDate: null, name: null })
    expect(cleared).toMatchObject({ payoutDate: null, name: null, amount: '4.50' })
  })

  it.each(['referredTo', 'referredUser', 'affiliateId', 'workspaceId', 'campaignId', 'isSelfReferral', 'referralCode', 'commissionId'])(
    'refuses the read-only field %s with 400',
    async (field) => {
      const { call, api, ann, body } = await world()
      const created = await api.referredUsers.create(body(ann))
      const value = field === 'isSelfReferral' ? true : field === 'referredTo' || field === 'referredUser' ? 'x@example.com' : UNKNOWN_ID
      const res = await call('PUT', `/referred-users?commissionId=${created.commissionId}`, { body: { [field]: value } })
      expect(res.status).toBe(400)
      expect(res.body.errors).toEqual([{ type: 'field', msg: `${field} is read-only`, path: field, location: 'body' }])
      expect(await api.referredUsers.get('signup@example.com')).toEqual(created)
    },
  )

  it('follows the commission state machine and the amount lock', async () => {
    const { call, api, ann, body } = await world()
    const created = await api.referredUsers.create(body(ann, { status: 'paid', amount: '8.00' }))
    const p = `/referred-users?commissionId=${created.commissionId}`
    expect((await call('PUT', p, { body: { status: 'pending' } })).body).toEqual({
      status: 422,
      code: 'invalid_status_transition',
      message: 'Cannot change status from paid to pending',
    })
    expect((await call('PUT', p, { body: { amount: '9.00' } })).status).toBe(422)
    expect((await call('PUT', p, { body: { status: 'refunded' } })).body.data.status).toBe('refunded')
    expect((await api.affiliates.get(ann.id)).totalEarnings).toBe(0)
  })

  it('answers 400 without a commissionId or with an empty body, and 404 alike for unknown and foreign ids', async () => {
    const { call, api, ann, zed, body } = await world()
    const mine = await api.referredUsers.create(body(ann))
    expect((await call('PUT', '/referred-users', { body: { name: 'x' } })).status).toBe(400)
    expect((await call('PUT', `/referred-users?commissionId=${mine.commissionId}`, { body: {} })).status).toBe(400)
    const theirs = await api.referredUsers.create(body(zed))
    const unknown = await call('PUT', `/referred-users?commissionId=${UNKNOWN_ID}`, { body: { name: 'x' } })
    const foreign = await call('PUT', `/referred-users?commissionId=${theirs.commissionId}`, { body: { name: 'x' } })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ status: 404, code: 'not_found', message: 'Referred user not found' })
    expect(foreign.body).toEqual(unknown.body)
    expect((await api.referredUsers.list({ affiliateId: zed.id })).items).toEqual([theirs])
  })
})

describe('DELETE /referred-users', () => {
  it('deletes by commissionId and takes the record off the counters', async () => {
    const { call, api, ann, body } = await world()
    const created = await api.referredUsers.create(body(ann, { amount: '2.00' }))
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 1, totalEarnings: 2 })
    const res = await call('DELETE', `/referred-users?commissionId=${created.commissionId}`)
    expect(res.body).toEqual({ status: 200, message: 'Referred user deleted successfully', data: { id: created.commissionId } })
    expect((await call('GET', path('signup@example.com'))).status).toBe(404)
    expect((await call('DELETE', `/referred-users?commissionId=${created.commissionId}`)).status).toBe(404)
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 0, totalEarnings: 0 })
  })

  it('answers 404 alike for unknown and foreign ids, keeping the record', async () => {
    const { call, api, zed, body } = await world()
    const theirs = await api.referredUsers.create(body(zed))
    const unknown = await call('DELETE', `/referred-users?commissionId=${UNKNOWN_ID}`)
    const foreign = await call('DELETE', `/referred-users?commissionId=${theirs.commissionId}`)
    expect(unknown.status).toBe(404)
    expect(foreign.body).toEqual(unknown.body)
    expect(await api.referredUsers.get('signup@example.com')).toEqual(theirs)
  })
})

describe('GET /referred-users/list', () => {
  it('lists referred-user shapes with the commission filters and pagination', async () => {
    const { call, api, clock, ann, bob, dee, zed, campaignA2, body } = await world()
    const a = await api.referredUsers.create(body(ann, { referredTo: 'a@example.com', status: 'paid', name: 'Alpha' }))
    clock.advance(10)
    const b = await api.referredUsers.create(body(bob, { referredTo: 'b@example.com' }))
    clock.advance(10)
    const d = await api.referredUsers.create(body(dee, { referredTo: 'd@example.com', amount: '99.99' }))
    await api.referredUsers.create(body(zed))
    const res = await call('GET', '/referred-users/list')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      status: 200,
      message: 'Referred users retrieved successfully',
      data: { items: [d, b, a], pagination: { page: 1, limit: 10, total: 3, totalPages: 1 } },
    })
    const q = async (query: string) => (await call('GET', `/referred-users/list?${query}`)).body.data.items
    expect(await q(`affiliateId=${ann.id}`)).toEqual([a])
    expect(await q('status=pending')).toEqual([d, b])
    expect(await q(`campaignId=${campaignA2.id}`)).toEqual([d])
    expect(await q('contains=alpha')).toEqual([a])
    expect(await q('orderType=amount&limit=1')).toEqual([d])
    expect(await q(`workspaceId=${WS_A}&orderValue=ASC`)).toEqual([a, b])
    expect((await call('GET', `/referred-users/list?workspaceId=${WS_B}`)).status).toBe(403)
  })
})

describe('one record, two route families', () => {
  it('reads a referred user as a commission and a commission as a referred user', async () => {
    const { call, api, ann, body } = await world()
    const referred = await api.referredUsers.create(body(ann, { referredTo: 'both@example.com', amount: '3.30', name: 'Both' }))
    const asCommission = await call('GET', `/commissions?commissionId=${referred.commissionId}`)
    expect(asCommission.status).toBe(200)
    const { payoutDate, name, isSelfReferral, isWalletPayment, ...commissionFields } = referred
    expect(asCommission.body.data).toEqual(commissionFields)
    expect(name).toBe('Both')

    const commission = await api.commissions.create({
      campaignId: ann.campaignId,
      affiliateId: ann.id,
      referredUser: 'sale@example.com',
      amount: 1,
    })
    const asReferred = await call('GET', path('sale@example.com'))
    expect(asReferred.body.data).toEqual({
      ...commission,
      payoutDate: null,
      name: null,
      isSelfReferral: false,
      isWalletPayment: 0,
    })
    const updated = await call('PUT', `/referred-users?commissionId=${commission.commissionId}`, {
      body: { name: 'Named later', invoiceId: 'in_7' },
    })
    expect(updated.body.data).toMatchObject({ name: 'Named later', invoiceId: 'in_7', commissionId: commission.commissionId })
    expect((await call('GET', '/commissions/list')).body.data.pagination.total).toBe(2)
    expect((await call('GET', '/referred-users/list')).body.data.pagination.total).toBe(2)
    expect((await call('DELETE', `/commissions?commissionId=${referred.commissionId}`)).status).toBe(200)
    expect((await call('GET', path('both@example.com'))).status).toBe(404)
    expect((await call('DELETE', `/referred-users?commissionId=${commission.commissionId}`)).status).toBe(200)
    expect((await call('GET', `/commissions?commissionId=${commission.commissionId}`)).status).toBe(404)
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 0, totalEarnings: 0 })
  })

  it('counts one signup for an e-mail whichever route family recorded it', async () => {
    const { api, ann, body } = await world()
    await api.referredUsers.create(body(ann, { referredTo: 'same@example.com', amount: '1.00' }))
    await api.commissions.create({ campaignId: ann.campaignId, affiliateId: ann.id, referredUser: 'Same@Example.com', amount: '2.00' })
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 1, totalEarnings: 3 })
  })
})

describe('invoiceId and chargeId de-duplication', () => {
  it.each(['invoiceId', 'chargeId'] as const)('refuses a repeated %s in one workspace with 422, changing nothing', async (field) => {
    const { call, api, ann, bob, body, count } = await world()
    expect((await call('POST', '/referred-users', { body: body(ann, { [field]: 'X-1', amount: '5.00' }) })).status).toBe(201)
    for (const affiliate of [ann, bob]) {
      const again = await call('POST', '/referred-users', {
        body: body(affiliate, { referredTo: 'new@example.com', [field]: 'X-1', amount: '7.00' }),
      })
      expect(again.status).toBe(422)
      expect(again.body).toEqual({
        status: 422,
        code: 'duplicate',
        message: `A commission with this ${field} already exists in this workspace`,
      })
    }
    expect(await count()).toBe(1)
    expect(await api.affiliates.get(ann.id)).toMatchObject({ totalSignups: 1, totalEarnings: 5 })
    expect(await api.affiliates.get(bob.id)).toMatchObject({ totalSignups: 0, totalEarnings: 0 })
    // Exact comparison: another case is another id.
    expect((await call('POST', '/referred-users', { body: body(bob, { [field]: 'x-1' }) })).status).toBe(201)
  })

  it.each(['invoiceId', 'chargeId'] as const)(
    'allows the same %s in another workspace, and again once the first is deleted',
    async (field) => {
      const { call, api, ann, dee, zed, body } = await world()
      const first = await api.referredUsers.create(body(ann, { [field]: 'SALE-9' }))
      expect((await call('POST', '/referred-users', { body: body(dee, { [field]: 'SALE-9' }) })).status).toBe(201)
      expect((await call('POST', '/referred-users', { key: KEY_B, body: body(zed, { [field]: 'SALE-9' }) })).status).toBe(201)
      expect((await call('POST', '/referred-users', { body: body(ann, { [field]: 'SALE-9' }) })).status).toBe(422)
      await api.referredUsers.delete(first.commissionId)
      expect((await call('POST', '/referred-users', { body: body(ann, { [field]: 'SALE-9' }) })).status).toBe(201)
    },
  )

  it('never collides on null or unset ids', async () => {
    const { api, ann, body } = await world()
    for (let i = 0; i < 3; i++) {
      await api.referredUsers.create(body(ann, { invoiceId: null, chargeId: null }))
      await api.referredUsers.create(body(ann))
      await api.commissions.create({ campaignId: ann.campaignId, affiliateId: ann.id, referredUser: 'c@example.com', amount: 1 })
    }
    expect((await api.referredUsers.list()).pagination.total).toBe(9)
  })

  it('refuses an update that would repeat an id, keeping the record as it was', async () => {
    const { call, api, ann, body } = await world()
    await api.referredUsers.create(body(ann, { invoiceId: 'in_1', chargeId: 'ch_1' }))
    const second = await api.referredUsers.create(body(ann, { invoiceId: 'in_2', amount: '1.00' }))
    const p = `/referred-users?commissionId=${second.commissionId}`
    const invoice = await call('PUT', p, { body: { invoiceId: 'in_1', amount: '2.00' } })
    expect(invoice.status).toBe(422)
    expect(invoice.body.message).toBe('A commission with this invoiceId already exists in this workspace')
    expect((await call('PUT', p, { body: { chargeId: 'ch_1' } })).status).toBe(422)
    expect(await api.commissions.get(second.commissionId)).toEqual(
      (({ payoutDate, name, isSelfReferral, isWalletPayment, ...rest }) => rest)(second),
    )
    expect((await api.affiliates.get(ann.id)).totalEarnings).toBe(1)
    expect((await call('PUT', p, { body: { invoiceId: 'in_2', chargeId: 'ch_2' } })).status).toBe(200)
  })
})
