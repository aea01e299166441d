import { COMMISSION_STATUSES } from '../domain/commission-status.js'
import type { Commission } from '../domain/commission.js'
import { formatMoney, parseMoney } from '../domain/money.js'
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
  const back = form.get('from') === 'detail' && ids.length === 1 ? `${c.path}/commissions/detail?commissionId=${ids[0]}` : `${c.path}/commissions?status=hold`
  if (ids.length === 0) throw new PageError(400, 'Nothing selected', 'Select at least one held commission.', { href: back, label: 'Back to the review queue' })
  const { verb, effect } = REVIEW[action]
  if (form.get('confirmed') !== 'yes') {
    const count = `${ids.length} commission${ids.length === 1 ? '' : 's'}`
    return confirmation(c, `${verb} commissions`, `${verb} ${count}: ${effect}.`, `${c.path}/commissions/${action}`, { commissionId: ids, from: form.get('from') }, verb, back)
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
  const day = (text: string, plus: number) => (/^\d{4}-\d{2}-\d{2}$/.test(text) && Number.isFinite(Date.parse(text)) ? new Date(Date.parse(text) + plus).toISOString() : text)
  const [from, to] = [q.get('from') ?? '', q.get('to') ?? '']
  return { ...(from ? { from: day(from, 0) } : {}), ...(to ? { to: day(to, DAY) } : {}), ...(from || to ? { orderType: 'commissionDate' } : {}) }
}

async function commissionOf(c: Ctx, id: string): Promise<Commission> {
  try {
    return await c.api.commissions.get(id)
  } catch {
    throw new PageError(404, 'Commission not found', 'There is no such commission in your workspaces.', { href: `${c.path}/commissions`, label: 'Back to commissions' })
  }
}

async function currencyOf(c: Ctx, campaignId: string): Promise<string> {
  return (await c.api.campaigns.get(campaignId)).currency
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
  const currency = await currencyOf(c, m.campaignId)
  return c.page(
    'Refund commission',
    html`${head('Refund commission')}${errorSummary(errors, problem)}<div class="card"><p>Commission of ${moneyText(m.amount, currency)} for ${m.referredUser} (${m.status}).</p>
<form method="post" action="${c.path}/commissions/refund" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="commissionId" value="${m.commissionId}">
${input({ name: 'amount', label: 'Amount to refund', value, errors, hint: 'Leave empty to refund all that is left.', attributes: html` inputmode="decimal"` })}
<div class="actions"><button type="submit">Review refund</button><a href="${c.path}/commissions">Cancel</a></div></form></div>`,
    status,
  )
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
    const currency = new Map(campaigns.items.map((m) => [m.id, m.currency]))
    const emails = await affiliateEmails(c, items.map((m) => m.affiliateId))
    // The review queue: held commissions can be selected, released or voided together, their reasons shown.
    const queue = items.some((m) => m.status === 'hold')
    const rows = items.map((m) => [
      ...(queue ? [m.status === 'hold' ? html`<input type="checkbox" name="commissionId" value="${m.commissionId}" aria-label="Select the commission of ${m.referredUser}" form="review">` : ''] : []),
      html`<a href="${c.path}/commissions/detail?commissionId=${m.commissionId}">${when(m.commissionDate)}</a>`,
      affiliateLink(c, m.affiliateId, emails),
      html`${m.referredUser}`,
      html`${moneyText(m.amount, currency.get(m.campaignId) ?? '')}`,
      m.status === 'hold' ? html`${badge(m.status)} <span class="hint">${reasonsText(m.holdReasons)}</span>` : badge(m.status),
      html`${m.kind}`,
      m.status === 'refunded' || m.status === 'voided' || m.kind === 'clawback' ? '' : html`<a href="${c.path}/commissions/refund?commissionId=${m.commissionId}" aria-label="Refund the commission of ${m.referredUser}">Refund</a>`,
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
${select('kind', 'Kind', [['', 'Any'], ['sale', 'sale'], ['clawback', 'clawback']])}
${select('campaignId', 'Campaign', [['', 'Any'], ...campaigns.items.map((m) => [m.id, m.campaignName] as const)])}
<div><label for="affiliateId">Affiliate ID</label><input id="affiliateId" name="affiliateId" value="${filter.affiliateId}"></div>
<div><label for="from">From</label><input id="from" name="from" type="date" value="${filter.from}"></div>
<div><label for="to">To <span class="hint">(included)</span></label><input id="to" name="to" type="date" value="${filter.to}"></div>
<div><button type="submit">Filter</button></div></form>
<p><a href="${c.path}/commissions/export?${exportQuery.toString()}">Export CSV</a></p>
${queue ? html`<form id="review" method="post" action="${c.path}/commissions/release" class="actions">${csrfField(c.v.csrf)}<button type="submit">Release selected</button><button type="submit" class="danger" formaction="${c.path}/commissions/void">Void selected</button></form>` : ''}
${rows.length ? table([...(queue ? ['Select'] : []), 'Date', 'Affiliate', 'Customer', ['Amount', 'num'], 'Status', 'Kind', 'Actions'], rows) : Object.values(filter).some(Boolean) ? html`<p class="card">No commissions match these filters. <a href="${c.path}/commissions">Clear the filters</a>.</p>` : html`<p class="card">No commissions yet. Record a sale through the API or connect Stripe in <a href="${c.path}/settings/integrations#providers">Settings → Integrations</a>, or <a href="${c.path}/commissions/new">add one by hand</a>.</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
  async 'GET /commissions/detail'(c) {
    const m = await commissionOf(c, c.v.url.searchParams.get('commissionId') ?? '')
    const [currency, emails] = await Promise.all([currencyOf(c, m.campaignId), affiliateEmails(c, [m.affiliateId])])
    const refundable = m.status !== 'refunded' && m.status !== 'voided' && m.kind !== 'clawback'
    const reviewForm = (action: keyof typeof REVIEW) =>
      html`<form method="post" action="${c.path}/commissions/${action}">${csrfField(c.v.csrf)}<input type="hidden" name="commissionId" value="${m.commissionId}"><input type="hidden" name="from" value="detail"><button type="submit"${action === 'void' ? html` class="danger"` : ''}>${REVIEW[action].verb}</button></form>`
    const item = (label: string, value: Html | string) => html`<div><dt>${label}</dt><dd class="hint">${value}</dd></div>`
    return c.page(
      'Commission',
      html`${head(`Commission ${moneyText(m.amount, currency)}`, refundable ? html`<a class="button" href="${c.path}/commissions/refund?commissionId=${m.commissionId}">Refund</a>` : undefined)}
<section class="card"><dl class="stats">
<div><dt>Status</dt><dd>${badge(m.status)}</dd></div>
${item('Kind', m.kind)}
${item('Date', when(m.commissionDate))}
${item('Affiliate', affiliateLink(c, m.affiliateId, emails))}
${item('Customer', m.referredUser)}
${item('Refunded', moneyText(m.refundedAmount, currency))}
${item('Due', when(m.dueAt))}
${item('Payout', m.payoutId ? html`<a href="${c.path}/payouts/detail?payoutId=${m.payoutId}">${m.payoutId.slice(0, 8)}</a>` : '—')}
${item('Referral code', m.referralCode ?? '—')}
</dl>${m.remarks ? html`<p>${m.remarks}</p>` : ''}</section>
${m.status === 'hold' ? html`<section class="card"><h2>Under review</h2><p>The fraud rules held it: ${reasonsText(m.holdReasons)}. See docs/fraud.md for what each rule means.</p><div class="actions">${reviewForm('release')}${reviewForm('void')}</div></section>` : ''}
<p><a href="${c.path}/commissions">Back to commissions</a></p>`,
    )
  },
  'GET /commissions/new': (c) => newForm(c, { campaignId: c.v.url.searchParams.get('campaignId') ?? '', affiliateId: c.v.url.searchParams.get('affiliateId') ?? '' }, {}),
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
    const amount = form.get('amount')
    if (amount !== '' && !/^\d+(\.\d{1,2})?$/.test(amount)) return refundForm(c, m, amount, { amount: 'amount must be a non-negative number with at most two decimals' }, 'Please correct the following:', 400)
    if (form.get('confirmed') !== 'yes') {
      const currency = await currencyOf(c, m.campaignId)
      // In cents, as the API counts: the sentence says exactly what the refund will do.
      const cents = (value: string) => parseMoney(value) ?? 0
      const take = amount === '' ? cents(m.amount) - cents(m.refundedAmount) : cents(amount)
      const taken = moneyText(formatMoney(take), currency)
      const sentence =
        m.status === 'paid'
          ? `Refund ${taken} of ${moneyText(m.amount, currency)}: the commission was paid, so a clawback of -${taken} goes into the affiliate's next payout.`
          : `Refund ${taken} of ${moneyText(m.amount, currency)}: the commission drops from ${moneyText(m.amount, currency)} to ${moneyText(formatMoney(Math.max(0, cents(m.amount) - take)), currency)}.`
      return confirmation(c, 'Confirm refund', sentence, `${c.path}/commissions/refund`, { commissionId: m.commissionId, amount }, 'Refund', `${c.path}/commissions`)
    }
    try {
      await c.api.commissions.refund(m.commissionId, { ...(amount ? { amount } : {}) })
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['amount'])
      return refundForm(c, m, amount, errors, problem, status)
    }
    return c.redirect(`${c.path}/commissions?notice=refunded`)
  },
  async 'GET /commissions/export'(c) {
    const q = c.v.url.searchParams
    const { orderType: _listed, ...dates } = period(q)
    const file = await c.api.exports.commissions(listQuery(c, commissionExport, dates))
    return new Response(file.body, { headers: { 'content-type': file.contentType, 'content-disposition': `attachment; filename="${file.filename}"`, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } })
  },
}
