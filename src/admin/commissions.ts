import { COMMISSION_STATUSES } from '../domain/commission-status.js'
import type { Commission } from '../domain/commission.js'
import type { Payout } from '../domain/payout.js'
import { formatMoney, parseMoney } from '../domain/money.js'
import type { RefundPreview } from '../api/commission-records.js'
import { csrfField, errorSummary, input, refusal, type FieldErrors } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { commissionCreate, commissionList } from '../schemas/commissions.js'
import { commissionExport } from '../schemas/reports.js'
import { modelFields, typedValues } from '../site/model-fields.js'
import { parseForm } from '../site/parse-form.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { affiliateEmails, affiliateLink, badge, confirmation, head, listQuery, pager, when, type Ctx, type Handler } from './ui.js'

const FILTERS = ['status', 'kind', 'affiliateId', 'campaignId', 'from', 'to'] as const

/** What each fraud rule's reason says in the review queue (docs/fraud.md). */
const REASONS: Record<string, string> = {
  self_referral: 'Self-referral',
  disposable_email: 'Disposable e-mail',
  paid_ad_click: 'Paid-ad click',
  address_burst: 'Many customers from one address',
  refund_rate: 'High refund rate',
}
const reasonsText = (reasons: readonly string[]): string => reasons.map((reason) => REASONS[reason] ?? reason).join(', ')

/** What releasing or voiding does, in the words the confirmation and the buttons use. */
const REVIEW = {
  release: { verb: 'Release', effect: 'they become pending and are paid with the next payout run once due' },
  void: { verb: 'Void', effect: 'they earn nothing and are kept for history' },
} as const

/**
 * Releases or voids the held commissions the form names (`commissionId`, repeated), after a
 * confirmation page saying how many and what happens; all or none, as the API does them.
 */
async function review(c: Ctx, action: keyof typeof REVIEW): Promise<Response> {
  const form = await c.form()
  const ids = form.all('commissionId').filter(Boolean)
  const back =
    form.get('from') === 'detail' && ids.length === 1
      ? `${c.path}/commissions/detail?commissionId=${ids[0]}`
      : `${c.path}/commissions?status=hold`
  if (ids.length === 0)
    throw new PageError(400, 'Nothing selected', 'Select at least one held commission.', { href: back, label: 'Back to the review queue' })
  const { verb, effect } = REVIEW[action]
  if (form.get('confirmed') !== 'yes') {
    const count = `${ids.length} commission${ids.length === 1 ? '' : 's'}`
    return confirmation(
      c,
      `${verb} commissions`,
      `${verb} ${count}: ${effect}.`,
      `${c.path}/commissions/${action}`,
      { commissionId: ids, from: form.get('from') },
      verb,
      back,
    )
  }
  try {
    await c.api.commissions[action]({ commissionIds: ids })
  } catch (error) {
    throw new PageError(422, 'Not done', refusal(error, []).problem, { href: back, label: 'Back to the review queue' })
  }
  return c.redirect(`${back}${back.includes('?') ? '&' : '?'}notice=${action === 'release' ? 'released' : 'voided'}`)
}
const DAY = 86_400_000

/**
 * The period of the filter form: its `from` and `to` are days (UTC), `to` included; the API's are
 * instants, `to` excluded. A day the form cannot have sent is passed on as typed, so the API's
 * message names it. A period lists by the date of the sale, the order its index keeps.
 */
function period(q: URLSearchParams): { from?: string; to?: string; orderType?: 'commissionDate' } {
  const day = (text: string, plus: number) =>
    /^\d{4}-\d{2}-\d{2}$/.test(text) && Number.isFinite(Date.parse(text)) ? new Date(Date.parse(text) + plus).toISOString() : text
  const [from, to] = [q.get('from') ?? '', q.get('to') ?? '']
  return {
    ...(from ? { from: day(from, 0) } : {}),
    ...(to ? { to: day(to, DAY) } : {}),
    ...(from || to ? { orderType: 'commissionDate' } : {}),
  }
}

async function commissionOf(c: Ctx, id: string): Promise<Commission> {
  try {
    return await c.api.commissions.get(id)
  } catch {
    throw new PageError(404, 'Commission not found', 'There is no such commission in your workspaces.', {
      href: `${c.path}/commissions`,
      label: 'Back to commissions',
    })
  }
}

async function newForm(c: Ctx, values: Record<string, string>, errors: FieldErrors, problem?: string, status = 200) {
  const campaigns = await c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 })
  const choices = { campaignId: campaigns.items.map((m) => [m.id, m.campaignName] as const) }
  return c.page(
    'Add a commission',
    html`${head('Add a commission')}${errorSummary(errors, problem)}<form class="card" method="post" action="${c.path}/commissions/new" novalidate>${csrfField(c.v.csrf)}
${modelFields(commissionCreate, { values, errors, choices })}
<div class="actions"><button type="submit">Add commission</button><a href="${c.path}/commissions">Cancel</a></div></form>`,
    status,
  )
}

async function refundForm(c: Ctx, m: Commission, value: string, errors: FieldErrors, problem?: string, status = 200) {
  return c.page(
    'Refund commission',
    html`${head('Refund commission')}${errorSummary(errors, problem)}<div class="card"><p>Commission of ${moneyText(m.amount, m.currency)} for ${m.referredUser} (${m.status})${m.saleAmount ? `, from a sale of ${moneyText(m.saleAmount, m.currency)}` : ''}.</p>
<form method="post" action="${c.path}/commissions/refund" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="commissionId" value="${m.commissionId}">
${input({ name: 'amount', label: 'Amount to refund', value, errors, hint: 'Of the commission. Leave empty to refund all that is left.', attributes: html` inputmode="decimal"` })}
<div class="actions"><button type="submit">Review refund</button><a href="${c.path}/commissions/detail?commissionId=${m.commissionId}">Cancel</a></div></form></div>`,
    status,
  )
}

/**
 * What a refund will do, in one sentence, from the API's own dry run (never worked out here): how
 * much leaves the commission, and whether it drops, or was paid and a clawback takes it back from
 * the next payout, and what happens to a pending payout it leaves.
 */
export function refundSentence(m: Commission, preview: RefundPreview): string {
  const cur = m.currency
  const after = preview.commission
  if (preview.clawback) {
    const taken = preview.clawback.amount.replace(/^-/, '')
    const whole = after.status === 'refunded' ? ' The commission becomes refunded.' : ''
    const why = m.status === 'paid' ? 'was paid' : 'is in a payout being paid'
    return `Refund ${moneyText(taken, cur)} of ${moneyText(m.amount, cur)}: the commission ${why}, so a clawback of ${moneyText(preview.clawback.amount, cur)} goes into the affiliate’s next payout.${whole}`
  }
  const taken = formatMoney((parseMoney(m.amount) ?? 0) - (parseMoney(after.amount) ?? 0))
  const drop =
    after.status === 'refunded'
      ? `the commission is refunded in full (${moneyText(m.amount, cur)} to ${moneyText(after.amount, cur)})`
      : `the commission drops from ${moneyText(m.amount, cur)} to ${moneyText(after.amount, cur)}`
  const change = preview.payoutChange
  const payout = !change
    ? ''
    : change.status === 'canceled'
      ? ` It leaves its pending payout of ${moneyText(change.previousAmount, cur)}, which is canceled (its other commissions wait for the next run).`
      : ` It leaves its pending payout, which drops from ${moneyText(change.previousAmount, cur)} to ${moneyText(change.amount, cur)}.`
  return `Refund ${moneyText(taken, cur)} of ${moneyText(m.amount, cur)}: ${drop}.${payout}`
}

/** One line of a commission's history: when, and what happened. */
type Moment = { at: string; what: Html }

/**
 * A commission's history from what the API answers: the sale that made it (or the hand that added
 * it), a hold and why, the clawbacks its refunds after payment made, refunds before payment (its
 * amount went down), the payout it went into, a full refund. Oldest first.
 */
function historyOf(c: Ctx, m: Commission, clawbacks: readonly Commission[], payout: Payout | null): Moment[] {
  const cur = m.currency
  const out: Moment[] = [
    {
      at: m.commissionDate,
      what:
        m.kind === 'clawback'
          ? html`Clawback of ${moneyText(m.amount, cur)} made by a refund after payment${m.reversesCommissionId ? html` of <a href="${c.path}/commissions/detail?commissionId=${m.reversesCommissionId}">the sale’s commission</a>` : ''}.`
          : m.saleAmount
            ? html`Sale of ${moneyText(m.saleAmount, cur)}${m.invoiceId ? html` (invoice <code>${m.invoiceId}</code>)` : ''} earned this commission.`
            : html`Added by hand or through the API, without a sale.`,
    },
  ]
  if (m.holdReasons.length) out.push({ at: m.updatedAt, what: html`Held for review: ${m.holdReasons.join(', ')}.` })
  for (const k of clawbacks) {
    out.push({
      at: k.commissionDate,
      what: html`Refunded after payment: <a href="${c.path}/commissions/detail?commissionId=${k.commissionId}">clawback of ${moneyText(k.amount, cur)}</a> (${k.status}${k.payoutId ? ', netted in a payout' : ', into the next payout'}).`,
    })
  }
  if (payout) {
    const link = html`<a href="${c.path}/payouts/detail?payoutId=${payout.payoutId}">payout of ${moneyText(payout.amount, payout.currency)}</a>`
    out.push({ at: payout.createdAt, what: html`Put in a ${link}.` })
    if (payout.paidAt)
      out.push({
        at: payout.paidAt,
        what: html`Paid out${payout.externalReference ? html` (reference <code>${payout.externalReference}</code>)` : ''}.`,
      })
  }
  if (m.status === 'refunded' && m.kind === 'sale') out.push({ at: m.updatedAt, what: html`Refunded in full.` })
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
}

export const commissionPages: Record<string, Handler> = {
  async 'GET /commissions'(c) {
    const q = c.v.url.searchParams
    const filter = Object.fromEntries(FILTERS.map((name) => [name, q.get(name) ?? '']))
    const [list, campaigns] = await Promise.all([
      c.api.commissions.list(listQuery(c, commissionList, period(q))),
      c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 }),
    ])
    const items = list.items
    const emails = await affiliateEmails(
      c,
      items.map((m) => m.affiliateId),
    )
    // The review queue: held commissions can be selected, released or voided together, their reasons shown.
    const queue = items.some((m) => m.status === 'hold')
    const rows = items.map((m) => [
      ...(queue
        ? [
            m.status === 'hold'
              ? html`<input type="checkbox" name="commissionId" value="${m.commissionId}" aria-label="Select the commission of ${m.referredUser}" form="review">`
              : '',
          ]
        : []),
      html`<a href="${c.path}/commissions/detail?commissionId=${m.commissionId}">${when(m.commissionDate)}</a>`,
      affiliateLink(c, m.affiliateId, emails),
      html`${m.referredUser}`,
      m.saleAmount ? html`${moneyText(m.saleAmount, m.currency)}` : html`<span class="muted">—</span>`,
      html`${moneyText(m.amount, m.currency)}`,
      m.status === 'hold' ? html`${badge(m.status)} <span class="hint">${reasonsText(m.holdReasons)}</span>` : badge(m.status),
      html`${m.kind}`,
      m.status === 'refunded' || m.status === 'voided' || m.kind === 'clawback'
        ? ''
        : html`<a href="${c.path}/commissions/refund?commissionId=${m.commissionId}" aria-label="Refund the commission of ${m.referredUser} dated ${m.commissionDate.slice(0, 10)}">Refund</a>`,
    ])
    const select = (name: string, label: string, options: readonly (readonly [string, string])[]) =>
      html`<div><label for="${name}">${label}</label><select id="${name}" name="${name}">${options.map(([value, text]) => html`<option value="${value}"${value === filter[name] ? html` selected` : ''}>${text}</option>`)}</select></div>`
    const exportQuery = new URLSearchParams(Object.entries(filter).filter(([, v]) => v) as [string, string][])
    return c.page(
      'Commissions',
      html`${head('Commissions', html`<a class="button" href="${c.path}/commissions/new">Add commission</a>`)}${noticeBox(c.notice())}
<p><a href="${c.path}/commissions?status=hold">Review queue</a>: commissions the fraud rules held, to release or void.</p>
<form class="filters card" method="get">
${select('status', 'Status', [['', 'Any'], ...COMMISSION_STATUSES.map((s) => [s, s] as const)])}
${select('kind', 'Kind', [
  ['', 'Any'],
  ['sale', 'sale'],
  ['clawback', 'clawback'],
])}
${select('campaignId', 'Campaign', [['', 'Any'], ...campaigns.items.map((m) => [m.id, m.campaignName] as const)])}
<div><label for="affiliateId">Affiliate ID</label><input id="affiliateId" name="affiliateId" value="${filter.affiliateId}"></div>
<div><label for="from">From</label><input id="from" name="from" type="date" value="${filter.from}"></div>
<div><label for="to">To <span class="hint">(included)</span></label><input id="to" name="to" type="date" value="${filter.to}"></div>
<div><button type="submit">Filter</button></div></form>
<p><a href="${c.path}/commissions/export?${exportQuery.toString()}">Export CSV</a></p>
${queue ? html`<form id="review" method="post" action="${c.path}/commissions/release" class="actions">${csrfField(c.v.csrf)}<button type="submit">Release selected</button><button type="submit" class="danger" formaction="${c.path}/commissions/void">Void selected</button></form>` : ''}
${rows.length ? table([...(queue ? ['Select'] : []), 'Date', 'Affiliate', 'Customer', ['Sale', 'num'], ['Commission', 'num'], 'Status', 'Kind', 'Actions'], rows) : Object.values(filter).some(Boolean) ? html`<p class="card">No commissions match these filters. <a href="${c.path}/commissions">Clear the filters</a>.</p>` : html`<p class="card">No commissions yet. Record a sale through the API or connect Stripe in <a href="${c.path}/settings/integrations#providers">Settings → Integrations</a>, or <a href="${c.path}/commissions/new">add one by hand</a>.</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
  async 'GET /commissions/detail'(c) {
    const m = await commissionOf(c, c.v.url.searchParams.get('commissionId') ?? '')
    const [emails, clawbacks, customer, payout] = await Promise.all([
      affiliateEmails(c, [m.affiliateId]),
      // In the order they were made, through the index of the workspace's clawbacks (ordering by date would walk every commission).
      m.kind === 'sale'
        ? c.api.commissions
            .list({ workspaceId: m.workspaceId, reversesCommissionId: m.commissionId, orderValue: 'ASC', limit: 100 })
            .then((page) => page.items)
        : [],
      m.customerId ? c.api.customers.get(m.customerId).catch(() => null) : null,
      m.payoutId ? c.api.payouts.get(m.payoutId).catch(() => null) : null,
    ])
    const refundable = m.status !== 'refunded' && m.status !== 'voided' && m.kind !== 'clawback'
    const reviewForm = (action: keyof typeof REVIEW) =>
      html`<form method="post" action="${c.path}/commissions/${action}">${csrfField(c.v.csrf)}<input type="hidden" name="commissionId" value="${m.commissionId}"><input type="hidden" name="from" value="detail"><button type="submit"${action === 'void' ? html` class="danger"` : ''}>${REVIEW[action].verb}</button></form>`
    const item = (label: string, value: Html | string | null) => html`<div><dt>${label}</dt><dd class="hint">${value ?? '—'}</dd></div>`
    const code = (id: string | null) => (id ? html`<code>${id}</code>` : null)
    const customerText = customer
      ? html`${customer.name ? `${customer.name} · ` : ''}${customer.email}${customer.externalId ? html` <span class="muted">(id <code>${customer.externalId}</code>)</span>` : ''}`
      : html`${m.referredUser}`
    return c.page(
      'Commission',
      html`${head(`Commission ${moneyText(m.amount, m.currency)}`, refundable ? html`<a class="button" href="${c.path}/commissions/refund?commissionId=${m.commissionId}">Refund</a>` : undefined)}${noticeBox(c.notice())}
<div class="grid"><section class="card"><h2>Commission</h2><dl class="stats">
<div><dt>Status</dt><dd>${badge(m.status)}</dd></div>
${item('Kind', m.kind)}
${item('Date', when(m.commissionDate))}
${item('Affiliate', affiliateLink(c, m.affiliateId, emails))}
${item('Refunded after payment', moneyText(m.refundedAmount, m.currency))}
${item('Due', when(m.dueAt))}
${item('Payout', m.payoutId ? html`<a href="${c.path}/payouts/detail?payoutId=${m.payoutId}">${m.payoutId.slice(0, 8)}</a>` : null)}
${item('Referral code', m.referralCode)}
</dl>${m.remarks ? html`<p>${m.remarks}</p>` : ''}</section>
<section class="card"><h2>Sale</h2><dl class="stats">
${item('Sale amount', m.saleAmount ? moneyText(m.saleAmount, m.currency) : null)}
${item('Currency', m.currency)}
${item('Customer', customerText)}
${item('Invoice', code(m.invoiceId))}
${item('Charge', code(m.chargeId))}
${item('Subscription', code(m.stripeSubscriptionId))}
${item('Payment intent', code(m.paymentIntentId))}
</dl></section></div>
${m.status === 'hold' ? html`<section class="card"><h2>Under review</h2><p>The fraud rules held it: ${reasonsText(m.holdReasons)}. See docs/fraud.md for what each rule means.</p><div class="actions">${reviewForm('release')}${reviewForm('void')}</div></section>` : ''}
<section class="card"><h2>History</h2><ol class="history">${historyOf(c, m, clawbacks, payout).map((moment) => html`<li>${when(moment.at)} ${moment.what}</li>`)}</ol></section>
<p><a href="${c.path}/commissions">Back to commissions</a></p>`,
    )
  },
  'GET /commissions/new': (c) =>
    newForm(
      c,
      { campaignId: c.v.url.searchParams.get('campaignId') ?? '', affiliateId: c.v.url.searchParams.get('affiliateId') ?? '' },
      {},
    ),
  async 'POST /commissions/new'(c) {
    const form = await c.form()
    try {
      await c.api.commissions.create(parseForm(commissionCreate, form))
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...commissionCreate.fields])
      return newForm(c, typedValues(commissionCreate, form), errors, problem, status)
    }
    return c.redirect(`${c.path}/commissions?notice=commission-created`)
  },
  'POST /commissions/release': (c) => review(c, 'release'),
  'POST /commissions/void': (c) => review(c, 'void'),
  async 'GET /commissions/refund'(c) {
    return refundForm(c, await commissionOf(c, c.v.url.searchParams.get('commissionId') ?? ''), '', {})
  },
  async 'POST /commissions/refund'(c) {
    const form = await c.form()
    const m = await commissionOf(c, form.get('commissionId'))
    const amount = form.get('amount').trim()
    const asked = { ...(amount ? { amount } : {}) }
    try {
      if (form.get('confirmed') !== 'yes') {
        // The API's dry run says what the refund will do: the sentence never guesses.
        const preview = await c.api.commissions.refund(m.commissionId, { ...asked, dryRun: true })
        if (!('clawback' in preview)) throw new Error('A dry run of a refund answered a commission')
        return confirmation(
          c,
          'Confirm refund',
          refundSentence(m, preview),
          `${c.path}/commissions/refund`,
          { commissionId: m.commissionId, amount },
          'Refund',
          `${c.path}/commissions/detail?commissionId=${m.commissionId}`,
        )
      }
      await c.api.commissions.refund(m.commissionId, asked)
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['amount'])
      return refundForm(c, m, amount, errors, problem, status)
    }
    return c.redirect(`${c.path}/commissions/detail?commissionId=${m.commissionId}&notice=refunded`)
  },
  async 'GET /commissions/export'(c) {
    const q = c.v.url.searchParams
    const { orderType: _listed, ...dates } = period(q)
    const file = await c.api.exports.commissions(listQuery(c, commissionExport, dates))
    return new Response(file.body, {
      headers: {
        'content-type': file.contentType,
        'content-disposition': `attachment; filename="${file.filename}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      },
    })
  },
}
