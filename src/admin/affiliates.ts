import type { Affiliate } from '../domain/affiliate.js'
import { csrfField, errorSummary, refusal, type FieldErrors } from '../site/forms.js'
import { html, paragraphs, type Html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { affiliateList, affiliateUpdate } from '../schemas/affiliates.js'
import { promoCodeCreate } from '../schemas/promo-codes.js'
import type { Campaign } from '../domain/campaign.js'
import type { PromoCode } from '../domain/promo-code.js'
import { AffiliateError } from '../errors.js'
import { formValues, modelFields, typedValues } from '../site/model-fields.js'
import { parseForm } from '../site/parse-form.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { badge, confirmation, head, listQuery, pager, when, type Ctx, type Handler } from './ui.js'

const STATUSES = [
  ['', 'Any status'],
  ['active', 'Active'],
  ['pending', 'Awaiting approval'],
  ['banned', 'Banned'],
] as const
const statusOf = (a: Affiliate) => (a.isBanned ? 'banned' : a.isActive ? 'active' : 'awaiting-approval')

async function affiliateOf(c: Ctx, id: string): Promise<Affiliate> {
  try {
    return await c.api.affiliates.get(id)
  } catch {
    throw new PageError(404, 'Affiliate not found', 'There is no such affiliate in your workspaces.', {
      href: `${c.path}/affiliates`,
      label: 'Back to affiliates',
    })
  }
}

/** The questions the portal's join page asks (campaign option `collectAdditionalInfo`), by the key their answers are kept under. */
const QUESTIONS: Record<string, string> = { website: 'Website or social profile', about: 'How they will promote you' }

/**
 * What an applicant answered when they joined (`details`): the join page's answers, each under its
 * question, or the text the API was given as it is. Empty when they said nothing.
 */
export function joinAnswers(details: string | null): [question: string, answer: string][] {
  if (!details) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(details)
  } catch {
    return [['Details', details]]
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [['Details', details]]
  return Object.entries(parsed).flatMap(([key, value]) =>
    typeof value === 'string' && value.trim() ? [[QUESTIONS[key] ?? key, value.trim()] as [string, string]] : [],
  )
}

/** The answers in full, as a definition list. */
const answersList = (details: string | null): Html => {
  const answers = joinAnswers(details)
  return answers.length
    ? html`<dl class="answers">${answers.map(([q, a]) => html`<dt>${q}</dt><dd>${paragraphs(a)}</dd>`)}</dl>`
    : html`<p class="muted">They answered nothing when they joined.</p>`
}

/** The answers on one line of a list: each shortened, the whole on their page. */
const answersBrief = (details: string | null): string =>
  joinAnswers(details)
    .map(([q, a]) => `${q}: ${a.length > 120 ? `${a.slice(0, 119)}…` : a}`)
    .join(' · ')

const nameOf = (a: Affiliate) => [a.firstName, a.lastName].filter(Boolean).join(' ') || a.email

function editForm(c: Ctx, a: Affiliate, values: Record<string, string>, errors: FieldErrors, problem?: string) {
  return html`<section class="card" id="edit"><h2>Edit</h2>${errorSummary(errors, problem)}<form method="post" action="${c.path}/affiliates/edit?affiliateId=${a.id}" novalidate>${csrfField(c.v.csrf)}
${modelFields(affiliateUpdate, { values, errors })}
<div class="actions"><button type="submit">Save affiliate</button></div></form></section>`
}

/** What the promo code form shows again after a refusal. */
interface CodeForm {
  values: Record<string, string>
  errors: FieldErrors
  problem?: string | undefined
}

/** The affiliate's promo codes (SPEC wave 4, "Promo codes"): each with its Stripe promotion code and uses, a delete, and the form giving one more. */
function codesSection(c: Ctx, a: Affiliate, codes: readonly PromoCode[], campaign: Campaign, form: CodeForm = { values: {}, errors: {} }) {
  const rows = codes.map((code) => [
    html`<code>${code.code}</code>`,
    html`<span class="hint">${code.stripePromotionCodeId ?? '—'}</span>`,
    html`${code.uses}`,
    when(code.createdAt),
    actionForm(c.v.csrf, `${c.path}/affiliates/promo-codes/delete`, { promoCodeId: code.promoCodeId, affiliateId: a.id }, 'Delete', {
      danger: true,
      label: `Delete ${code.code}`,
      confirm: deleteCodeText(code),
    }),
  ])
  const stripe = campaign.stripeCouponId
    ? html`<p class="hint">The campaign has the Stripe coupon <code>${campaign.stripeCouponId}</code>: with a Stripe API key in <a href="${c.path}/settings/integrations#providers">Settings → Integrations</a>, a new code becomes a Stripe promotion code customers can redeem.</p>`
    : ''
  return html`<section class="card" id="promo-codes"><h2>Promo codes</h2>
<p class="hint">A customer who types one of these codes at checkout (in any case) is this affiliate's: no link needed.</p>
${rows.length ? table(['Code', 'Stripe promotion code', ['Uses', 'num'], 'Created', 'Actions'], rows) : html`<p class="muted">No promo codes yet.</p>`}
${stripe}${errorSummary(form.errors, form.problem)}<form method="post" action="${c.path}/affiliates/promo-codes?affiliateId=${a.id}" novalidate>${csrfField(c.v.csrf)}
${modelFields(promoCodeCreate, { values: form.values, errors: form.errors })}
<div class="actions"><button type="submit">Add promo code</button></div></form></section>`
}

const deleteCodeText = (code: PromoCode) =>
  `Delete the promo code ${code.code}? The customers it brought stay attributed to this affiliate${code.stripePromotionCodeId ? `; its Stripe promotion code ${code.stripePromotionCodeId} is deactivated (when Stripe is connected with an API key)` : ''}.`

async function detail(
  c: Ctx,
  a: Affiliate,
  values?: Record<string, string>,
  errors: FieldErrors = {},
  problem?: string,
  status = 200,
  codeForm?: CodeForm,
) {
  const [campaign, links, balance, commissions, payouts, codes] = await Promise.all([
    c.api.campaigns.get(a.campaignId),
    c.api.links.list({ affiliateId: a.id }),
    c.api.affiliates.balance(a.id),
    c.api.commissions.list({ affiliateId: a.id, limit: 10 }),
    c.api.payouts.list({ affiliateId: a.id, limit: 10 }),
    c.api.promoCodes.list({ affiliateId: a.id, limit: 100 }),
  ])
  const cur = balance.currency
  const state = statusOf(a)
  const actions = a.isBanned
    ? actionForm(c.v.csrf, `${c.path}/affiliates/unban`, { affiliateId: a.id }, 'Unban')
    : html`${a.isActive ? '' : html`${actionForm(c.v.csrf, `${c.path}/affiliates/approve`, { affiliateId: a.id, from: 'detail' }, 'Approve', { primary: true })} ${actionForm(c.v.csrf, `${c.path}/affiliates/reject`, { affiliateId: a.id }, 'Reject', { danger: true, confirm: `Reject the application of ${a.email}? It is deleted.` })}`} ${actionForm(c.v.csrf, `${c.path}/affiliates/ban`, { affiliateId: a.id }, 'Ban', { danger: true, confirm: `Ban ${a.email}? Their links stop earning and they cannot sign in to the portal.` })}`
  return c.page(
    nameOf(a),
    html`${head(nameOf(a), actions)}${noticeBox(c.notice())}
<div class="grid"><section class="card"><h2>Profile</h2><dl class="stats">
<div><dt>E-mail</dt><dd class="hint">${a.email}</dd></div><div><dt>Status</dt><dd>${badge(state)}</dd></div>
<div><dt>Campaign</dt><dd class="hint"><a href="${c.path}/campaigns/edit?campaignId=${campaign.id}">${campaign.campaignName}</a></dd></div>
<div><dt>Joined</dt><dd class="hint">${when(a.createdAt)}</dd></div></dl></section>
<section class="card"><h2>${a.isActive || a.isBanned ? 'What they said when they joined' : 'Their application'}</h2>${answersList(a.details)}</section>
<section class="card"><h2>Balance</h2><dl class="stats"><div><dt>Held</dt><dd>${moneyText(balance.held, cur)}</dd></div><div><dt>Due</dt><dd>${moneyText(balance.due, cur)}</dd></div>
<div><dt>In payouts</dt><dd>${moneyText(balance.inPayout, cur)}</dd></div><div><dt>Paid out</dt><dd>${moneyText(balance.paidOut, cur)}</dd></div></dl></section></div>
<section class="card"><h2>Links</h2>${
      links.items.length
        ? table(
            ['Code', 'URL', ['Clicks', 'num'], ['Signups', 'num']],
            links.items.map((l) => [
              html`${l.referralCode}`,
              html`<span class="hint">${l.url}</span>`,
              html`${l.totalClicks}`,
              html`${l.totalSignups}`,
            ]),
          )
        : html`<p class="muted">No links yet.</p>`
    }</section>
${codesSection(c, a, codes.items, campaign, codeForm)}
<section class="card"><h2>Commissions</h2>${
      commissions.items.length
        ? table(
            ['Date', 'Customer', ['Amount', 'num'], 'Status', 'Kind'],
            commissions.items.map((m) => [
              html`<a href="${c.path}/commissions/detail?commissionId=${m.commissionId}">${when(m.commissionDate)}</a>`,
              html`${m.referredUser}`,
              html`${moneyText(m.amount, cur)}`,
              badge(m.status),
              html`${m.kind}`,
            ]),
          )
        : html`<p class="muted">No commissions yet.</p>`
    }
<p><a href="${c.path}/commissions?affiliateId=${a.id}">All commissions of this affiliate</a></p></section>
<section class="card"><h2>Payouts</h2>${
      payouts.items.length
        ? table(
            [['Amount', 'num'], 'Method', 'Status', 'Created'],
            payouts.items.map((p) => [
              html`<a href="${c.path}/payouts/detail?payoutId=${p.payoutId}">${moneyText(p.amount, p.currency)}</a>`,
              html`${p.payoutMethod}`,
              badge(p.status),
              when(p.createdAt),
            ]),
          )
        : html`<p class="muted">No payouts yet.</p>`
    }</section>
${editForm(c, a, values ?? formValues(affiliateUpdate, a), errors, problem)}`,
    status,
  )
}

/** Approves or rejects (deletes the application of) each affiliate named, through the API. */
async function decide(c: Ctx, verdict: 'approve' | 'reject'): Promise<Response> {
  const form = await c.form()
  const ids = form.all('affiliateId').filter(Boolean)
  if (ids.length === 0)
    throw new PageError(400, 'Nobody selected', 'Select at least one applicant.', {
      href: `${c.path}/affiliates?status=pending`,
      label: 'Back to applicants',
    })
  const affiliates = await Promise.all(ids.slice(0, 100).map((id) => affiliateOf(c, id)))
  if (verdict === 'reject' && form.get('confirmed') !== 'yes') {
    return confirmation(
      c,
      'Reject applicants',
      `Reject ${affiliates.length} applicant${affiliates.length === 1 ? '' : 's'} (${affiliates.map((a) => a.email).join(', ')})? Their applications are deleted.`,
      `${c.path}/affiliates/reject`,
      { affiliateId: ids },
      'Reject',
      `${c.path}/affiliates?status=pending`,
    )
  }
  for (const a of affiliates) {
    try {
      if (verdict === 'approve') await c.api.affiliates.update(a.id, { isActive: true })
      else await c.api.affiliates.delete(a.id)
    } catch (error) {
      const { problem, status } = refusal(error, [])
      throw new PageError(status, 'Not done', `${a.email}: ${problem}`, { href: `${c.path}/affiliates`, label: 'Back to affiliates' })
    }
  }
  const back =
    ids.length === 1 && verdict === 'approve' && form.get('from') === 'detail'
      ? `${c.path}/affiliates/detail?affiliateId=${ids[0]}&`
      : `${c.path}/affiliates?`
  return c.redirect(`${back}notice=${verdict === 'approve' ? 'approved' : 'rejected'}`)
}

async function ban(c: Ctx, banned: boolean): Promise<Response> {
  const form = await c.form()
  const a = await affiliateOf(c, form.get('affiliateId'))
  if (banned && form.get('confirmed') !== 'yes') {
    return confirmation(
      c,
      'Ban affiliate',
      `Ban ${a.email}? Their links stop earning and they cannot sign in to the portal.`,
      `${c.path}/affiliates/ban`,
      { affiliateId: a.id },
      'Ban affiliate',
      `${c.path}/affiliates/detail?affiliateId=${a.id}`,
    )
  }
  await c.api.affiliates.update(a.id, { isBanned: banned })
  return c.redirect(`${c.path}/affiliates/detail?affiliateId=${a.id}&notice=${banned ? 'banned' : 'unbanned'}`)
}

export const affiliatePages: Record<string, Handler> = {
  async 'GET /affiliates'(c) {
    const q = c.v.url.searchParams
    const status = q.get('status') ?? ''
    const contains = q.get('contains') ?? ''
    const list = await c.api.affiliates.list(listQuery(c, affiliateList))
    const items = list.items
    const applicants = items.some((a) => !a.isActive && !a.isBanned)
    const [campaigns] = await Promise.all([c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 })])
    const campaignOf = new Map(campaigns.items.map((m) => [m.id, m]))
    const rows = items.map((a) => [
      a.isActive || a.isBanned
        ? ''
        : html`<input type="checkbox" name="affiliateId" value="${a.id}" aria-label="Select ${a.email}" form="bulk">`,
      html`<a href="${c.path}/affiliates/detail?affiliateId=${a.id}">${a.email}</a>`,
      html`${[a.firstName, a.lastName].filter(Boolean).join(' ')}`,
      html`${campaignOf.get(a.campaignId)?.campaignName ?? ''}`,
      badge(statusOf(a)),
      ...(applicants ? [html`${a.isActive || a.isBanned ? '' : answersBrief(a.details)}`] : []),
      html`${a.totalClicks}`,
      html`${a.totalSignups}`,
      html`${moneyText(a.totalEarnings, campaignOf.get(a.campaignId)?.currency ?? '')}`,
    ])
    return c.page(
      'Affiliates',
      html`${head('Affiliates')}${noticeBox(c.notice())}
<form class="filters card" method="get"><div><label for="contains">Search</label><input id="contains" name="contains" value="${contains}"></div>
<div><label for="status">Status</label><select id="status" name="status">${STATUSES.map(([value, label]) => html`<option value="${value}"${value === status ? html` selected` : ''}>${label}</option>`)}</select></div>
<div><button type="submit">Filter</button></div></form>
${applicants ? html`<form id="bulk" method="post" action="${c.path}/affiliates/approve" class="actions">${csrfField(c.v.csrf)}<button type="submit">Approve selected</button><button type="submit" class="danger" formaction="${c.path}/affiliates/reject">Reject selected</button></form>` : ''}
${rows.length ? table(['Select', 'E-mail', 'Name', 'Campaign', 'Status', ...(applicants ? ['Application'] : []), ['Clicks', 'num'], ['Signups', 'num'], ['Earnings', 'num']], rows) : html`<p class="card">No affiliates match. Affiliates join through the portal's join page of a campaign, or the API.</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
  async 'GET /affiliates/detail'(c) {
    return detail(c, await affiliateOf(c, c.v.url.searchParams.get('affiliateId') ?? ''))
  },
  async 'POST /affiliates/edit'(c) {
    const a = await affiliateOf(c, c.v.url.searchParams.get('affiliateId') ?? '')
    const form = await c.form()
    try {
      await c.api.affiliates.update(a.id, parseForm(affiliateUpdate, form, {}, { keep: true }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...affiliateUpdate.fields])
      return detail(c, a, typedValues(affiliateUpdate, form), errors, problem, status)
    }
    return c.redirect(`${c.path}/affiliates/detail?affiliateId=${a.id}&notice=affiliate-saved`)
  },
  async 'POST /affiliates/promo-codes'(c) {
    const a = await affiliateOf(c, c.v.url.searchParams.get('affiliateId') ?? '')
    const form = await c.form()
    try {
      await c.api.promoCodes.create(parseForm(promoCodeCreate, form, { affiliateId: a.id }))
    } catch (error) {
      // Stripe failing (502) or the package missing (503) is told beside the form too: nothing was stored.
      const provider = error instanceof AffiliateError && error.status >= 500 && error.code.startsWith('provider_')
      const { problem, errors, status } = provider
        ? { problem: (error as AffiliateError).message, errors: {}, status: (error as AffiliateError).status }
        : refusal(error, [...promoCodeCreate.fields])
      return detail(c, a, undefined, {}, undefined, status, { values: typedValues(promoCodeCreate, form), errors, problem })
    }
    return c.redirect(`${c.path}/affiliates/detail?affiliateId=${a.id}&notice=promo-code-added#promo-codes`)
  },
  async 'POST /affiliates/promo-codes/delete'(c) {
    const form = await c.form()
    const a = await affiliateOf(c, form.get('affiliateId'))
    const back = `${c.path}/affiliates/detail?affiliateId=${a.id}`
    let code: PromoCode
    try {
      code = await c.api.promoCodes.get(form.get('promoCodeId'))
    } catch {
      throw new PageError(404, 'Promo code not found', 'There is no such promo code in your workspaces.', {
        href: back,
        label: 'Back to the affiliate',
      })
    }
    if (form.get('confirmed') !== 'yes') {
      return confirmation(
        c,
        'Delete promo code',
        deleteCodeText(code),
        `${c.path}/affiliates/promo-codes/delete`,
        { promoCodeId: code.promoCodeId, affiliateId: a.id },
        'Delete promo code',
        back,
      )
    }
    try {
      await c.api.promoCodes.delete(code.promoCodeId)
    } catch (error) {
      if (!(error instanceof AffiliateError) || error.status === 500) throw error
      throw new PageError(error.status, 'Not deleted', error.message, { href: back, label: 'Back to the affiliate' })
    }
    return c.redirect(`${back}&notice=promo-code-deleted#promo-codes`)
  },
  'POST /affiliates/approve': (c) => decide(c, 'approve'),
  'POST /affiliates/reject': (c) => decide(c, 'reject'),
  'POST /affiliates/ban': (c) => ban(c, true),
  'POST /affiliates/unban': (c) => ban(c, false),
}
