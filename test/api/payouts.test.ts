// Payouts and clawbacks through the API (SPEC "Commissions: kinds, due dates, refunds" and "Payouts"):
// due dates, refunds before and after payment, runs and their skip reasons, the payout state machine
// and what it does to commissions, balances, and the deletion rules that keep money history.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { postgresStorage } from '../../adapters/postgres.js'
import { memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { dropSchema, postgresUrl, testPool, uniqueName } from '../support/services.js'
import { snapshot } from '../support/fixtures.js'
import { apiCampaignInput, expectValidation, fieldError, KEY_B, outcome, setup, UNKNOWN_ID, WS_A, WS_B } from '../support/helpers.js'

const DAY = 86_400_000

/** A campaign paying 30 days after the sale with a 20.00 minimum, and affiliates with and without payout details. */
async function world(options: { payoutTerm?: number; minimum?: number; currency?: string } = {}) {
  const env = setup()
  const { api } = env
  const campaign = await api.campaigns.create(
    apiCampaignInput({
      commissionType: 'fixed',
      amount: 10,
      payoutTerm: options.payoutTerm ?? 30,
      minimumPayoutAmount: options.minimum ?? 20,
      currency: options.currency ?? 'EUR',
    }),
  )
  const ready = await api.affiliates.create({
    email: 'ready@example.com',
    campaignId: campaign.id,
    payoutMethod: 'PAYPAL',
    payoutEmail: 'paypal@example.com',
  })
  const wise = await api.affiliates.create({
    email: 'wise@example.com',
    campaignId: campaign.id,
    payoutMethod: 'WISE',
    payoutEmail: 'wise-pay@example.com',
  })
  const bare = await api.affiliates.create({ email: 'bare@example.com', campaignId: campaign.id })
  let n = 0
  /** A sale of `amount` for `affiliate`, dated `daysAgo` days before the clock. */
  const sale = (affiliate: { id: string }, amount: string, daysAgo = 60) =>
    api.commissions.create({
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      referredUser: `buyer${++n}@example.com`,
      amount,
      commissionDate: new Date(env.clock.now() - daysAgo * DAY).toISOString(),
    })
  const run = (extra: { asOf?: string; dryRun?: boolean; campaignId?: string } = {}) => api.payouts.run({ workspaceId: WS_A, ...extra })
  const earnings = async (affiliate: { id: string }) => (await api.affiliates.get(affiliate.id)).totalEarnings
  return { ...env, campaign, ready, wise, bare, sale, run, earnings }
}

describe('due dates', () => {
  it('a commission is due payoutTerm days after its commissionDate, kept in step when the date changes', async () => {
    const { api, sale, ready } = await world({ payoutTerm: 30 })
    const c = await sale(ready, '5.00', 0)
    expect(c).toMatchObject({ kind: 'sale', payoutId: null, refundedAmount: '0.00', reversesCommissionId: null })
    expect(c.dueAt).toBe(new Date(Date.parse(c.commissionDate) + 30 * DAY).toISOString())
    const moved = await api.commissions.update(c.commissionId, { commissionDate: '2024-01-31T12:00:00Z' })
    expect(moved.dueAt).toBe('2024-03-01T12:00:00.000Z')
  })

  it('a clawback cannot be re-dated, nor a commission in a payout (422, nothing changed); setting the same date is a no-op', async () => {
    const { api, call, sale, ready, run } = await world({ minimum: 0 })
    const [a, b] = [await sale(ready, '30.00'), await sale(ready, '40.00')]
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.payouts.update(payout!.payoutId, { status: 'paid' })
    await api.commissions.refund(a.commissionId, { amount: '5.00' })
    const [clawback] = (await api.commissions.list({ kind: 'clawback' })).items
    await sale(ready, '10.00', 0)
    // 10.00 is held: the run has nothing due but the clawback.
    expect((await run()).skipped).toEqual([{ affiliateId: ready.id, reason: 'not_positive', amount: '-5.00' }])
    const snapshot = async () => ({
      commissions: await api.commissions.list({ limit: 100 }),
      balance: await api.affiliates.balance(ready.id),
      payouts: await api.payouts.list(),
    })
    const before = await snapshot()
    const later = new Date(Date.parse(clawback!.commissionDate) + 90 * DAY).toISOString()
    expect((await call('PUT', `/commissions?commissionId=${clawback!.commissionId}`, { body: { commissionDate: later } })).body).toEqual({
      status: 422,
      code: 'money_history',
      message: 'A clawback changes only through payouts: its status, amounts and commissionDate cannot be set',
    })
    expect((await call('PUT', `/commissions?commissionId=${b.commissionId}`, { body: { commissionDate: later } })).body).toEqual({
      status: 422,
      code: 'money_history',
      message: 'A commission in a payout cannot be re-dated: money history is kept',
    })
    expect((await call('PUT', `/referred-users?commissionId=${b.commissionId}`, { body: { commissionDate: later } })).status).toBe(422)
    expect(await snapshot()).toEqual(before)
    // The same date changes nothing and is no refusal.
    expect(await api.commissions.update(clawback!.commissionId, { commissionDate: clawback!.commissionDate })).toEqual(clawback)
    expect(await api.commissions.update(b.commissionId, { commissionDate: b.commissionDate })).toMatchObject({
      commissionDate: b.commissionDate,
      status: 'paid',
    })
  })

  it('GET /commissions/list and /referred-users/list filter by kind', async () => {
    const { api, call, sale, ready, run } = await world({ minimum: 0 })
    const a = await sale(ready, '30.00')
    await sale(ready, '10.00')
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.commissions.refund(a.commissionId, { amount: '5.00' })
    const kinds = async (path: string, kind?: string) =>
      (await call('GET', `${path}?limit=100${kind ? `&kind=${kind}` : ''}`)).body.data.items
        .map((c: { kind: string; amount: string }) => [c.kind, c.amount])
        .sort()
    for (const path of ['/commissions/list', '/referred-users/list']) {
      expect(await kinds(path, 'clawback')).toEqual([['clawback', '-5.00']])
      expect(await kinds(path, 'sale')).toEqual([
        ['sale', '10.00'],
        ['sale', '30.00'],
      ])
      expect(await kinds(path)).toHaveLength(3)
      expectValidation(await call('GET', `${path}?kind=refund`), [fieldError('kind', 'kind must be one of: sale, clawback', 'query')])
    }
    expect((await api.commissions.list({ kind: 'clawback', status: 'pending' })).pagination.total).toBe(1)
    expect((await api.referredUsers.list({ kind: 'sale', status: 'pending' })).pagination.total).toBe(0)
  })

  it('refuses the fields the service sets, naming each as read-only', async () => {
    const { call, campaign, ready } = await world()
    const res = await call('POST', '/commissions', {
      body: {
        campaignId: campaign.id,
        affiliateId: ready.id,
        referredUser: 'b@example.com',
        amount: 1,
        kind: 'clawback',
        dueAt: '2026-01-01T00:00:00Z',
        payoutId: UNKNOWN_ID,
        refundedAmount: '1.00',
        reversesCommissionId: UNKNOWN_ID,
      },
    })
    expectValidation(
      res,
      ['kind', 'dueAt', 'payoutId', 'refundedAmount', 'reversesCommissionId'].map((f) => fieldError(f, `${f} is read-only`)),
    )
  })
})

describe('campaign currency', () => {
  it('defaults to USD, takes two-decimal ISO 4217 codes only, and cannot change once the campaign has commissions', async () => {
    const { api, call, campaign, sale, ready } = await world()
    expect((await api.campaigns.create(apiCampaignInput())).currency).toBe('USD')
    for (const bad of ['JPY', 'KWD', 'usd', 'EURO', 'XXX']) {
      expectValidation(await call('POST', '/campaigns', { body: { ...apiCampaignInput(), currency: bad } }), [
        fieldError('currency', 'currency must be the ISO 4217 code of a currency with two decimals (USD, EUR, GBP, ...)'),
      ])
    }
    expect((await api.campaigns.update(campaign.id, { currency: 'GBP' })).currency).toBe('GBP')
    await sale(ready, '1.00')
    const refused = await call('PUT', `/campaigns?campaignId=${campaign.id}`, { body: { currency: 'USD' } })
    expect(refused.body).toEqual({
      status: 422,
      code: 'currency_locked',
      message: 'The currency of a campaign cannot change once it has commissions',
    })
    expect((await api.campaigns.update(campaign.id, { currency: 'GBP', campaignName: 'Same currency' })).campaignName).toBe('Same currency')
  })
})

describe('refunds', () => {
  it('a pending commission loses the amount refunded; all of it makes it refunded; earnings follow', async () => {
    const { api, call, sale, ready, earnings } = await world()
    const c = await sale(ready, '30.00')
    const res = await call('POST', '/commissions/refund', { body: { commissionId: c.commissionId, amount: '12.50' } })
    expect(res.status).toBe(200)
    expect(res.body.message).toBe('Commission refunded successfully')
    expect(res.body.data).toMatchObject({ amount: '17.50', status: 'pending', refundedAmount: '0.00' })
    expect(await earnings(ready)).toBe(17.5)
    expect(await api.commissions.refund(c.commissionId)).toMatchObject({ amount: '0.00', status: 'refunded' })
    expect(await earnings(ready)).toBe(0)
    expect((await api.commissions.list({ affiliateId: ready.id })).items).toHaveLength(1)
  })

  it('a paid commission keeps its amount, counts the refund, and gets a clawback netted into the next payout', async () => {
    const { api, sale, ready, earnings, run, clock } = await world({ minimum: 0 })
    const c = await sale(ready, '40.00')
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.payouts.update(payout!.payoutId, { status: 'paid' })
    const partly = await api.commissions.refund(c.commissionId, { amount: '15.00' })
    expect(partly).toMatchObject({ amount: '40.00', refundedAmount: '15.00', status: 'paid', payoutId: payout!.payoutId })
    expect(await earnings(ready)).toBe(25)
    const clawbacks = (await api.commissions.list({ affiliateId: ready.id })).items.filter((x) => x.kind === 'clawback')
    expect(clawbacks).toEqual([
      expect.objectContaining({
        amount: '-15.00',
        status: 'pending',
        payoutId: null,
        reversesCommissionId: c.commissionId,
        dueAt: new Date(clock.now()).toISOString(),
        referredUser: c.referredUser,
      }),
    ])
    expect(await api.affiliates.balance(ready.id)).toEqual({
      affiliateId: ready.id,
      currency: 'EUR',
      held: '0.00',
      due: '-15.00',
      inPayout: '0.00',
      paidOut: '40.00',
      paidOutside: '0.00',
    })

    // The rest, through PUT status refunded: the same path.
    const rest = await api.commissions.update(c.commissionId, { status: 'refunded' })
    expect(rest).toMatchObject({ amount: '40.00', refundedAmount: '40.00', status: 'refunded' })
    expect(await earnings(ready)).toBe(0)
    expect((await api.affiliates.balance(ready.id)).due).toBe('-40.00')

    // The clawbacks net into the next payout: 50.00 of new sales less 40.00 pays 10.00.
    await sale(ready, '50.00')
    const next = await run()
    expect(next.payouts.map((p) => [p.amount, p.commissionCount])).toEqual([['10.00', 3]])
    expect((await api.payouts.items(next.payouts[0]!.payoutId)).items.map((x) => [x.kind, x.amount, x.status]).sort()).toEqual(
      [
        ['clawback', '-15.00', 'processing'],
        ['clawback', '-25.00', 'processing'],
        ['sale', '50.00', 'processing'],
      ].sort(),
    )
  })

  it('a commission in a pending payout leaves it: the payout shrinks, and is canceled when nothing is left', async () => {
    const { api, sale, ready, run } = await world({ minimum: 0 })
    const [a, b] = [await sale(ready, '30.00'), await sale(ready, '20.00')]
    const [payout] = (await run()).payouts
    expect(payout).toMatchObject({ amount: '50.00', commissionCount: 2 })
    const left = await api.commissions.refund(a.commissionId, { amount: '10.00' })
    expect(left).toMatchObject({ amount: '20.00', status: 'pending', payoutId: null })
    expect(await api.payouts.get(payout!.payoutId)).toMatchObject({ amount: '20.00', commissionCount: 1, status: 'pending' })
    expect(await api.commissions.refund(b.commissionId)).toMatchObject({ amount: '0.00', status: 'refunded', payoutId: null })
    // Canceled, it keeps the amount and count it had, like a payout canceled through PUT.
    expect(await api.payouts.get(payout!.payoutId)).toMatchObject({ amount: '20.00', commissionCount: 1, status: 'canceled' })
    expect((await api.payouts.items(payout!.payoutId)).items).toEqual([])
    // The partly refunded one is due again and goes into the next payout.
    expect((await run()).payouts.map((p) => p.amount)).toEqual(['20.00'])
  })

  it('a pending payout a refund leaves below the campaign minimum is canceled and its commissions return; each change writes its payout event', async () => {
    const { api, sale, ready, run } = await world({ minimum: 25 })
    const [a, b, c] = [await sale(ready, '30.00'), await sale(ready, '20.00'), await sale(ready, '10.00')]
    const [payout] = (await run()).payouts
    const id = payout!.payoutId
    const events = async () => (await api.events.list({ limit: 100 })).items.filter((e) => e.type.startsWith('payout.'))
    expect((await events()).map((e) => e.type)).toEqual(['payout.created'])
    await api.commissions.refund(c.commissionId, { amount: '5.00' })
    // The 10.00 leaves it: 50.00 is still at least the 25.00 minimum, so smaller, told as payout.updated.
    const shrunk = await api.payouts.get(id)
    expect(shrunk).toMatchObject({ amount: '50.00', commissionCount: 2, status: 'pending' })
    expect((await events()).map((e) => [e.type, e.data])).toEqual([
      ['payout.created', payout],
      ['payout.updated', shrunk],
    ])
    await api.commissions.refund(a.commissionId, { amount: '0.01' })
    // The 30.00 leaves it: 20.00 is below the minimum, so canceled, and the 20.00 goes back to pending.
    const canceled = await api.payouts.get(id)
    expect(canceled).toMatchObject({ amount: '50.00', commissionCount: 2, status: 'canceled' })
    expect((await events())[2]).toEqual(
      expect.objectContaining({ type: 'payout.status_changed', data: { ...canceled, previousStatus: 'pending' } }),
    )
    expect(await api.commissions.get(b.commissionId)).toMatchObject({ amount: '20.00', status: 'pending', payoutId: null })
    expect((await api.payouts.items(id)).items).toEqual([])
    expect(await api.affiliates.balance(ready.id)).toMatchObject({ due: '54.99', inPayout: '0.00' })
  })

  it('a refund inside a payout already processing does not pay twice: the payout is frozen, the commission stays, a clawback nets into the next payout', async () => {
    const { api, call, sale, ready, run, earnings } = await world({ minimum: 0 })
    const [a, b] = [await sale(ready, '30.00'), await sale(ready, '40.00')]
    const [payout] = (await run()).payouts
    const id = payout!.payoutId
    const processing = await api.payouts.update(id, { status: 'processing' })
    const exported = (await call('GET', '/payouts/export?format=paypal&status=processing')).text
      .trim()
      .split('\n')
      .map((line) => line.split(','))
    expect(exported.map((row) => [row[1], row[3]])).toEqual([['70.00', id]])
    const before = (await api.events.list({ limit: 100 })).items.length
    // 10.00 of the 30.00 back: as after payment.
    expect(await api.commissions.refund(a.commissionId, { amount: '10.00' })).toMatchObject({
      amount: '30.00',
      refundedAmount: '10.00',
      status: 'processing',
      payoutId: id,
    })
    // All of the 40.00 back: it stays in the payout too, which is never canceled from processing.
    expect(await api.commissions.refund(b.commissionId)).toMatchObject({
      amount: '40.00',
      refundedAmount: '40.00',
      status: 'processing',
      payoutId: id,
    })
    expect(await api.payouts.get(id)).toEqual(processing)
    expect((await api.payouts.items(id)).items.map((c) => c.commissionId).sort()).toEqual([a.commissionId, b.commissionId].sort())
    const clawbacks = (await api.commissions.list({ affiliateId: ready.id, kind: 'clawback' })).items
    expect(clawbacks.map((c) => [c.amount, c.status, c.payoutId, c.reversesCommissionId]).sort()).toEqual(
      [
        ['-10.00', 'pending', null, a.commissionId],
        ['-40.00', 'pending', null, b.commissionId],
      ].sort(),
    )
    // The payout did not change, so no payout event; the refunds and clawbacks have theirs.
    expect((await api.events.list({ limit: 100 })).items.slice(before).map((e) => e.type)).toEqual([
      'commission.clawback_created',
      'commission.refunded',
      'commission.clawback_created',
      'commission.refunded',
    ])
    expect(await earnings(ready)).toBe(20)
    expect(await api.affiliates.balance(ready.id)).toMatchObject({ due: '-50.00', inPayout: '70.00', paidOut: '0.00', paidOutside: '0.00' })
    await api.payouts.update(id, { status: 'paid' })
    expect(await api.commissions.get(a.commissionId)).toMatchObject({ status: 'paid', refundedAmount: '10.00' })
    expect(await api.commissions.get(b.commissionId)).toMatchObject({ status: 'refunded', refundedAmount: '40.00' })
    // The next run nets the clawbacks: 70.00 sent for 20.00 earned, so a 60.00 sale pays 10.00.
    expect((await run()).skipped).toEqual([{ affiliateId: ready.id, reason: 'not_positive', amount: '-50.00' }])
    await sale(ready, '60.00')
    expect((await run()).payouts.map((p) => p.amount)).toEqual(['10.00'])
    expect(await earnings(ready)).toBe(80)
  })

  it('a frozen payout that fails hands back its refunded commissions with their refunds: the clawbacks still net, nothing is paid twice', async () => {
    const { api, sale, ready, run } = await world({ minimum: 0 })
    const a = await sale(ready, '30.00')
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.commissions.refund(a.commissionId, { amount: '10.00' })
    await api.payouts.update(payout!.payoutId, { status: 'failed' })
    expect(await api.commissions.get(a.commissionId)).toMatchObject({
      status: 'pending',
      payoutId: null,
      amount: '30.00',
      refundedAmount: '10.00',
    })
    expect(await api.affiliates.balance(ready.id)).toMatchObject({ due: '20.00', inPayout: '0.00', paidOut: '0.00', paidOutside: '0.00' })
    // A later refund takes the after-payment path too: what is left is 20.00.
    expect(await outcome(() => api.commissions.refund(a.commissionId, { amount: '20.01' }))).toBe(422)
    expect(await outcome(() => api.commissions.delete(a.commissionId))).toBe(422)
    expect((await run()).payouts.map((p) => [p.amount, p.commissionCount])).toEqual([['20.00', 2]])
  })

  it('refuses more than is left, a clawback, a refunded commission and a zero amount (422), and unknown ids (404), changing nothing', async () => {
    const { api, call, sale, ready, run } = await world({ minimum: 0 })
    const c = await sale(ready, '10.00')
    const refuse = async (body: object, status: number, message: string) => {
      const res = await call('POST', '/commissions/refund', { body })
      expect(res.body).toEqual({ status, code: status === 404 ? 'not_found' : 'refund_refused', message })
    }
    await refuse(
      { commissionId: c.commissionId, amount: '10.01' },
      422,
      'The refund amount is more than what is left to refund (1000 minor units)',
    )
    await refuse({ commissionId: c.commissionId, amount: 0 }, 422, 'The refund amount must be greater than zero')
    await refuse({ commissionId: UNKNOWN_ID }, 404, 'Commission not found')
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.payouts.update(payout!.payoutId, { status: 'paid' })
    await api.commissions.refund(c.commissionId, { amount: '4.00' })
    const clawback = (await api.commissions.list({ affiliateId: ready.id })).items.find((x) => x.kind === 'clawback')!
    await refuse({ commissionId: clawback.commissionId }, 422, 'A clawback cannot be refunded')
    await refuse(
      { commissionId: c.commissionId, amount: '6.01' },
      422,
      'The refund amount is more than what is left to refund (600 minor units)',
    )
    await api.commissions.refund(c.commissionId)
    await refuse({ commissionId: c.commissionId }, 422, 'This commission is already refunded')
    expectValidation(await call('POST', '/commissions/refund', { body: { amount: -1 } }), [
      fieldError('commissionId', 'commissionId is required'),
      fieldError('amount', 'amount must be a non-negative number with at most two decimals'),
    ])
    expect(await api.commissions.get(c.commissionId)).toMatchObject({ amount: '10.00', refundedAmount: '10.00', status: 'refunded' })
  })

  it('dryRun answers what a refund would do (the commission, its clawback, the payout it would leave) and writes nothing', async () => {
    const { api, call, sale, ready, run, storage } = await world({ minimum: 20 })
    const [a, b] = [await sale(ready, '15.00'), await sale(ready, '10.00')]
    const [payout] = (await run()).payouts
    const preview = async (commissionId: string, amount?: string) => {
      const before = await snapshot(storage)
      const res = await call('POST', '/commissions/refund', { body: { commissionId, ...(amount ? { amount } : {}), dryRun: true } })
      expect(await snapshot(storage)).toBe(before)
      return res
    }
    // Unpaid, in a pending payout of 25.00 with a minimum of 20.00: it would leave it, and the 10.00 left is below the minimum.
    const unpaid = await preview(a.commissionId, '5.00')
    expect(unpaid.status).toBe(200)
    expect(unpaid.body.data).toEqual({
      commission: {
        ...(await api.commissions.get(a.commissionId)),
        amount: '10.00',
        status: 'pending',
        payoutId: null,
        updatedAt: expect.any(String),
      },
      clawback: null,
      payoutChange: { payoutId: payout!.payoutId, previousAmount: '25.00', amount: '25.00', previousStatus: 'pending', status: 'canceled' },
    })
    const real = await api.commissions.refund(a.commissionId, { amount: '5.00' })
    expect(real).toEqual(unpaid.body.data.commission)
    expect(await api.payouts.get(payout!.payoutId)).toMatchObject({ status: 'canceled', amount: '25.00' })
    // Paid: a clawback would be made; the commission keeps its amount.
    const [second] = (await run()).payouts
    await api.payouts.update(second!.payoutId, { status: 'processing' })
    await api.payouts.update(second!.payoutId, { status: 'paid' })
    const paid = await preview(b.commissionId)
    expect(paid.body.data).toMatchObject({
      commission: { commissionId: b.commissionId, status: 'refunded', refundedAmount: '10.00', amount: '10.00' },
      clawback: { kind: 'clawback', amount: '-10.00', status: 'pending', reversesCommissionId: b.commissionId, payoutId: null },
      payoutChange: null,
    })
    // A refusal is the same 422, dry or not.
    expect((await preview(b.commissionId, '10.01')).body).toMatchObject({ status: 422, code: 'refund_refused' })
    // The typed API answers each shape by the flag.
    const typed = await api.commissions.refund(b.commissionId, { dryRun: true })
    expect(typed.clawback?.amount).toBe('-10.00')
  })

  it('answers 404 for a commission of a workspace the key does not see', async () => {
    const { call, sale, ready } = await world()
    const c = await sale(ready, '10.00')
    expect((await call('POST', '/commissions/refund', { key: KEY_B, body: { commissionId: c.commissionId } })).status).toBe(404)
  })
})

describe('POST /payouts/run', () => {
  it('makes one payout per affiliate of what is due, copies its payout details, and skips the rest with the reason', async () => {
    const env = await world({ minimum: 20 })
    const { api, call, sale, ready, wise, bare, campaign, clock } = env
    await sale(ready, '15.00')
    await sale(ready, '10.00')
    await sale(ready, '99.00', 10) // held: due in 20 days
    await sale(wise, '19.99') // below the minimum
    await sale(bare, '50.00') // no payout details
    const banned = await api.affiliates.create({
      email: 'banned@example.com',
      campaignId: campaign.id,
      payoutMethod: 'WISE',
      payoutEmail: 'b@example.com',
    })
    await sale(banned, '70.00')
    await api.affiliates.update(banned.id, { isBanned: true })

    const dry = await call('POST', '/payouts/run', { body: { workspaceId: WS_A, dryRun: true } })
    expect(dry.status).toBe(200)
    expect(dry.body.message).toBe('Payout run completed successfully')
    expect(await api.payouts.list()).toMatchObject({ items: [], pagination: { total: 0 } })

    const res = await call('POST', '/payouts/run', { body: { workspaceId: WS_A } })
    expect(res.status).toBe(201)
    const now = new Date(clock.now()).toISOString()
    expect(res.body.data.payouts).toEqual([
      {
        payoutId: expect.any(String),
        workspaceId: WS_A,
        campaignId: campaign.id,
        affiliateId: ready.id,
        currency: 'EUR',
        amount: '25.00',
        commissionCount: 2,
        status: 'pending',
        payoutMethod: 'PAYPAL',
        payoutEmail: 'paypal@example.com',
        periodEnd: now,
        externalReference: null,
        failureReason: null,
        paidAt: null,
        createdAt: now,
        updatedAt: now,
      },
    ])
    expect(dry.body.data.payouts.map((p: { amount: string }) => p.amount)).toEqual(['25.00'])
    const skipped = (res.body.data.skipped as { affiliateId: string; reason: string; amount: string }[]).map((s) => [
      s.affiliateId,
      s.reason,
      s.amount,
    ])
    expect(skipped.sort()).toEqual(
      [
        [wise.id, 'below_minimum', '19.99'],
        [bare.id, 'no_payout_details', '50.00'],
        [banned.id, 'banned', '70.00'],
      ].sort(),
    )
    expect(res.body.data.skipped).toEqual(dry.body.data.skipped)
    const payoutId = res.body.data.payouts[0].payoutId
    expect(await api.payouts.get(payoutId)).toEqual(res.body.data.payouts[0])
    const items = await api.payouts.items(payoutId)
    expect(items.items.map((c) => [c.amount, c.status, c.payoutId]).sort()).toEqual([
      ['10.00', 'processing', payoutId],
      ['15.00', 'processing', payoutId],
    ])
    expect(await api.affiliates.balance(ready.id)).toEqual({
      affiliateId: ready.id,
      currency: 'EUR',
      held: '99.00',
      due: '0.00',
      inPayout: '25.00',
      paidOut: '0.00',
      paidOutside: '0.00',
    })
    // Nothing is due twice.
    expect((await api.payouts.run({ workspaceId: WS_A })).payouts).toEqual([])
    // Once the held one is due, it is paid on its own.
    clock.advance(21 * DAY)
    expect((await api.payouts.run({ workspaceId: WS_A })).payouts.map((p) => [p.affiliateId, p.amount])).toEqual([[ready.id, '99.00']])
  })

  it('skips an affiliate whose clawbacks outweigh its sales as not_positive, keeping them for later', async () => {
    const { api, sale, ready, run } = await world({ minimum: 0 })
    const c = await sale(ready, '30.00')
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.payouts.update(payout!.payoutId, { status: 'paid' })
    await api.commissions.refund(c.commissionId)
    await sale(ready, '10.00')
    const result = await run()
    expect(result).toEqual({ payouts: [], skipped: [{ affiliateId: ready.id, reason: 'not_positive', amount: '-20.00' }] })
  })

  it('asOf picks what is due by then; a future asOf, another workspace and a foreign campaign are refused', async () => {
    const { api, call, sale, ready, run, clock, campaign } = await world({ minimum: 0 })
    await sale(ready, '5.00', 45) // due 15 days ago
    await sale(ready, '7.00', 35) // due 5 days ago
    const tenDaysAgo = new Date(clock.now() - 10 * DAY).toISOString()
    expect((await run({ asOf: tenDaysAgo })).payouts.map((p) => [p.amount, p.periodEnd])).toEqual([['5.00', tenDaysAgo]])
    expect((await call('POST', '/payouts/run', { body: { workspaceId: WS_A, asOf: '2999-01-01T00:00:00Z' } })).body).toEqual({
      status: 422,
      code: 'invalid_as_of',
      message: 'asOf cannot be in the future: commissions are paid once due',
    })
    expect((await call('POST', '/payouts/run', { body: { workspaceId: WS_B } })).status).toBe(403)
    expect((await call('POST', '/payouts/run', { key: KEY_B, body: { workspaceId: WS_B, campaignId: campaign.id } })).status).toBe(404)
    const other = await api.campaigns.create(apiCampaignInput({ workspaceId: '22222222-2222-4222-8222-222222222222' }))
    expect((await call('POST', '/payouts/run', { body: { workspaceId: WS_A, campaignId: other.id } })).body).toEqual({
      status: 422,
      code: 'workspace_mismatch',
      message: 'campaignId is not in this workspace',
    })
    expectValidation(await call('POST', '/payouts/run', { body: { asOf: 'yesterday', dryRun: 'yes' } }), [
      fieldError('workspaceId', 'workspaceId is required'),
      fieldError('asOf', 'asOf must be an ISO 8601 timestamp'),
      fieldError('dryRun', 'dryRun must be true or false'),
    ])
  })
})

describe('payout moves', () => {
  async function paidWorld() {
    const env = await world({ minimum: 0 })
    const a = await env.sale(env.ready, '12.00')
    const b = await env.sale(env.ready, '8.00')
    const [payout] = (await env.run()).payouts
    return { ...env, a, b, payout: payout! }
  }

  it('pending → processing → paid pays its commissions, sets paidAt and keeps the external reference', async () => {
    const { api, call, payout, a, b, clock, ready } = await paidWorld()
    clock.advance(1000)
    const res = await call('PUT', `/payouts?payoutId=${payout.payoutId}`, { body: { status: 'processing', externalReference: 'BATCH-1' } })
    expect(res.body.data).toMatchObject({ status: 'processing', externalReference: 'BATCH-1', paidAt: null })
    clock.advance(1000)
    const paid = await api.payouts.update(payout.payoutId, { status: 'paid' })
    const now = new Date(clock.now()).toISOString()
    expect(paid).toMatchObject({ status: 'paid', paidAt: now, updatedAt: now, externalReference: 'BATCH-1' })
    for (const c of [a, b]) {
      const read = await api.referredUsers.get(c.referredUser)
      expect(read).toMatchObject({ status: 'paid', payoutId: payout.payoutId, payoutDate: now })
    }
    expect(await api.affiliates.balance(ready.id)).toMatchObject({ due: '0.00', inPayout: '0.00', paidOut: '20.00', paidOutside: '0.00' })
    expect((await api.affiliates.get(ready.id)).totalEarnings).toBe(20)
    // Setting what is there changes nothing, not even updatedAt.
    clock.advance(1000)
    expect(await api.payouts.update(payout.payoutId, { status: 'paid' })).toEqual(paid)
  })

  it('failed and canceled release the commissions to the next run; failureReason is kept', async () => {
    const { api, payout, a, run, ready } = await paidWorld()
    await api.payouts.update(payout.payoutId, { status: 'processing' })
    const failed = await api.payouts.update(payout.payoutId, { status: 'failed', failureReason: 'PayPal account closed' })
    expect(failed).toMatchObject({ status: 'failed', failureReason: 'PayPal account closed' })
    expect(await api.commissions.get(a.commissionId)).toMatchObject({ status: 'pending', payoutId: null })
    expect((await api.payouts.items(payout.payoutId)).items).toEqual([])
    expect((await api.affiliates.balance(ready.id)).due).toBe('20.00')
    const [again] = (await run()).payouts
    expect(await api.payouts.update(again!.payoutId, { status: 'canceled' })).toMatchObject({ status: 'canceled' })
    expect((await api.affiliates.balance(ready.id)).due).toBe('20.00')
    expect((await run()).payouts.map((p) => p.amount)).toEqual(['20.00'])
  })

  it.each([
    ['pending', 'paid'],
    ['processing', 'canceled'],
    ['processing', 'pending'],
    ['paid', 'failed'],
    ['failed', 'pending'],
    ['canceled', 'processing'],
  ] as const)('refuses %s → %s (422), changing nothing', async (from, to) => {
    const { api, call, payout } = await paidWorld()
    const path: Record<string, string[]> = {
      pending: [],
      processing: ['processing'],
      paid: ['processing', 'paid'],
      failed: ['failed'],
      canceled: ['canceled'],
    }
    for (const step of path[from]!) await api.payouts.update(payout.payoutId, { status: step as 'paid' })
    const before = await api.payouts.get(payout.payoutId)
    const res = await call('PUT', `/payouts?payoutId=${payout.payoutId}`, { body: { status: to } })
    expect(res.status).toBe(422)
    expect(res.body.message).toMatch(new RegExp(`^Cannot change payout status from ${from} to ${to}`))
    expect(await api.payouts.get(payout.payoutId)).toEqual(before)
  })

  it("a banned affiliate's payout cannot move to processing or paid, but can fail or be canceled", async () => {
    const { api, payout, ready } = await paidWorld()
    await api.affiliates.update(ready.id, { isBanned: true })
    expect(await outcome(() => api.payouts.update(payout.payoutId, { status: 'processing' }))).toBe(422)
    expect((await api.payouts.update(payout.payoutId, { status: 'canceled' })).status).toBe('canceled')
  })

  it('a commission in a payout cannot have its status or amounts set, nor be deleted; refunds still work', async () => {
    const { api, call, payout, a } = await paidWorld()
    expect((await call('PUT', `/commissions?commissionId=${a.commissionId}`, { body: { status: 'paid' } })).body).toEqual({
      status: 422,
      code: 'amount_locked',
      message: 'A commission in a payout cannot have its status set: refund it, or move the payout',
    })
    expect(await outcome(() => api.commissions.update(a.commissionId, { amount: '1.00' }))).toBe(422)
    expect((await call('DELETE', `/commissions?commissionId=${a.commissionId}`)).body).toEqual({
      status: 422,
      code: 'money_history',
      message: 'A commission in a payout cannot be deleted: refund it or cancel the payout first',
    })
    expect((await api.commissions.update(a.commissionId, { remarks: 'noted' })).remarks).toBe('noted')
    expect(await api.payouts.get(payout.payoutId)).toMatchObject({ amount: '20.00', status: 'pending' })
  })

  it('validates the body and answers 404 for a payout the key does not see', async () => {
    const { call, payout } = await paidWorld()
    expectValidation(await call('PUT', `/payouts?payoutId=${payout.payoutId}`, { body: { status: 'sent', amount: 1 } }), [
      fieldError('status', 'status must be one of: pending, processing, paid, failed, canceled'),
      fieldError('amount', 'amount is read-only'),
    ])
    expect((await call('GET', `/payouts?payoutId=${payout.payoutId}`, { key: KEY_B })).status).toBe(404)
    expect((await call('PUT', `/payouts?payoutId=${payout.payoutId}`, { key: KEY_B, body: { status: 'canceled' } })).status).toBe(404)
    expect((await call('GET', `/payouts/items?payoutId=${payout.payoutId}`, { key: KEY_B })).status).toBe(404)
    expect((await call('GET', `/payouts?payoutId=${UNKNOWN_ID}`)).body).toEqual({
      status: 404,
      code: 'not_found',
      message: 'Payout not found',
    })
  })
})

describe('GET /payouts/list', () => {
  it('filters by affiliate, campaign and status, orders by amount, and never shows another workspace', async () => {
    const { api, call, sale, ready, wise, run, campaign } = await world({ minimum: 0 })
    await sale(ready, '30.00')
    await sale(wise, '10.00')
    const made = (await run()).payouts
    await api.payouts.update(made.find((p) => p.affiliateId === wise.id)!.payoutId, { status: 'canceled' })
    const list = await call('GET', '/payouts/list?orderType=amount&orderValue=ASC')
    expect(list.body.data.items.map((p: { amount: string }) => p.amount)).toEqual(['10.00', '30.00'])
    expect(list.body.data.pagination).toEqual({ page: 1, limit: 10, total: 2, totalPages: 1 })
    expect((await api.payouts.list({ status: 'pending' })).items.map((p) => p.affiliateId)).toEqual([ready.id])
    expect((await api.payouts.list({ affiliateId: wise.id })).items.map((p) => p.status)).toEqual(['canceled'])
    expect((await api.payouts.list({ campaignId: campaign.id })).pagination.total).toBe(2)
    expect((await call('GET', '/payouts/list', { key: KEY_B })).body.data.items).toEqual([])
    expect((await call('GET', `/payouts/list?workspaceId=${WS_B}`)).status).toBe(403)
  })
})

describe('keeping money history', () => {
  it('refuses to delete a clawback, a refunded commission that was paid, and an affiliate with payouts', async () => {
    const { api, call, sale, ready, run } = await world({ minimum: 0 })
    const c = await sale(ready, '10.00')
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.payouts.update(payout!.payoutId, { status: 'paid' })
    await api.commissions.refund(c.commissionId)
    const clawback = (await api.commissions.list({ affiliateId: ready.id })).items.find((x) => x.kind === 'clawback')!
    expect((await call('DELETE', `/commissions?commissionId=${clawback.commissionId}`)).body.message).toBe(
      'A clawback cannot be deleted: money history is kept',
    )
    expect((await call('DELETE', `/commissions?commissionId=${c.commissionId}`)).body.message).toBe(
      'A refunded commission that was paid cannot be deleted: money history is kept',
    )
    expect(await outcome(() => api.commissions.update(clawback.commissionId, { amount: '1.00' }))).toBe(422)
    expect(await outcome(() => api.commissions.update(clawback.commissionId, { status: 'paid' }))).toBe(422)
    const loner = await api.affiliates.create({
      email: 'loner@example.com',
      campaignId: c.campaignId,
      payoutMethod: 'PAYPAL',
      payoutEmail: 'l@example.com',
    })
    const gone = await sale(loner, '10.00')
    const [own] = (await run()).payouts
    await api.payouts.update(own!.payoutId, { status: 'canceled' })
    await api.commissions.delete(gone.commissionId)
    expect((await call('DELETE', `/affiliates?affiliateId=${loner.id}`)).body).toEqual({
      status: 422,
      code: 'money_history',
      message: 'This affiliate has payouts and cannot be deleted: money history is kept',
    })
  })

  it('a refund of a commission that was never paid may still be deleted', async () => {
    const { api, sale, ready } = await world()
    const c = await sale(ready, '10.00')
    await api.commissions.refund(c.commissionId)
    expect(await api.commissions.delete(c.commissionId)).toEqual({ id: c.commissionId })
  })
})

describe('GET /affiliates/balance', () => {
  it('answers held, due, in payout and paid out for the key that sees the affiliate, 404 otherwise', async () => {
    const { call, sale, ready, bare } = await world()
    await sale(ready, '3.00', 5)
    await sale(ready, '4.00')
    const res = await call('GET', `/affiliates/balance?affiliateId=${ready.id}`)
    expect(res.body).toEqual({
      status: 200,
      message: 'Affiliate balance retrieved successfully',
      data: { affiliateId: ready.id, currency: 'EUR', held: '3.00', due: '4.00', inPayout: '0.00', paidOut: '0.00', paidOutside: '0.00' },
    })
    expect((await call('GET', `/affiliates/balance?affiliateId=${bare.id}`)).body.data).toMatchObject({ held: '0.00', due: '0.00' })
    expect((await call('GET', `/affiliates/balance?affiliateId=${ready.id}`, { key: KEY_B })).status).toBe(404)
  })

  it('counts commissions paid outside payouts in paidOutside, so held + due + inPayout + paidOut + paidOutside is totalEarnings', async () => {
    const { api, call, sale, ready, run, earnings } = await world({ minimum: 0 })
    const figures = async () => {
      const { held, due, inPayout, paidOut, paidOutside } = (await call('GET', `/affiliates/balance?affiliateId=${ready.id}`)).body.data
      return { held, due, inPayout, paidOut, paidOutside }
    }
    const adds = async () => {
      const f = await figures()
      expect(Object.values(f).reduce((sum, v) => sum + Math.round(Number(v) * 100), 0)).toBe(Math.round((await earnings(ready)) * 100))
    }
    const [a, b, c] = [await sale(ready, '10.00'), await sale(ready, '20.00'), await sale(ready, '40.00')]
    await sale(ready, '1.00', 0)
    await api.commissions.update(a.commissionId, { status: 'paid' })
    await api.commissions.update(b.commissionId, { status: 'processing' })
    expect(await figures()).toEqual({ held: '1.00', due: '40.00', inPayout: '0.00', paidOut: '0.00', paidOutside: '30.00' })
    await adds()
    const [payout] = (await run()).payouts
    await api.payouts.update(payout!.payoutId, { status: 'processing' })
    await api.payouts.update(payout!.payoutId, { status: 'paid' })
    // Refunded after its payment outside payouts: its clawback takes the 4.00 back in due.
    await api.commissions.refund(a.commissionId, { amount: '4.00' })
    expect(await figures()).toEqual({ held: '1.00', due: '-4.00', inPayout: '0.00', paidOut: '40.00', paidOutside: '30.00' })
    await adds()
    await api.commissions.update(a.commissionId, { status: 'refunded' })
    await api.commissions.update(b.commissionId, { status: 'pending' })
    expect(await figures()).toEqual({ held: '1.00', due: '10.00', inPayout: '0.00', paidOut: '40.00', paidOutside: '10.00' })
    await adds()
    expect((await api.commissions.get(c.commissionId)).status).toBe('paid')
  })
})

// The whole money flow on every storage this repository ships: what the memory storage does above,
// the sql.js file and PostgreSQL must do too (the claim's guard, nulls in `where`, bigint money).
describe.each(storages())('the money flow on %s', (_name, open) => {
  it('run, pay, refund after payment, net the clawback into the next run, fail and run again', async () => {
    const storage = await open()
    try {
      const env = setup({ storage })
      const { api, clock } = env
      const campaign = await api.campaigns.create(
        apiCampaignInput({ commissionType: 'fixed', amount: 10, payoutTerm: 14, currency: 'GBP' }),
      )
      const affiliate = await api.affiliates.create({
        email: 'flow@example.com',
        campaignId: campaign.id,
        payoutMethod: 'WISE',
        payoutEmail: 'w@example.com',
      })
      const sale = (amount: string, daysAgo: number) =>
        api.commissions.create({
          campaignId: campaign.id,
          affiliateId: affiliate.id,
          referredUser: `b${amount}@example.com`,
          amount,
          commissionDate: new Date(clock.now() - daysAgo * DAY).toISOString(),
        })
      const first = await sale('100.00', 20)
      await sale('5.00', 1)
      const [payout] = (await api.payouts.run({ workspaceId: WS_A })).payouts
      expect(payout).toMatchObject({ amount: '100.00', currency: 'GBP', commissionCount: 1 })
      expect((await api.payouts.run({ workspaceId: WS_A })).payouts).toEqual([])
      await api.payouts.update(payout!.payoutId, { status: 'processing' })
      await api.payouts.update(payout!.payoutId, { status: 'paid', externalReference: 'WISE-1' })
      expect(await api.commissions.get(first.commissionId)).toMatchObject({ status: 'paid', payoutId: payout!.payoutId })
      await api.commissions.refund(first.commissionId, { amount: '30.00' })
      expect(await api.affiliates.balance(affiliate.id)).toEqual({
        affiliateId: affiliate.id,
        currency: 'GBP',
        held: '5.00',
        due: '-30.00',
        inPayout: '0.00',
        paidOut: '100.00',
        paidOutside: '0.00',
      })
      expect((await api.affiliates.get(affiliate.id)).totalEarnings).toBe(75)
      clock.advance(14 * DAY)
      await sale('50.00', 30)
      const [next] = (await api.payouts.run({ workspaceId: WS_A })).payouts
      expect(next).toMatchObject({ amount: '25.00', commissionCount: 3 })
      await api.payouts.update(next!.payoutId, { status: 'failed', failureReason: 'bounced' })
      expect((await api.payouts.items(next!.payoutId)).pagination.total).toBe(0)
      const [again] = (await api.payouts.run({ workspaceId: WS_A })).payouts
      expect(again).toMatchObject({ amount: '25.00', commissionCount: 3 })
      expect((await api.payouts.list({ affiliateId: affiliate.id })).items.map((p) => p.status).sort()).toEqual([
        'failed',
        'paid',
        'pending',
      ])
      expect((await api.payouts.list({ status: 'failed' })).items.map((p) => p.payoutId)).toEqual([next!.payoutId])
    } finally {
      await (storage as { close?: () => Promise<void> }).close?.()
    }
  })

  it('issue 26: a frozen payout keeps what was sent, a pending one shrinks or is canceled with its events, paidOutside reconciles, kind filters', async () => {
    const storage = await open()
    try {
      const { api } = setup({ storage })
      const campaign = await api.campaigns.create(
        apiCampaignInput({ commissionType: 'fixed', amount: 10, payoutTerm: 0, minimumPayoutAmount: 25 }),
      )
      const affiliate = await api.affiliates.create({
        email: 'frozen@example.com',
        campaignId: campaign.id,
        payoutMethod: 'PAYPAL',
        payoutEmail: 'f@example.com',
      })
      let n = 0
      const sale = (amount: string) =>
        api.commissions.create({ campaignId: campaign.id, affiliateId: affiliate.id, referredUser: `f${++n}@example.com`, amount })
      const [a, b] = [await sale('30.00'), await sale('40.00')]
      const [frozen] = (await api.payouts.run({ workspaceId: WS_A })).payouts
      await api.payouts.update(frozen!.payoutId, { status: 'processing' })
      await api.commissions.refund(a.commissionId, { amount: '10.00' })
      await api.commissions.refund(b.commissionId)
      expect(await api.payouts.get(frozen!.payoutId)).toMatchObject({ amount: '70.00', commissionCount: 2, status: 'processing' })
      expect(await outcome(() => api.commissions.update(a.commissionId, { commissionDate: '2020-01-01T00:00:00Z' }))).toBe(422)
      await api.payouts.update(frozen!.payoutId, { status: 'paid' })
      expect([(await api.commissions.get(a.commissionId)).status, (await api.commissions.get(b.commissionId)).status]).toEqual([
        'paid',
        'refunded',
      ])
      expect((await api.commissions.list({ kind: 'clawback' })).items.map((c) => c.amount).sort()).toEqual(['-10.00', '-40.00'])
      expect(await outcome(() => api.commissions.delete(b.commissionId))).toBe(422)
      // Pending payout: 80.00 - 50.00 net of the clawbacks = 30.00; a refund leaving 20.00 cancels it.
      const c = await sale('80.00')
      const [pending] = (await api.payouts.run({ workspaceId: WS_A })).payouts
      expect(pending).toMatchObject({ amount: '30.00', commissionCount: 3 })
      await api.commissions.refund(c.commissionId, { amount: '1.00' })
      expect(await api.payouts.get(pending!.payoutId)).toMatchObject({ status: 'canceled' })
      const events = (await api.events.list({ limit: 100 })).items.filter((e) => e.type.startsWith('payout.'))
      expect(events.at(-1)).toMatchObject({
        type: 'payout.status_changed',
        data: { payoutId: pending!.payoutId, status: 'canceled', previousStatus: 'pending' },
      })
      // Paid by hand outside payouts: the balance reconciles with the earnings.
      await api.commissions.update(c.commissionId, { status: 'paid' })
      const balance = await api.affiliates.balance(affiliate.id)
      expect(balance).toMatchObject({ held: '0.00', due: '-50.00', inPayout: '0.00', paidOut: '70.00', paidOutside: '79.00' })
      expect((await api.affiliates.get(affiliate.id)).totalEarnings).toBe(99)
    } finally {
      await (storage as { close?: () => Promise<void> }).close?.()
    }
  })
})

/** Each storage of this repository, opened empty: memory, the sql.js file, and PostgreSQL when the tests have one. */
function storages(): [string, () => Promise<Storage>][] {
  const list: [string, () => Promise<Storage>][] = [
    ['memory', async () => memoryStorage()],
    [
      'the sql.js file',
      async () => sqlJsStorage({ persist: fileJournal(join(mkdtempSync(join(tmpdir(), 'affiliate-payouts-')), 'db.sqlite')) }),
    ],
  ]
  if (postgresUrl) {
    list.push([
      'PostgreSQL',
      async () => {
        const schema = uniqueName('payouts')
        schemas.push(schema)
        return postgresStorage({ connectionString: postgresUrl!, schema })
      },
    ])
  }
  return list
}

const schemas: string[] = []
afterAll(async () => {
  if (schemas.length === 0) return
  const pool = await testPool(1)
  for (const schema of schemas) await dropSchema(pool, schema)
  await pool.end()
})
