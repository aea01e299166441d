import type { Campaign } from '../domain/campaign.js'
import { csrfField, errorSummary, refusal, type FieldErrors } from '../site/forms.js'
import { html } from '../site/html.js'
import { defaultValues, formValues, modelFields, typedValues } from '../site/model-fields.js'
import { PageError } from '../site/page-error.js'
import { parseForm } from '../site/parse-form.js'
import { campaignCreate, campaignList, campaignUpdate } from '../schemas/campaigns.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { confirmation, head, listQuery, pager, type Ctx, type Handler } from './ui.js'

function campaignForm(c: Ctx, action: string, values: Record<string, string>, errors: FieldErrors, problem: string | undefined, button: string) {
  return html`${errorSummary(errors, problem)}<form method="post" action="${action}" novalidate>${csrfField(c.v.csrf)}
${modelFields(campaignCreate, { values, errors })}
<div class="actions"><button type="submit">${button}</button><a href="${c.path}/campaigns">Cancel</a></div></form>`
}

/** The fields a refusal may name beside their control. */
const FORM_FIELDS = [...campaignCreate.fields]

async function campaignOf(c: Ctx, id: string): Promise<Campaign> {
  try {
    return await c.api.campaigns.get(id)
  } catch {
    throw new PageError(404, 'Campaign not found', 'There is no such campaign in your workspaces.', { href: `${c.path}/campaigns`, label: 'Back to campaigns' })
  }
}

export const campaignPages: Record<string, Handler> = {
  async 'GET /campaigns'(c) {
    const contains = c.v.url.searchParams.get('contains') ?? ''
    const list = await c.api.campaigns.list(listQuery(c, campaignList))
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
    const values = { ...defaultValues(campaignCreate), commissionType: 'percentage' }
    return c.page('New campaign', html`${head('New campaign')}${campaignForm(c, `${c.path}/campaigns/new`, values, {}, undefined, 'Create campaign')}`)
  },
  async 'POST /campaigns/new'(c) {
    const form = await c.form()
    try {
      await c.api.campaigns.create(parseForm(campaignCreate, form, { workspaceId: c.workspaceId }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, FORM_FIELDS)
      const values = typedValues(campaignCreate, form)
      return c.page('New campaign', html`${head('New campaign')}${campaignForm(c, `${c.path}/campaigns/new`, values, errors, problem, 'Create campaign')}`, status)
    }
    return c.redirect(`${c.path}/campaigns?notice=campaign-created`)
  },
  async 'GET /campaigns/edit'(c) {
    const campaign = await campaignOf(c, c.v.url.searchParams.get('campaignId') ?? '')
    const mails = c.notifications ? html`<a class="button quiet" href="${c.path}/campaigns/notifications?campaignId=${campaign.id}">E-mail notifications</a>` : undefined
    return c.page(`Edit ${campaign.campaignName}`, html`${head(`Edit ${campaign.campaignName}`, mails)}${noticeBox(c.notice())}${campaignForm(c, `${c.path}/campaigns/edit?campaignId=${campaign.id}`, formValues(campaignCreate, campaign), {}, undefined, 'Save campaign')}`)
  },
  async 'POST /campaigns/edit'(c) {
    const campaign = await campaignOf(c, c.v.url.searchParams.get('campaignId') ?? '')
    const form = await c.form()
    try {
      await c.api.campaigns.update(campaign.id, parseForm(campaignUpdate, form, {}, { keep: true }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, FORM_FIELDS)
      const values = typedValues(campaignCreate, form)
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
