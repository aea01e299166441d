import { describe, expect, it } from 'vitest'
import { AffiliateError, type CampaignCreateInput, type Principal } from '../../src/index.js'
import { apiCampaignInput, KEY_B, setup, UNKNOWN_ID, USER_A, USER_B, WS_A, WS_A2, WS_B } from '../support/helpers.js'

// The typed API: `service.api` acts as the trusted embedding app; `api.as(principal)` as a caller
// limited to its workspaces, exactly like HTTP.

const principalA: Principal = { keyId: 'typed-a', userId: USER_A, workspaceIds: [WS_A, WS_A2] }
const principalB: Principal = { keyId: 'typed-b', userId: USER_B, workspaceIds: [WS_B] }

/** The AffiliateError a call rejects with; fails the test when it resolves or throws anything else. */
async function failure(promise: Promise<unknown>): Promise<AffiliateError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`)
  expect(outcome.error).toBeInstanceOf(AffiliateError)
  return outcome.error as AffiliateError
}

describe('api.campaigns (trusted)', () => {
  it('creates, reads, updates, lists and deletes with the shapes HTTP answers', async () => {
    const { api, call, clock } = setup()
    const created = await api.campaigns.create(apiCampaignInput({ allowedUrlParameters: ['ref', 'via'] }))
    expect((await call('GET', `/campaigns?campaignId=${created.id}`)).body.data).toEqual(created)
    expect(await api.campaigns.get(created.id)).toEqual(created)
    clock.advance(10)
    const updated = await api.campaigns.update(created.id, { campaignName: 'Renamed' })
    expect(updated).toEqual({ ...created, campaignName: 'Renamed', updatedAt: '2026-01-01T00:00:00.010Z' })
    expect((await call('GET', `/campaigns?campaignId=${created.id}`)).body.data).toEqual(updated)
    const listed = await api.campaigns.list()
    expect(listed).toEqual((await call('GET', '/campaigns/list')).body.data)
    expect(await api.campaigns.delete(created.id)).toEqual({ id: created.id })
    expect((await failure(api.campaigns.get(created.id))).status).toBe(404)
  })

  it('may use any workspace, and lists them all', async () => {
    const { api, clock } = setup()
    const other = 'abcdef00-0000-4000-8000-00000000abcd'
    const inB = await api.campaigns.create(apiCampaignInput({ workspaceId: WS_B, campaignName: 'B' }))
    clock.advance(1)
    const inOther = await api.campaigns.create(apiCampaignInput({ workspaceId: other.toUpperCase(), campaignName: 'Other' }))
    clock.advance(1)
    await api.campaigns.create(apiCampaignInput({ campaignName: 'A' }))
    expect(inB.workspaceId).toBe(WS_B)
    expect(inOther.workspaceId).toBe(other)
    expect((await api.campaigns.list({ orderValue: 'ASC' })).items.map((c) => c.campaignName)).toEqual(['B', 'Other', 'A'])
    expect((await api.campaigns.list({ workspaceId: other })).items.map((c) => c.id)).toEqual([inOther.id])
    expect((await api.campaigns.get(inB.id)).id).toBe(inB.id)
  })

  it('takes list numbers as numbers and validates them as HTTP does', async () => {
    const { api, clock } = setup()
    for (let i = 0; i < 7; i++) {
      await api.campaigns.create(apiCampaignInput({ campaignName: `C${i}` }))
      clock.advance(1)
    }
    const page = await api.campaigns.list({ page: 2, limit: 3, orderValue: 'ASC', orderType: 'createdAt' })
    expect(page.items.map((c) => c.campaignName)).toEqual(['C3', 'C4', 'C5'])
    expect(page.pagination).toEqual({ page: 2, limit: 3, total: 7, totalPages: 3 })
    const error = await failure(api.campaigns.list({ limit: 101, page: 0 }))
    expect(error.status).toBe(400)
    expect(error.message).toBe('Validation error')
    expect(error.errors).toEqual([
      { type: 'field', msg: 'page must be an integer from 1 to 1000000', path: 'page', location: 'query' },
      { type: 'field', msg: 'limit must be an integer from 1 to 100', path: 'limit', location: 'query' },
    ])
  })

  it('throws AffiliateError 400 with one entry per failing field', async () => {
    const { api } = setup()
    const error = await failure(api.campaigns.create({ campaignName: '', workspaceId: WS_A } as CampaignCreateInput))
    expect(error.status).toBe(400)
    expect(error.message).toBe('Validation error')
    expect(error.errors?.map((e) => e.path).sort()).toEqual(['amount', 'campaignName', 'commissionType', 'url'])
    expect(error.errors?.every((e) => e.type === 'field' && e.location === 'body')).toBe(true)
  })

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['three decimals', 1.005],
    ['a float sum', 0.1 + 0.2],
    ['negative', -3],
  ])('refuses an amount that is %s', async (_, amount) => {
    const { api } = setup()
    const error = await failure(api.campaigns.create(apiCampaignInput({ amount })))
    expect(error.errors).toEqual([
      { type: 'field', msg: 'amount must be a non-negative number with at most two decimals', path: 'amount', location: 'body' },
    ])
    expect((await api.campaigns.list()).pagination.total).toBe(0)
  })

  it('refuses input that is not an object', async () => {
    const { api } = setup()
    for (const input of [null, undefined, 'campaign', [apiCampaignInput()]]) {
      const error = await failure(api.campaigns.create(input as unknown as CampaignCreateInput))
      expect(error.status).toBe(400)
      expect(error.message).toBe('Validation error')
    }
  })

  it('refuses read-only fields on update, and an update naming nothing', async () => {
    const { api } = setup()
    const created = await api.campaigns.create(apiCampaignInput())
    const readOnly = await failure(api.campaigns.update(created.id, { workspaceId: WS_B } as never))
    expect(readOnly.errors).toEqual([{ type: 'field', msg: 'workspaceId is read-only', path: 'workspaceId', location: 'body' }])
    const empty = await failure(api.campaigns.update(created.id, {}))
    expect([empty.status, empty.message, empty.errors]).toEqual([400, 'Nothing to update: the request body names no field', undefined])
    expect(await api.campaigns.get(created.id)).toEqual(created)
  })

  it('treats fields given as undefined as not given: an update of only those names nothing', async () => {
    const { api, clock } = setup()
    const created = await api.campaigns.create(apiCampaignInput())
    clock.advance(1000)
    const error = await failure(api.campaigns.update(created.id, { campaignName: undefined, payoutTerm: undefined }))
    expect([error.status, error.message]).toEqual([400, 'Nothing to update: the request body names no field'])
    expect(await api.campaigns.get(created.id)).toEqual(created)
    const partly = await api.campaigns.update(created.id, { campaignName: undefined, payoutTerm: 30 })
    expect(partly).toEqual({ ...created, payoutTerm: 30, updatedAt: '2026-01-01T00:00:01.000Z' })
  })

  it('throws 404 for an unknown id and 422 for a campaign with affiliates', async () => {
    const { api } = setup()
    const missing = await failure(api.campaigns.get(UNKNOWN_ID))
    expect([missing.status, missing.message]).toEqual([404, 'Campaign not found'])
    const campaign = await api.campaigns.create(apiCampaignInput())
    await api.affiliates.create({ email: 'a@example.com', campaignId: campaign.id })
    const busy = await failure(api.campaigns.delete(campaign.id))
    expect([busy.status, busy.message]).toEqual([422, 'This campaign still has affiliates; delete them first'])
  })

  it('answers copies: changing an answer or an input changes nothing stored', async () => {
    const { api } = setup()
    const parameters = ['ref']
    const created = await api.campaigns.create(apiCampaignInput({ allowedUrlParameters: parameters }))
    parameters.push('later')
    created.allowedUrlParameters.push('mutated')
    created.campaignName = 'mutated'
    const stored = await api.campaigns.get(created.id)
    expect(stored.allowedUrlParameters).toEqual(['ref'])
    expect(stored.campaignName).toBe('Spring launch')
  })

  it('keeps one default per workspace', async () => {
    const { api } = setup()
    const first = await api.campaigns.create(apiCampaignInput({ isDefault: true }))
    const elsewhere = await api.campaigns.create(apiCampaignInput({ isDefault: true, workspaceId: WS_B }))
    const second = await api.campaigns.create(apiCampaignInput({ isDefault: true }))
    expect((await api.campaigns.get(first.id)).isDefault).toBe(false)
    expect((await api.campaigns.get(second.id)).isDefault).toBe(true)
    expect((await api.campaigns.get(elsewhere.id)).isDefault).toBe(true)
  })
})

describe('api.affiliates (trusted)', () => {
  it('creates, reads, updates, lists and deletes with the shapes HTTP answers', async () => {
    const { api, call, clock } = setup()
    const campaign = await api.campaigns.create(apiCampaignInput({ workspaceId: WS_B }))
    const created = await api.affiliates.create({ email: 'Ann@Example.com', campaignId: campaign.id, payoutMethod: 'BANK_TRANSFER' })
    expect(created.workspaceId).toBe(WS_B)
    expect((await call('GET', `/affiliates?affiliateId=${created.id}`, { key: KEY_B })).body.data).toEqual(created)
    clock.advance(1)
    const updated = await api.affiliates.update(created.id, { isBanned: true, notes: 'n' })
    expect(updated).toEqual({ ...created, isBanned: true, notes: 'n', updatedAt: '2026-01-01T00:00:00.001Z' })
    expect(await api.affiliates.get(created.id)).toEqual(updated)
    expect((await api.affiliates.list({ campaignId: campaign.id })).items).toEqual([updated])
    expect(await api.affiliates.delete(created.id)).toEqual({ id: created.id })
    expect((await api.affiliates.list()).pagination.total).toBe(0)
  })

  it("throws 422 on a duplicate email and on a workspaceId that is not the campaign's", async () => {
    const { api } = setup()
    const campaign = await api.campaigns.create(apiCampaignInput())
    await api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
    const duplicate = await failure(api.affiliates.create({ email: 'ANN@example.com', campaignId: campaign.id }))
    expect([duplicate.status, duplicate.message]).toEqual([422, 'An affiliate with this email already exists in this campaign'])
    const mismatch = await failure(api.affiliates.create({ email: 'bo@example.com', campaignId: campaign.id, workspaceId: WS_B }))
    expect([mismatch.status, mismatch.message]).toEqual([422, "workspaceId does not match the campaign's workspace"])
    expect((await api.affiliates.list()).pagination.total).toBe(1)
  })

  it('treats fields given as undefined as not given on update', async () => {
    const { api, clock } = setup()
    const campaign = await api.campaigns.create(apiCampaignInput())
    const created = await api.affiliates.create({ email: 'a@example.com', campaignId: campaign.id, firstName: 'Ann' })
    clock.advance(1000)
    const error = await failure(api.affiliates.update(created.id, { firstName: undefined }))
    expect(error.status).toBe(400)
    expect(await api.affiliates.get(created.id)).toEqual(created)
    expect(await api.affiliates.update(created.id, { firstName: undefined, lastName: 'Lee' })).toEqual({
      ...created,
      lastName: 'Lee',
      updatedAt: '2026-01-01T00:00:01.000Z',
    })
  })

  it('throws 400 naming the missing fields', async () => {
    const { api } = setup()
    const error = await failure(api.affiliates.create({} as never))
    expect(error.errors?.map((e) => [e.path, e.msg])).toEqual([
      ['email', 'email is required'],
      ['campaignId', 'campaignId is required'],
    ])
  })
})

describe('api.as(principal)', () => {
  it("creates only in the principal's workspaces: 403 elsewhere, nothing stored", async () => {
    const { api } = setup()
    const asB = api.as(principalB)
    const error = await failure(asB.campaigns.create(apiCampaignInput({ workspaceId: WS_A })))
    expect([error.status, error.message]).toEqual([403, 'You do not have access to this workspace'])
    expect((await api.campaigns.list()).pagination.total).toBe(0)
    expect((await asB.campaigns.create(apiCampaignInput({ workspaceId: WS_B }))).workspaceId).toBe(WS_B)
  })

  it("answers another workspace's records exactly like unknown ids", async () => {
    const { api } = setup()
    const campaign = await api.campaigns.create(apiCampaignInput({ workspaceId: WS_B }))
    const affiliate = await api.affiliates.create({ email: 'b@example.com', campaignId: campaign.id })
    const asA = api.as(principalA)
    const pairs: [Promise<unknown>, Promise<unknown>][] = [
      [asA.campaigns.get(campaign.id), asA.campaigns.get(UNKNOWN_ID)],
      [asA.campaigns.update(campaign.id, { campaignName: 'x' }), asA.campaigns.update(UNKNOWN_ID, { campaignName: 'x' })],
      [asA.campaigns.delete(campaign.id), asA.campaigns.delete(UNKNOWN_ID)],
      [asA.affiliates.get(affiliate.id), asA.affiliates.get(UNKNOWN_ID)],
      [asA.affiliates.update(affiliate.id, { isBanned: true }), asA.affiliates.update(UNKNOWN_ID, { isBanned: true })],
      [asA.affiliates.delete(affiliate.id), asA.affiliates.delete(UNKNOWN_ID)],
      [
        asA.affiliates.create({ email: 'x@example.com', campaignId: campaign.id }),
        asA.affiliates.create({ email: 'x@example.com', campaignId: UNKNOWN_ID }),
      ],
    ]
    for (const [foreign, unknown] of pairs) {
      const [f, u] = [await failure(foreign), await failure(unknown)]
      expect(f.status).toBe(404)
      expect([f.status, f.message, f.errors]).toEqual([u.status, u.message, u.errors])
    }
    expect(await api.campaigns.get(campaign.id)).toEqual(campaign)
    expect(await api.affiliates.get(affiliate.id)).toEqual(affiliate)
  })

  it("lists only the principal's workspaces, and refuses a workspaceId filter outside them", async () => {
    const { api } = setup()
    await api.campaigns.create(apiCampaignInput({ campaignName: 'A' }))
    await api.campaigns.create(apiCampaignInput({ campaignName: 'A2', workspaceId: WS_A2 }))
    await api.campaigns.create(apiCampaignInput({ campaignName: 'B', workspaceId: WS_B }))
    const names = async (principal: Principal) => (await api.as(principal).campaigns.list()).items.map((c) => c.campaignName).sort()
    expect(await names(principalA)).toEqual(['A', 'A2'])
    expect(await names(principalB)).toEqual(['B'])
    expect(await names({ keyId: 'none', userId: USER_A, workspaceIds: [] })).toEqual([])
    const error = await failure(api.as(principalB).campaigns.list({ workspaceId: WS_A }))
    expect(error.status).toBe(403)
    const affiliatesError = await failure(api.as(principalB).affiliates.list({ workspaceId: WS_A2 }))
    expect(affiliatesError.status).toBe(403)
  })

  it('matches workspace ids whatever their case in the principal', async () => {
    const { api } = setup()
    const workspace = 'abcdef00-0000-4000-8000-00000000abcd'
    const shouting: Principal = { keyId: 'loud', userId: USER_A, workspaceIds: [workspace.toUpperCase()] }
    const created = await api.as(shouting).campaigns.create(apiCampaignInput({ workspaceId: workspace }))
    expect(created.workspaceId).toBe(workspace)
    expect((await api.as(shouting).campaigns.get(created.id)).id).toBe(created.id)
    expect((await api.as(shouting).campaigns.list()).pagination.total).toBe(1)
  })

  it('sees the records HTTP made with the matching key, and HTTP sees its records', async () => {
    const { api, call } = setup()
    const overHttp = (await call('POST', '/campaigns', { key: KEY_B, body: apiCampaignInput({ workspaceId: WS_B }) })).body.data
    const asB = api.as(principalB)
    expect(await asB.campaigns.get(overHttp.id)).toEqual(overHttp)
    const affiliate = await asB.affiliates.create({ email: 'b@example.com', campaignId: overHttp.id })
    expect((await call('GET', `/affiliates?affiliateId=${affiliate.id}`, { key: KEY_B })).body.data).toEqual(affiliate)
    expect((await call('GET', `/affiliates?affiliateId=${affiliate.id}`)).status).toBe(404)
  })
})
