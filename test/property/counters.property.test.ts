import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Affiliate, Commission, CommissionStatus as AnyStatus, ReferralLink } from '../../src/index.js'
/** The statuses a request may set (hold and voided come from the fraud rules and review only). */
type CommissionStatus = Exclude<AnyStatus, 'hold' | 'voided'>
import { formatMoney } from '../../src/domain/money.js'
import { centsOf, outcome, setup, WS_A } from '../support/helpers.js'

// The heart of the counters: after any sequence of creates, status moves, amount changes and deletes,
// through both route families and including refused operations, every affiliate's and link's
// totalEarnings and totalSignups equal what its records say. The expectation is computed twice,
// from the records the service lists and from a model kept here, and the two must agree as well.

const STATUSES: readonly CommissionStatus[] = ['pending', 'processing', 'paid', 'refunded']
const MOVES: Record<CommissionStatus, readonly CommissionStatus[]> = {
  pending: ['processing', 'paid', 'refunded'],
  processing: ['paid', 'refunded', 'pending'],
  paid: ['refunded'],
  refunded: [],
}
/** Repeats in several cases, and the first affiliate's own address. */
const EMAILS = [
  'pat@example.com',
  'PAT@example.com',
  'Pat@Example.Com',
  'lee@example.com',
  'LEE@EXAMPLE.COM',
  'kim@example.com',
  'aff0@example.com',
]
const INVOICES = ['in_1', 'in_2', 'in_3']

type Step =
  | {
      type: 'create'
      kind: 'commission' | 'referred'
      affiliate: number
      email: number
      cents: number
      asNumber: boolean
      status: CommissionStatus | null
      link: number | null
      /** Only referred users carry an invoiceId; ignored for commissions. */
      invoice: string | null
    }
  | { type: 'update'; kind: 'commission' | 'referred'; record: number; status: CommissionStatus | null; cents: number | null }
  | { type: 'delete'; kind: 'commission' | 'referred'; record: number }
  | { type: 'ban'; affiliate: number; isBanned: boolean }

const cents = fc.oneof(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 100_000_000 }))
const kind = fc.constantFrom('commission' as const, 'referred' as const)
const status = fc.option(fc.constantFrom(...STATUSES), { nil: null })

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('create' as const),
      kind,
      affiliate: fc.nat(),
      email: fc.nat(),
      cents,
      asNumber: fc.boolean(),
      status,
      link: fc.option(fc.nat(), { nil: null, freq: 2 }),
      invoice: fc.option(fc.constantFrom(...INVOICES), { nil: null, freq: 2 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ type: fc.constant('update' as const), kind, record: fc.nat(), status, cents: fc.option(cents, { nil: null }) })
      .filter((s) => s.status !== null || s.cents !== null),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('delete' as const), kind, record: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('ban' as const), affiliate: fc.nat(), isBanned: fc.boolean() }) },
)

interface ModelRecord {
  affiliate: number
  emailKey: string
  cents: number
  status: CommissionStatus
  link: number | null
  invoice: string | null
}

const money = formatMoney

interface Totals {
  earned: number
  emails: Set<string>
}
const totals = () => ({ earned: 0, emails: new Set<string>() }) satisfies Totals
const add = (t: Totals, earned: number, email: string) => {
  t.earned += earned
  t.emails.add(email)
}
const summary = (t: Totals | undefined) => ({ earned: t?.earned ?? 0, signups: t?.emails.size ?? 0 })

async function scenario(affiliateCount: number, steps: Step[]) {
  const { api } = setup()
  const campaign = await api.campaigns.create({
    campaignName: 'Counters',
    workspaceId: WS_A,
    commissionType: 'percentage',
    amount: 10,
    url: 'https://shop.example.com/',
  })
  const affiliates: Affiliate[] = []
  for (let i = 0; i < affiliateCount; i++) {
    affiliates.push(await api.affiliates.create({ email: `aff${i}@example.com`, campaignId: campaign.id }))
  }
  // Two links for the first affiliate, one for the second, none for the third.
  const links: ReferralLink[] = []
  const linkOwner: number[] = []
  for (const [owner, n] of [
    [0, 2],
    [1, 1],
  ] as const) {
    for (let i = 0; i < n; i++) {
      links.push(await api.links.create({ affiliateId: affiliates[owner]!.id }))
      linkOwner.push(owner)
    }
  }
  const banned = affiliates.map(() => false)
  const model = new Map<string, ModelRecord>()
  /** Every id ever created, deleted ones included, so updates and deletes of gone records happen too. */
  const ids: string[] = []
  /** The clawbacks refunds after payment made: records of their own (same e-mail and link, earning nothing). */
  const clawbacks = new Map<string, ModelRecord>()

  async function check(context: string) {
    // From the model.
    const modelAffiliates = affiliates.map(() => totals())
    const modelLinks = links.map(() => totals())
    for (const r of [...model.values(), ...clawbacks.values()]) {
      const earned = r.status === 'refunded' || r.cents < 0 ? 0 : r.cents
      add(modelAffiliates[r.affiliate]!, earned, r.emailKey)
      if (r.link !== null) add(modelLinks[r.link]!, earned, r.emailKey)
    }

    // From the stored records, read back through the list.
    const stored: Commission[] = []
    for (let page = 1; ; page++) {
      const { items, pagination } = await api.commissions.list({ page, limit: 100 })
      stored.push(...items)
      if (page >= pagination.totalPages) break
    }
    // Clawbacks are the service's own records (a refund after payment makes one): not in the model.
    const sales = stored.filter((c) => c.kind === 'sale')
    expect(sales.map((c) => c.commissionId).sort(), context).toEqual([...model.keys()].sort())
    expect(
      stored
        .filter((c) => c.kind === 'clawback')
        .map((c) => c.reversesCommissionId)
        .sort(),
      context,
    ).toEqual([...clawbacks.keys()].sort())
    const storedAffiliates = new Map<string, Totals>()
    const storedLinks = new Map<string, Totals>()
    for (const c of stored) {
      const r = c.kind === 'clawback' ? clawbacks.get(c.reversesCommissionId!)! : model.get(c.commissionId)!
      expect(c, context).toMatchObject({
        affiliateId: affiliates[r.affiliate]!.id,
        amount: r.cents < 0 ? `-${money(-r.cents)}` : money(r.cents),
        status: r.status,
        referralCode: r.link === null ? null : links[r.link]!.referralCode,
      })
      expect(c.referredUser.toLowerCase(), context).toBe(r.emailKey)
      // A clawback earns nothing; a sale refunded after payment keeps its amount and earns nothing either.
      const earned = c.kind === 'clawback' || c.status === 'refunded' ? 0 : centsOf(c.amount) - centsOf(c.refundedAmount)
      const email = c.referredUser.toLowerCase()
      if (!storedAffiliates.has(c.affiliateId)) storedAffiliates.set(c.affiliateId, totals())
      add(storedAffiliates.get(c.affiliateId)!, earned, email)
      if (c.referralCode !== null) {
        if (!storedLinks.has(c.referralCode)) storedLinks.set(c.referralCode, totals())
        add(storedLinks.get(c.referralCode)!, earned, email)
      }
    }

    // The counters the service keeps.
    for (const [i, affiliate] of affiliates.entries()) {
      const expected = summary(modelAffiliates[i])
      expect(summary(storedAffiliates.get(affiliate.id)), `${context}: affiliate ${i}, records vs model`).toEqual(expected)
      const actual = await api.affiliates.get(affiliate.id)
      expect({ earned: actual.totalEarnings, signups: actual.totalSignups }, `${context}: affiliate ${i} counters`).toEqual({
        earned: expected.earned / 100,
        signups: expected.signups,
      })
      expect(Number.isInteger(Math.round(actual.totalEarnings * 100))).toBe(true)
      for (const link of (await api.links.list({ affiliateId: affiliate.id })).items) {
        const index = links.findIndex((l) => l.id === link.id)
        const fromModel = summary(modelLinks[index])
        expect(summary(storedLinks.get(link.referralCode)), `${context}: link ${index}, records vs model`).toEqual(fromModel)
        expect({ earned: link.totalEarnings, signups: link.totalSignups }, `${context}: link ${index} counters`).toEqual({
          earned: fromModel.earned / 100,
          signups: fromModel.signups,
        })
      }
    }
  }

  await check('start')
  for (const [n, s] of steps.entries()) {
    const context = `step ${n}: ${JSON.stringify(s)}`
    if (s.type === 'create') {
      const a = s.affiliate % affiliates.length
      const affiliate = affiliates[a]!
      const link = s.link === null ? null : s.link % links.length
      const email = EMAILS[s.email % EMAILS.length]!
      const invoice = s.kind === 'referred' ? s.invoice : null
      const amount = s.asNumber ? s.cents / 100 : money(s.cents)
      const duplicateInvoice = invoice !== null && [...model.values()].some((r) => r.invoice === invoice)
      const refused = banned[a] || (link !== null && linkOwner[link] !== a) || duplicateInvoice
      let createdId: string | null = null
      const status = await outcome(async () => {
        const extra = {
          ...(s.status === null ? {} : { status: s.status }),
          ...(link === null ? {} : { referralCode: links[link]!.referralCode }),
        }
        const made =
          s.kind === 'commission'
            ? await api.commissions.create({ campaignId: campaign.id, affiliateId: affiliate.id, referredUser: email, amount, ...extra })
            : await api.referredUsers.create({
                referredTo: email,
                affiliateId: affiliate.id,
                amount: money(s.cents),
                ...extra,
                ...(invoice === null ? {} : { invoiceId: invoice }),
              })
        createdId = made.commissionId
      })
      expect(status, context).toBe(refused ? 422 : 200)
      if (createdId !== null) {
        ids.push(createdId)
        model.set(createdId, {
          affiliate: a,
          emailKey: email.toLowerCase(),
          cents: s.cents,
          status: s.status ?? 'pending',
          link,
          invoice,
        })
      }
    } else if (s.type === 'update') {
      if (ids.length === 0) continue
      const id = ids[s.record % ids.length]!
      const current = model.get(id)
      const changes = { ...(s.status === null ? {} : { status: s.status }), ...(s.cents === null ? {} : { amount: money(s.cents) }) }
      const status = await outcome(() =>
        s.kind === 'commission' ? api.commissions.update(id, changes) : api.referredUsers.update(id, changes),
      )
      let expected = 200
      if (!current) expected = 404
      else {
        const to = s.status ?? current.status
        const moveRefused = to !== current.status && !MOVES[current.status].includes(to)
        const amountRefused =
          s.cents !== null && s.cents !== current.cents && current.status !== 'pending' && current.status !== 'processing'
        // A banned affiliate earns nothing: no raise, no move to processing or paid.
        const bannedRefused =
          banned[current.affiliate]! &&
          ((to !== current.status && (to === 'processing' || to === 'paid')) || (s.cents !== null && s.cents > current.cents))
        if (moveRefused || amountRefused || bannedRefused) expected = 422
      }
      expect(status, context).toBe(expected)
      if (current && expected === 200) {
        model.set(id, { ...current, status: s.status ?? current.status, cents: s.cents ?? current.cents })
        // Refunding a paid commission takes its amount back through a clawback.
        if (current.status === 'paid' && s.status === 'refunded' && current.cents > 0)
          clawbacks.set(id, { ...current, cents: -current.cents, status: 'pending', invoice: null })
      }
    } else if (s.type === 'delete') {
      if (ids.length === 0) continue
      const id = ids[s.record % ids.length]!
      const status = await outcome(() => (s.kind === 'commission' ? api.commissions.delete(id) : api.referredUsers.delete(id)))
      // A paid commission, or one refunded after payment (its clawback still nets), cannot be
      // deleted: money history is kept.
      const current = model.get(id)
      const history = current !== undefined && (current.status === 'paid' || clawbacks.has(id))
      expect(status, context).toBe(!current ? 404 : history ? 422 : 200)
      if (current && !history) model.delete(id)
    } else {
      const a = s.affiliate % affiliates.length
      await api.affiliates.update(affiliates[a]!.id, { isBanned: s.isBanned })
      banned[a] = s.isBanned
    }
    await check(context)
  }
}

describe('affiliate and link counters', () => {
  it('stay equal to what the records say after every step of any sequence', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 2, max: 3 }), fc.array(step, { minLength: 1, maxLength: 40 }), scenario), {
      numRuns: 200,
    })
  }, 60_000)

  it('survive a sequence that walks one e-mail through every route, status and deletion', async () => {
    // A fixed walk through the cases most likely to drift: the same e-mail in three cases, attributed
    // and unattributed records, a refund, a refused move, and deleting the records one by one.
    await scenario(2, [
      { type: 'create', kind: 'commission', affiliate: 0, email: 0, cents: 1001, asNumber: true, status: null, link: 0, invoice: null },
      {
        type: 'create',
        kind: 'referred',
        affiliate: 0,
        email: 1,
        cents: 99,
        asNumber: false,
        status: 'processing',
        link: 0,
        invoice: 'in_1',
      },
      { type: 'create', kind: 'commission', affiliate: 0, email: 2, cents: 5, asNumber: true, status: 'paid', link: null, invoice: null },
      { type: 'create', kind: 'commission', affiliate: 1, email: 2, cents: 7, asNumber: true, status: null, link: 0, invoice: null },
      { type: 'create', kind: 'referred', affiliate: 1, email: 3, cents: 7, asNumber: false, status: null, link: 2, invoice: 'in_1' },
      { type: 'update', kind: 'referred', record: 0, status: 'refunded', cents: null },
      { type: 'update', kind: 'commission', record: 0, status: 'pending', cents: null },
      { type: 'update', kind: 'commission', record: 1, status: null, cents: 150 },
      { type: 'update', kind: 'commission', record: 2, status: null, cents: 6 },
      { type: 'ban', affiliate: 0, isBanned: true },
      { type: 'create', kind: 'commission', affiliate: 0, email: 4, cents: 1, asNumber: true, status: null, link: null, invoice: null },
      { type: 'ban', affiliate: 0, isBanned: false },
      { type: 'delete', kind: 'referred', record: 1 },
      { type: 'delete', kind: 'commission', record: 0 },
      { type: 'delete', kind: 'commission', record: 1 },
      { type: 'delete', kind: 'referred', record: 2 },
      { type: 'update', kind: 'commission', record: 2, status: 'paid', cents: null },
    ])
  })
})
