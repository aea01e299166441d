import { canMovePayout, PAYOUT_STATUSES } from '../domain/payout-status.js'
import type { Payout } from '../domain/payout.js'
import { formatMoney, parseMoney } from '../domain/money.js'
import { csrfField, errorSummary, refusal, type FieldErrors } from '../site/forms.js'
import { html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { amountText, moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { payoutExport, payoutList, payoutUpdate } from '../schemas/payouts.js'
import { modelFields, typedValues } from '../site/model-fields.js'
import { parseForm } from '../site/parse-form.js'
import { affiliateEmails, affiliateLink, badge, confirmation, head, listQuery, pager, when, type Ctx, type Handler } from './ui.js'

/** What the payouts come to, summed exactly (in cents). */
const totalOf = (payouts: readonly { amount: string }[]): string =>
  formatMoney(payouts.reduce((sum, p) => sum + (parseMoney(p.amount) ?? 0), 0))

const SKIPS: Record<string, string> = {
  banned: 'the affiliate is banned',
  not_positive: 'clawbacks outweigh sales (nothing to pay)',
  below_minimum: 'below the campaign’s minimum payout',
  no_payout_details: 'no payout method or e-mail',
}

async function payoutOf(c: Ctx, id: string): Promise<Payout> {
  try {
    return await c.api.payouts.get(id)
  } catch {
    throw new PageError(404, 'Payout not found', 'There is no such payout in your workspaces.', {
      href: `${c.path}/payouts`,
      label: 'Back to payouts',
    })
  }
}

async function preview(c: Ctx): Promise<Response> {
  const form = c.v.request.method === 'POST' ? await c.form() : null
  const campaignId = form?.get('campaignId') ?? c.v.url.searchParams.get('campaignId') ?? ''
  const input_ = { workspaceId: c.workspaceId, ...(campaignId ? { campaignId } : {}) }
  const run = await c.api.payouts.run({ ...input_, dryRun: true })
  const currency = run.payouts[0]?.currency ?? ''
  const emails = await affiliateEmails(
    c,
    [...run.payouts, ...run.skipped].map((p) => p.affiliateId),
  )
  return c.page(
    'Payout preview',
    html`${head('Payout preview')}<p>A dry run: nothing is written until you run it.</p>
<section class="card"><h2>Would be paid</h2>${
      run.payouts.length
        ? table(
            ['Affiliate', ['Amount', 'num'], 'Method', 'Payout e-mail', ['Commissions', 'num']],
            run.payouts.map((p) => [
              affiliateLink(c, p.affiliateId, emails),
              html`${moneyText(p.amount, p.currency)}`,
              html`${p.payoutMethod}`,
              html`${p.payoutEmail}`,
              html`${p.commissionCount}`,
            ]),
          )
        : html`<p class="muted">Nothing is due now.</p>`
    }</section>
<section class="card"><h2>Skipped</h2>${
      run.skipped.length
        ? table(
            ['Affiliate', 'Why', ['Amount', 'num']],
            run.skipped.map((s) => [
              affiliateLink(c, s.affiliateId, emails),
              html`${SKIPS[s.reason] ?? s.reason}`,
              html`${amountText(s.amount)}`,
            ]),
          )
        : html`<p class="muted">Nobody skipped.</p>`
    }</section>
${run.payouts.length ? html`<form method="post" action="${c.path}/payouts/run" data-confirm="${`Run payouts: ${run.payouts.length} payout(s), ${moneyText(totalOf(run.payouts), currency)} in total?`}">${csrfField(c.v.csrf)}${campaignId ? html`<input type="hidden" name="campaignId" value="${campaignId}">` : ''}<div class="actions"><button type="submit">Run payouts</button></div></form>` : ''}`,
  )
}

function markForm(c: Ctx, p: Payout, values: Record<string, string> = {}, errors: FieldErrors = {}, problem?: string) {
  return html`<section class="card"><h2>Mark</h2>${errorSummary(errors, problem)}<form method="post" action="${c.path}/payouts/mark" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="payoutId" value="${p.payoutId}">
${modelFields(payoutUpdate, { values, errors, choices: { status: PAYOUT_STATUSES.filter((s) => s !== p.status && canMovePayout(p.status, s)).map((s) => [s, s] as const) } })}
<div class="actions"><button type="submit">Update payout</button></div></form></section>`
}

async function detail(c: Ctx, p: Payout, values?: Record<string, string>, errors: FieldErrors = {}, problem?: string, status = 200) {
  const [items, emails] = await Promise.all([c.api.payouts.items(p.payoutId, { limit: 100 }), affiliateEmails(c, [p.affiliateId])])
  const final = !PAYOUT_STATUSES.some((s) => s !== p.status && canMovePayout(p.status, s))
  return c.page(
    'Payout',
    html`${head(`Payout ${moneyText(p.amount, p.currency)}`)}${noticeBox(c.notice())}
<section class="card"><dl class="stats"><div><dt>Status</dt><dd>${badge(p.status)}</dd></div><div><dt>Affiliate</dt><dd class="hint">${affiliateLink(c, p.affiliateId, emails)}</dd></div>
<div><dt>Paid to</dt><dd class="hint">${p.payoutEmail}</dd></div><div><dt>Method</dt><dd class="hint">${p.payoutMethod}</dd></div><div><dt>Reference</dt><dd class="hint">${p.externalReference ?? '—'}</dd></div><div><dt>Created</dt><dd class="hint">${when(p.createdAt)}</dd></div></dl></section>
${final ? '' : markForm(c, p, values, errors, problem)}
<section class="card"><h2>Commissions in it</h2>${table(
      ['Date', 'Customer', ['Amount', 'num'], 'Kind'],
      items.items.map((m) => [
        html`<a href="${c.path}/commissions/detail?commissionId=${m.commissionId}">${when(m.commissionDate)}</a>`,
        html`${m.referredUser}`,
        html`${moneyText(m.amount, p.currency)}`,
        html`${m.kind}`,
      ]),
    )}</section>`,
    status,
  )
}

export const payoutPages: Record<string, Handler> = {
  async 'GET /payouts'(c) {
    const q = c.v.url.searchParams
    const status = q.get('status') ?? ''
    const list = await c.api.payouts.list(listQuery(c, payoutList))
    const emails = await affiliateEmails(
      c,
      list.items.map((p) => p.affiliateId),
    )
    const rows = list.items.map((p) => [
      affiliateLink(c, p.affiliateId, emails),
      html`<a href="${c.path}/payouts/detail?payoutId=${p.payoutId}">${moneyText(p.amount, p.currency)}</a>`,
      html`${p.payoutMethod}`,
      badge(p.status),
      when(p.createdAt),
    ])
    const exp = (format: string) => `${c.path}/payouts/export?format=${format}${status ? `&status=${status}` : ''}`
    return c.page(
      'Payouts',
      html`${head('Payouts', html`<form method="post" action="${c.path}/payouts/preview">${csrfField(c.v.csrf)}<button type="submit">Preview a payout run</button></form>`)}${noticeBox(c.notice())}
<form class="filters card" method="get"><div><label for="status">Status</label><select id="status" name="status">${[['', 'Any'], ...PAYOUT_STATUSES.map((s) => [s, s])].map(([value, label]) => html`<option value="${value!}"${value === status ? html` selected` : ''}>${label!}</option>`)}</select></div><div><button type="submit">Filter</button></div></form>
<p>Export ${status || 'pending'} payouts: <a href="${exp('csv')}">CSV</a> · <a href="${exp('paypal')}">PayPal file</a> · <a href="${exp('wise')}">Wise file</a></p>
${rows.length ? table(['Affiliate', ['Amount', 'num'], 'Method', 'Status', 'Created'], rows) : html`<p class="card">No payouts yet. Preview a payout run to see what is due.</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
  'POST /payouts/preview': preview,
  'GET /payouts/preview': preview,
  async 'POST /payouts/run'(c) {
    const form = await c.form()
    const campaignId = form.get('campaignId')
    if (form.get('confirmed') !== 'yes') {
      const run = await c.api.payouts.run({ workspaceId: c.workspaceId, ...(campaignId ? { campaignId } : {}), dryRun: true })
      return confirmation(
        c,
        'Run payouts',
        `Run payouts: ${run.payouts.length} payout(s), ${moneyText(totalOf(run.payouts), run.payouts[0]?.currency ?? '')} in total. Their commissions move to processing.`,
        `${c.path}/payouts/run`,
        campaignId ? { campaignId } : {},
        'Run payouts',
        `${c.path}/payouts`,
      )
    }
    await c.api.payouts.run({ workspaceId: c.workspaceId, ...(campaignId ? { campaignId } : {}) })
    return c.redirect(`${c.path}/payouts?notice=payouts-run`)
  },
  async 'GET /payouts/detail'(c) {
    return detail(c, await payoutOf(c, c.v.url.searchParams.get('payoutId') ?? ''))
  },
  async 'POST /payouts/mark'(c) {
    const form = await c.form()
    const p = await payoutOf(c, form.get('payoutId'))
    const values = typedValues(payoutUpdate, form)
    if (form.get('confirmed') !== 'yes' && (values.status === 'paid' || values.status === 'canceled')) {
      const sentence =
        values.status === 'paid'
          ? `Mark ${moneyText(p.amount, p.currency)} to ${p.payoutEmail} paid${values.externalReference ? ` with reference ${values.externalReference}` : ''}? Its ${p.commissionCount} commission(s) become paid.`
          : `Cancel the payout of ${moneyText(p.amount, p.currency)} to ${p.payoutEmail}? Its commissions are released for the next run.`
      return confirmation(
        c,
        'Confirm',
        sentence,
        `${c.path}/payouts/mark`,
        { payoutId: p.payoutId, ...values },
        values.status === 'paid' ? 'Mark paid' : 'Cancel payout',
        `${c.path}/payouts/detail?payoutId=${p.payoutId}`,
      )
    }
    try {
      await c.api.payouts.update(p.payoutId, parseForm(payoutUpdate, form))
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...payoutUpdate.fields])
      return detail(c, p, values, errors, problem, status)
    }
    return c.redirect(`${c.path}/payouts/detail?payoutId=${p.payoutId}&notice=payout-moved`)
  },
  async 'GET /payouts/export'(c) {
    const file = await c.api.payouts.export(listQuery(c, payoutExport))
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
