import type { Affiliate } from '../domain/affiliate.js'
import type { Campaign } from '../domain/campaign.js'
import type { Commission } from '../domain/commission.js'
import type { ReferralLink } from '../domain/link.js'
import type { PromoCode } from '../domain/promo-code.js'
import type { AffiliateBalance, Payout } from '../domain/payout.js'
import type { Pagination } from '../api/shared.js'
import { html, paragraphs, type Html } from '../site/html.js'
import { layout, type Frame } from './layout.js'
import { maskEmail } from '../domain/mask.js'
import { csrfField, errorSummary, input, type FieldErrors } from '../site/forms.js'
import { moneyText } from '../site/money.js'
import { messageMain, noticeBox, type Link } from '../site/shell.js'
import { table } from '../site/table.js'

export const PAYOUT_METHODS = [
  ['PAYPAL', 'PayPal'],
  ['WISE', 'Wise'],
  ['BANK_TRANSFER', 'Bank transfer'],
] as const

const date = (iso: string | null) => (iso ? iso.slice(0, 10) : '')
const status = (word: string): Html => html`<span class="status">${word}</span>`
/** How the portal names a commission's status: a held one is "under review" (the fraud rules flagged it), a voided one "not approved". */
const statusWord = (value: string): string => (value === 'hold' ? 'under review' : value === 'voided' ? 'not approved' : value)

/** An amount in its currency's own style (`$10,020.00`). */
const money = (amount: string | number, currency: string): string => moneyText(amount, currency, 'symbol')

export const messagePage = (frame: Frame, title: string, text: string, link?: Link): string =>
  layout(frame, title, messageMain(title, text, link))

export function signInPage(frame: Frame, view: { email?: string; errors?: FieldErrors; notice?: string; problem?: string } = {}): string {
  const errors = view.errors ?? {}
  return layout(
    frame,
    'Sign in',
    html`<div class="narrow">
<h1>Sign in</h1>
${noticeBox(view.notice)}
${errorSummary(errors, view.problem)}
<div class="card">
<p>Enter the e-mail address you joined with. We will send you a link that signs you in: it works once, for 15 minutes.</p>
<form method="post" action="${frame.path}/sign-in" novalidate>
${csrfField(frame.csrf)}
${input({ name: 'email', label: 'E-mail address', type: 'email', value: view.email, required: true, autocomplete: 'email', errors, maxLength: 254 })}
<div class="actions"><button type="submit">E-mail me a sign-in link</button></div>
</form>
</div>
</div>`,
  )
}

export function signInSentPage(frame: Frame, email: string): string {
  return layout(
    frame,
    'Check your inbox',
    html`<div class="narrow"><h1>Check your inbox</h1><div class="card" role="status">
<p>If <strong>${email}</strong> belongs to an affiliate account, a sign-in link is on its way. It works once, for 15 minutes.</p>
<p class="muted">Nothing came? Check your spam folder, or <a href="${frame.path}/sign-in">ask for another link</a>.</p>
</div></div>`,
  )
}

export function confirmPage(frame: Frame, token: string): string {
  return layout(
    frame,
    'Sign in',
    html`<div class="narrow"><h1>Sign in</h1><div class="card">
<p>Press the button to finish signing in on this device.</p>
<form method="post" action="${frame.path}/sign-in/confirm">
${csrfField(frame.csrf)}<input type="hidden" name="token" value="${token}">
<div class="actions"><button type="submit">Sign in</button></div>
</form>
</div></div>`,
  )
}

export interface JoinView {
  campaign: Campaign
  values?: Record<string, string>
  errors?: FieldErrors
  problem?: string
}

const terms = (campaign: Campaign) =>
  campaign.commissionType === 'percentage'
    ? `Earn ${campaign.amount}% of each sale you refer.`
    : `Earn ${money(campaign.amount, campaign.currency)} for each sale you refer.`

export function joinPage(frame: Frame, view: JoinView): string {
  const { campaign } = view
  const errors = view.errors ?? {}
  const values = view.values ?? {}
  const extra = campaign.collectAdditionalInfo
    ? html`<fieldset class="card"><legend>About you</legend>
${input({ name: 'website', label: 'Website or social profile', type: 'url', value: values.website, errors, autocomplete: 'url', maxLength: 500 })}
${input({ name: 'about', label: `How will you promote ${campaign.campaignName}?`, value: values.about, errors, textarea: true, maxLength: 2000 })}
</fieldset>`
    : ''
  return layout(
    frame,
    `Join ${campaign.campaignName}`,
    html`<div class="narrow">
<h1>Join ${campaign.campaignName}</h1>
<p>${terms(campaign)}${campaign.requiresApprovalToJoin ? ' Applications are reviewed before you can share links.' : ''}</p>
${errorSummary(errors, view.problem)}
<form method="post" action="${frame.path}/join/${campaign.id}" novalidate>
${csrfField(frame.csrf)}
<div class="card">
${input({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, required: true, autocomplete: 'email', errors, maxLength: 254 })}
${input({ name: 'firstName', label: 'First name', value: values.firstName, autocomplete: 'given-name', errors, maxLength: 100 })}
${input({ name: 'lastName', label: 'Last name', value: values.lastName, autocomplete: 'family-name', errors, maxLength: 100 })}
</div>
${extra}
<div class="actions"><button type="submit">${campaign.requiresApprovalToJoin ? 'Apply to join' : 'Join'}</button></div>
</form>
<p class="muted">Already an affiliate? <a href="${frame.path}/sign-in">Sign in</a>.</p>
</div>`,
  )
}

export function joinedPage(frame: Frame, campaign: Campaign, email: string): string {
  const text = campaign.requiresApprovalToJoin
    ? html`<p>Thank you for applying. Your account <strong>awaits approval</strong>: you can share links once your application is approved. We will e-mail you then.</p>`
    : html`<p>Welcome aboard: you can start sharing links right away.</p>`
  return layout(
    frame,
    campaign.requiresApprovalToJoin ? 'Application received' : 'You have joined',
    html`<div class="narrow"><h1>${campaign.requiresApprovalToJoin ? 'Application received' : 'You have joined'}</h1><div class="card" role="status">
${text}
<p>We have sent a sign-in link to <strong>${email}</strong>. It works once, for 15 minutes.</p>
</div></div>`,
  )
}

export interface Choice {
  affiliate: Affiliate
  campaign: Campaign
}

export function choosePage(frame: Frame, choices: Choice[]): string {
  return layout(
    frame,
    'Choose a program',
    html`<div class="narrow"><h1>Choose a program</h1><p>Your address belongs to several affiliate programs. Which one do you want to open?</p>
${choices.map(
  ({ affiliate, campaign }) => html`<form class="card" method="post" action="${frame.path}/choose">
${csrfField(frame.csrf)}<input type="hidden" name="affiliateId" value="${affiliate.id}">
<h2>${campaign.campaignName}</h2>
${affiliate.isActive ? '' : html`<p class="muted">Awaits approval</p>`}
<button type="submit" aria-label="Open ${campaign.campaignName}">Open</button>
</form>`,
)}</div>`,
  )
}

export interface DashboardView {
  affiliate: Affiliate
  campaign: Campaign
  links: ReferralLink[]
  /**
   * What a link's code is appended to for the URL affiliates share: the service's counting
   * redirect, `<publicUrl><basePath>/r/`, which records the click and then sends the visitor on.
   */
  shareBase: string
  /** The codes the program gave the affiliate, which customers type at checkout. */
  promoCodes: PromoCode[]
  commissions: { items: Commission[]; pagination: Pagination }
  balance: AffiliateBalance
  payouts: Payout[]
  canSwitch: boolean
  notice?: string
  /** A form's failure: which form, its general message and its fields. */
  failed?: { form: 'link' | 'settings'; problem: string; errors: FieldErrors; values: Record<string, string> }
  /** The e-mail choices card, when the service sends notifications. */
  notifications?: Html
}

function linksCard(frame: Frame, view: DashboardView): Html {
  const { links, campaign, affiliate } = view
  const failed = view.failed?.form === 'link' ? view.failed : undefined
  const errors = failed?.errors ?? {}
  const redirect = (link: ReferralLink, id: string, label: string) =>
    html`<div class="copy"><input id="${id}" readonly value="${view.shareBase}${encodeURIComponent(link.referralCode)}" aria-label="${label} ${link.referralCode}" data-copy></div>`
  // With the beacon on the program's site, a link to the site itself (shareUrl, ?via=) is counted: it is offered first.
  const urls = (link: ReferralLink, i: number) =>
    campaign.beaconInstalled
      ? html`<div class="copy"><input id="link-${i}" readonly value="${link.shareUrl}" aria-label="URL of link ${link.referralCode}" data-copy></div>
<p class="muted">Or through the counting link:</p>${redirect(link, `link-${i}-r`, 'Counting URL of link')}`
      : redirect(link, `link-${i}`, 'URL of link')
  const rows = links.map((link, i) => [
    html`<code>${link.referralCode}</code>`,
    urls(link, i),
    String(link.totalClicks),
    money(link.totalEarnings, campaign.currency),
  ])
  const parameters = campaign.allowedUrlParameters
  const form = affiliate.isActive
    ? html`<form method="post" action="${frame.path}/links" novalidate>
${csrfField(frame.csrf)}
${errorSummary(errors, failed?.problem)}
${input({ name: 'referralCode', label: 'Your own code', value: failed?.values.referralCode, errors, hint: '3 to 64 letters, digits, _ or -. Leave empty for a generated one.', maxLength: 64 })}
${
  parameters.length > 1
    ? html`<label for="urlParameter">URL parameter</label><select id="urlParameter" name="urlParameter">${parameters.map(
        (name) => html`<option${failed?.values.urlParameter === name ? html` selected` : ''}>${name}</option>`,
      )}</select>`
    : ''
}
<div class="actions"><button type="submit">Make a link</button></div>
</form>`
    : html`<p class="muted">You can make links once your account is approved.</p>`
  return html`<section class="card" id="links" aria-labelledby="links-title"><h2 id="links-title">Your links</h2>
${
  links.length
    ? html`${table(['Code', ['URL', 'unlabelled'], ['Clicks', 'num'], ['Earned', 'num']], rows)}
<p id="copy-status" class="muted" role="status" aria-live="polite" data-copied="Link copied"></p>`
    : html`<p class="muted">No links yet.</p>`
}
${form}
</section>`
}

/** The affiliate's promo codes: what customers type at checkout to be theirs (and, with Stripe, get the discount). */
function promoCodesCard(view: DashboardView): Html {
  if (view.promoCodes.length === 0) return html``
  return html`<section class="card" id="promo-codes" aria-labelledby="promo-codes-title"><h2 id="promo-codes-title">Your promo codes</h2>
<p class="muted">Share a code instead of a link: a customer who types it at checkout, in any case, is yours.</p>
${table(
  ['Code', ['Uses', 'num']],
  view.promoCodes.map((code) => [html`<code>${code.code}</code>`, String(code.uses)]),
)}
</section>`
}

function commissionsCard(frame: Frame, view: DashboardView): Html {
  const { items, pagination } = view.commissions
  const hide = view.campaign.hideCustomerEmail
  const page = (n: number, label: string) => html`<a href="${frame.path}?page=${n}#commissions">${label}</a>`
  return html`<section class="card" id="commissions" aria-labelledby="commissions-title"><h2 id="commissions-title">Commissions</h2>
${
  items.length
    ? html`${table(
        ['Date', 'Customer', 'Status', ['Amount', 'num']],
        items.map((c) => [
          date(c.commissionDate),
          hide ? maskEmail(c.referredUser) : c.referredUser,
          status(c.kind === 'clawback' ? 'refund' : statusWord(c.status)),
          money(c.amount, view.campaign.currency),
        ]),
      )}
${
  pagination.totalPages > 1
    ? html`<nav class="pages" aria-label="Commission pages">${pagination.page > 1 ? page(pagination.page - 1, 'Newer') : ''}<span>Page ${pagination.page} of ${pagination.totalPages}</span>${
        pagination.page < pagination.totalPages ? page(pagination.page + 1, 'Older') : ''
      }</nav>`
    : ''
}`
    : html`<p class="muted">No commissions yet: they appear here as your referrals buy.</p>`
}
</section>`
}

function moneyCard(view: DashboardView): Html {
  const { balance, payouts } = view
  const c = balance.currency
  return html`<section class="card" id="balance" aria-labelledby="balance-title"><h2 id="balance-title">Balance and payouts</h2>
<dl class="stats">
<div><dt>Held</dt><dd>${money(balance.held, c)}</dd></div>
<div><dt>Due</dt><dd>${money(balance.due, c)}</dd></div>
<div><dt>In payouts</dt><dd>${money(balance.inPayout, c)}</dd></div>
<div><dt>Paid out</dt><dd>${money(balance.paidOut, c)}</dd></div>
${balance.paidOutside === '0.00' ? '' : html`<div><dt>Paid outside payouts</dt><dd>${money(balance.paidOutside, c)}</dd></div>`}
</dl>
${view.campaign.payoutTerm > 0 ? html`<p class="muted">Commissions are held ${view.campaign.payoutTerm} days after the sale, then due.</p>` : ''}
${
  payouts.length
    ? table(
        ['Date', 'Method', 'Status', ['Amount', 'num']],
        payouts.map((p) => [
          date(p.paidAt ?? p.createdAt),
          PAYOUT_METHODS.find(([value]) => value === p.payoutMethod)?.[1] ?? p.payoutMethod,
          status(p.status),
          money(p.amount, p.currency),
        ]),
      )
    : html`<p class="muted">No payouts yet.</p>`
}
</section>`
}

function settingsCard(frame: Frame, view: DashboardView): Html {
  const failed = view.failed?.form === 'settings' ? view.failed : undefined
  const errors = failed?.errors ?? {}
  const email = failed ? failed.values.payoutEmail : view.affiliate.payoutEmail
  const method = failed ? failed.values.payoutMethod : (view.affiliate.payoutMethod ?? '')
  return html`<section class="card" id="settings" aria-labelledby="settings-title"><h2 id="settings-title">Payout settings</h2>
<form method="post" action="${frame.path}/settings" novalidate>
${csrfField(frame.csrf)}
${errorSummary(errors, failed?.problem)}
${input({ name: 'payoutEmail', label: 'Payout e-mail', type: 'email', value: email, errors, autocomplete: 'email', hint: 'Where payouts are sent.', maxLength: 254 })}
<label for="payoutMethod">Payout method</label>
<select id="payoutMethod" name="payoutMethod">
<option value=""${method === '' ? html` selected` : ''}>Not chosen</option>
${PAYOUT_METHODS.map(([value, label]) => html`<option value="${value}"${method === value ? html` selected` : ''}>${label}</option>`)}
</select>
<div class="actions"><button type="submit">Save payout settings</button></div>
</form>
</section>`
}

export function dashboardPage(frame: Frame, view: DashboardView): string {
  const { affiliate, campaign } = view
  const name = [affiliate.firstName, affiliate.lastName].filter(Boolean).join(' ')
  return layout(
    frame,
    campaign.campaignName,
    html`<h1>${campaign.campaignName}${name ? html` <span class="muted">· ${name}</span>` : ''}</h1>
${noticeBox(view.notice)}
${view.failed && Object.keys(view.failed.errors).length === 0 ? html`<div class="alert" role="alert">${view.failed.problem}</div>` : ''}
${affiliate.isActive ? '' : html`<p class="alert">Your account awaits approval. You can make links once it is approved.</p>`}
${view.canSwitch ? html`<p><a href="${frame.path}/choose">Switch to another program</a></p>` : ''}
${
  campaign.affiliatePortalWelcomeMessage || campaign.affiliateDashboardText
    ? html`<section class="card" aria-label="Messages from ${campaign.campaignName}">${paragraphs(campaign.affiliatePortalWelcomeMessage)}${paragraphs(
        campaign.affiliateDashboardText,
      )}</section>`
    : ''
}
<section class="card" aria-labelledby="stats-title"><h2 id="stats-title">Performance</h2>
<dl class="stats">
<div><dt>Opens</dt><dd>${affiliate.totalOpens}</dd></div>
<div><dt>Clicks</dt><dd>${affiliate.totalClicks}</dd></div>
<div><dt>Sign-ups</dt><dd>${affiliate.totalSignups}</dd></div>
<div><dt>Earnings</dt><dd>${money(affiliate.totalEarnings, campaign.currency)}</dd></div>
</dl>
</section>
${linksCard(frame, view)}
${promoCodesCard(view)}
<div class="grid">
${moneyCard(view)}
${settingsCard(frame, view)}
</div>
${commissionsCard(frame, view)}
${view.notifications ?? ''}`,
  )
}
