import type { Campaign } from '../domain/campaign.js'
import { checkbox, errorSummary, input, refusal, type FieldErrors } from '../site/forms.js'
import { csrfField } from '../site/forms.js'
import { html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { pick } from './fields.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { confirmation, head, pager, type Ctx, type Handler } from './ui.js'

const FIELDS = {
  campaignName: 'text', url: 'text', commissionType: 'text', amount: 'money', currency: 'text', minimumPayoutAmount: 'money',
  payoutTerm: 'integer', attributionWindowDays: 'integer', requiresApprovalToJoin: 'bool', collectAdditionalInfo: 'bool',
  hideCustomerEmail: 'bool', isDefault: 'bool', affiliatePortalWelcomeMessage: 'text', affiliateDashboardText: 'text',
  stripeCouponId: 'text', allowedUrlParameters: 'list',
} as const

const valuesOf = (campaign: Campaign): Record<string, string> => ({
  campaignName: campaign.campaignName, url: campaign.url, commissionType: campaign.commissionType, amount: String(campaign.amount),
  currency: campaign.currency, minimumPayoutAmount: String(campaign.minimumPayoutAmount), payoutTerm: String(campaign.payoutTerm),
  attributionWindowDays: String(campaign.attributionWindowDays), requiresApprovalToJoin: String(campaign.requiresApprovalToJoin),
  collectAdditionalInfo: String(campaign.collectAdditionalInfo), hideCustomerEmail: String(campaign.hideCustomerEmail),
  isDefault: String(campaign.isDefault), affiliatePortalWelcomeMessage: campaign.affiliatePortalWelcomeMessage,
  affiliateDashboardText: campaign.affiliateDashboardText, stripeCouponId: campaign.stripeCouponId, allowedUrlParameters: campaign.allowedUrlParameters.join(', '),
})

function campaignForm(c: Ctx, action: string, values: Record<string, string>, errors: FieldErrors, problem: string | undefined, button: string) {
  const f = (name: string, label: string, extra: Partial<Parameters<typeof input>[0]> = {}) => input({ name, label, value: values[name], errors, ...extra })
  return html`${errorSummary(errors, problem)}<form method="post" action="${action}" novalidate>${csrfField(c.v.csrf)}
<fieldset class="card"><legend>Campaign</legend>
${f('campaignName', 'Name', { required: true, maxLength: 200 })}
${f('url', 'Website URL', { required: true, type: 'url', hint: 'Where referral links send visitors.' })}
</fieldset>
<fieldset class="card"><legend>Reward</legend>
${f('commissionType', 'Commission type', { required: true, options: [['percentage', 'Percentage of each sale'], ['fixed', 'Fixed amount per sale']] })}
${f('amount', 'Amount', { required: true, hint: 'A percentage (0-100) or an amount with two decimals.', attributes: html` inputmode="decimal"` })}
${f('currency', 'Currency', { hint: 'ISO 4217 code, e.g. USD.', maxLength: 3 })}
${f('minimumPayoutAmount', 'Minimum payout amount', { attributes: html` inputmode="decimal"` })}
${f('payoutTerm', 'Payout term (days)', { type: 'number' })}
${f('attributionWindowDays', 'Attribution window (days)', { type: 'number' })}
</fieldset>
<fieldset class="card"><legend>Joining and the portal</legend>
${checkbox({ name: 'requiresApprovalToJoin', label: 'Applicants need approval', checked: values.requiresApprovalToJoin === 'true', errors })}
${checkbox({ name: 'collectAdditionalInfo', label: 'Ask applicants about themselves', checked: values.collectAdditionalInfo === 'true', errors })}
${checkbox({ name: 'hideCustomerEmail', label: "Hide customers' e-mails from affiliates", checked: values.hideCustomerEmail === 'true', errors })}
${checkbox({ name: 'isDefault', label: 'Default campaign of the workspace', checked: values.isDefault === 'true', errors })}
${f('affiliatePortalWelcomeMessage', 'Portal welcome message', { textarea: true, maxLength: 5000 })}
${f('affiliateDashboardText', 'Portal dashboard text', { textarea: true, maxLength: 5000 })}
${f('stripeCouponId', 'Stripe coupon ID', { maxLength: 255 })}
${f('allowedUrlParameters', 'Allowed URL parameters', { hint: 'Comma-separated, e.g. ref, via.' })}
</fieldset>
<div class="actions"><button type="submit">${button}</button><a href="${c.path}/campaigns">Cancel</a></div></form>`
}

async function campaignOf(c: Ctx, id: string): Promise<Campaign> {
  try {
    return await c.api.campaigns.get(id)
  } catch {
    throw new PageError(404, 'Campaign not found', 'There is no such campaign in your workspaces.', { href: `${c.path}/campaigns`, label: 'Back to campaigns' })
  }
}

export const campaignPages: Record<string, Handler> = {
  async 'GET /campaigns'(c) {
    const page = Number(c.v.url.searchParams.get('page') ?? 1) || 1
    const contains = c.v.url.searchParams.get('contains') ?? ''
    const list = await c.api.campaigns.list({ workspaceId: c.workspaceId, page, limit: 20, ...(contains ? { contains } : {}) })
    const rows = list.items.map((m) => [
      html`<a href="${c.path}/campaigns/edit?campaignId=${m.id}">${m.campaignName}</a>${m.isDefault ? html` <span class="status">default</span>` : ''}`,
      html`${m.commissionType === 'percentage' ? `${m.amount}%` : moneyText(m.amount, m.currency)}`,
      html`${m.currency}`,
      html`${m.requiresApprovalToJoin ? 'Approval' : 'Open'}`,
      html`${m.isDefault ? '' : actionForm(c.v.csrf, `${c.path}/campaigns/default`, { campaignId: m.id }, 'Make default', { label: `Make ${m.campaignName} the default` })} ${actionForm(c.v.csrf, `${c.path}/campaigns/delete`, { campaignId: m.id }, 'Delete', { danger: true, confirm: `Delete the campaign ${m.campaignName}? This cannot be undone.`, label: `Delete ${m.campaignName}` })}`,
    ])
    return c.page(
      'Campaigns',
      html`${head('Campaigns', html`<a class="button" href="${c.path}/campaigns/new">New campaign</a>`)}${noticeBox(c.notice())}
<form class="filters card" method="get"><div><label for="contains">Search</label><input id="contains" name="contains" value="${contains}"></div><div><button type="submit">Filter</button></div></form>
${rows.length ? table(['Name', ['Reward', 'num'], 'Currency', 'Joining', 'Actions'], rows) : html`<p class="card">No campaigns yet. <a href="${c.path}/campaigns/new">Create the first one</a>.</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
  async 'GET /campaigns/new'(c) {
    const values = { commissionType: 'percentage', currency: 'USD', requiresApprovalToJoin: 'false', collectAdditionalInfo: 'false', hideCustomerEmail: 'false', isDefault: 'false' }
    return c.page('New campaign', html`${head('New campaign')}${campaignForm(c, `${c.path}/campaigns/new`, values, {}, undefined, 'Create campaign')}`)
  },
  async 'POST /campaigns/new'(c) {
    const { values, input: body } = pick(await c.form(), FIELDS)
    try {
      await c.api.campaigns.create({ ...body, workspaceId: c.workspaceId } as never)
    } catch (error) {
      const { problem, errors, status } = refusal(error, Object.keys(FIELDS))
      return c.page('New campaign', html`${head('New campaign')}${campaignForm(c, `${c.path}/campaigns/new`, values, errors, problem, 'Create campaign')}`, status)
    }
    return c.redirect(`${c.path}/campaigns?notice=campaign-created`)
  },
  async 'GET /campaigns/edit'(c) {
    const campaign = await campaignOf(c, c.v.url.searchParams.get('campaignId') ?? '')
    return c.page(`Edit ${campaign.campaignName}`, html`${head(`Edit ${campaign.campaignName}`)}${noticeBox(c.notice())}${campaignForm(c, `${c.path}/campaigns/edit?campaignId=${campaign.id}`, valuesOf(campaign), {}, undefined, 'Save campaign')}`)
  },
  async 'POST /campaigns/edit'(c) {
    const campaign = await campaignOf(c, c.v.url.searchParams.get('campaignId') ?? '')
    const { values, input: body } = pick(await c.form(), FIELDS, true)
    try {
      await c.api.campaigns.update(campaign.id, body as never)
    } catch (error) {
      const { problem, errors, status } = refusal(error, Object.keys(FIELDS))
      return c.page(`Edit ${campaign.campaignName}`, html`${head(`Edit ${campaign.campaignName}`)}${campaignForm(c, `${c.path}/campaigns/edit?campaignId=${campaign.id}`, values, errors, problem, 'Save campaign')}`, status)
    }
    return c.redirect(`${c.path}/campaigns/edit?campaignId=${campaign.id}&notice=campaign-saved`)
  },
  async 'POST /campaigns/default'(c) {
    const form = await c.form()
    const campaign = await campaignOf(c, form.get('campaignId'))
    await c.api.campaigns.update(campaign.id, { isDefault: true })
    return c.redirect(`${c.path}/campaigns?notice=campaign-default`)
  },
  async 'POST /campaigns/delete'(c) {
    const form = await c.form()
    const campaign = await campaignOf(c, form.get('campaignId'))
    if (form.get('confirmed') !== 'yes') {
      return confirmation(c, 'Delete campaign', `Delete the campaign ${campaign.campaignName}? This cannot be undone.`, `${c.path}/campaigns/delete`, { campaignId: campaign.id }, 'Delete campaign', `${c.path}/campaigns`)
    }
    try {
      await c.api.campaigns.delete(campaign.id)
    } catch (error) {
      const { problem, status } = refusal(error, [])
      throw new PageError(status, 'Campaign not deleted', problem, { href: `${c.path}/campaigns`, label: 'Back to campaigns' })
    }
    return c.redirect(`${c.path}/campaigns?notice=campaign-deleted`)
  },
}
