import type { Campaign } from '../domain/campaign.js'
import { csrfField, errorSummary, refusal, type FieldErrors } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { defaultValues, formValues, modelFields, typedValues } from '../site/model-fields.js'
import { PageError } from '../site/page-error.js'
import { parseForm } from '../site/parse-form.js'
import { campaignCreate, campaignList, campaignUpdate } from '../schemas/campaigns.js'
import { moneyText } from '../site/money.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { confirmation, head, listQuery, pager, type Ctx, type Handler } from './ui.js'

function campaignForm(
  c: Ctx,
  action: string,
  values: Record<string, string>,
  errors: FieldErrors,
  problem: string | undefined,
  button: string,
) {
  return html`${errorSummary(errors, problem)}<form method="post" action="${action}" novalidate>${csrfField(c.v.csrf)}
${modelFields(campaignCreate, { values, errors })}
<div class="actions"><button type="submit">${button}</button><a href="${c.path}/campaigns">Cancel</a></div></form>`
}

/** The fields a refusal may name beside their control. */
const FORM_FIELDS = [...campaignCreate.fields]

/** A campaign's reward rules in words: what a sale earns, for how long, how often, when it is paid. */
export function rewardRules(m: Campaign): string[] {
  const reward =
    m.commissionType === 'percentage' ? `${m.amount}% of each sale` : `${moneyText(m.amount, m.currency)} per sale (at most the sale)`
  const months =
    m.recurringMonths === null
      ? 'every paid sale of a customer earns'
      : m.recurringMonths === 0
        ? 'only a customer’s first paid sale earns'
        : `for ${m.recurringMonths} month${m.recurringMonths === 1 ? '' : 's'} from a customer’s first paid sale`
  return [
    `${reward}, ${months}`,
    ...(m.maxCommissionsPerCustomer === null
      ? []
      : [`at most ${m.maxCommissionsPerCustomer} commission${m.maxCommissionsPerCustomer === 1 ? '' : 's'} per customer`]),
    `clicks credited for ${m.attributionWindowDays} day${m.attributionWindowDays === 1 ? '' : 's'}`,
    m.payoutTerm === 0 ? 'payable at once' : `payable ${m.payoutTerm} days after the sale`,
    `minimum payout ${moneyText(m.minimumPayoutAmount, m.currency)}`,
  ]
}

/** The campaign's fraud rules (`{ rule: 'off' | 'flag' | 'block' }`) when its answers carry them. */
function fraudRulesOf(m: Campaign): [string, string][] {
  const rules: unknown = Reflect.get(m, 'fraudRules')
  if (typeof rules !== 'object' || rules === null) return []
  return Object.entries(rules).flatMap(([rule, mode]) => (typeof mode === 'string' ? [[rule, mode] as [string, string]] : []))
}

const FRAUD_MODES: Record<string, string> = { off: 'off', flag: 'held for review', block: 'blocked' }

/** A value to copy: whole, selectable, wrapping on a phone; the script adds a labelled copy button. */
const copyable = (label: string, id: string, value: string, copyName: string) =>
  html`<p class="field-name" id="${id}-label">${label}</p><div class="copy"><code class="url" id="${id}" data-copy="${copyName}">${value}</code></div>`

/** What the owner hands out and checks: the reward rules in words, the fraud rules, the join link and the referral links' format. */
function campaignSummary(c: Ctx, m: Campaign): Html {
  const parameter = m.allowedUrlParameters[0] ?? 'ref'
  const example = 'REF-AB12CD34'
  const landing = new URL(m.url)
  landing.searchParams.set(parameter, example)
  const shared = new URL(m.url)
  shared.searchParams.set('via', example)
  const fraud = fraudRulesOf(m)
  return html`<div class="grid"><section class="card"><h2>Reward rules</h2><ul>${rewardRules(m).map((rule) => html`<li>${rule}</li>`)}</ul>
${fraud.length ? html`<h3>Fraud rules</h3><ul>${fraud.map(([rule, mode]) => html`<li>${rule.replace(/_/g, ' ')}: ${FRAUD_MODES[mode] ?? mode}</li>`)}</ul>` : ''}</section>
<section class="card"><h2>Links</h2>
${c.portal === null ? html`<p class="muted">The affiliate portal is off: affiliates join through the API.</p>` : copyable('Join link (share it with people who may promote you)', 'join-link', `${c.portal.publicUrl}${c.portal.path}/join/${m.id}`, 'Copy the join link')}
${copyable(`Referral links look like this (parameter ${parameter}, each affiliate’s own code)`, 'link-format', landing.toString(), 'Copy the referral link format')}
${m.beaconInstalled ? copyable('Links on your own site (the beacon counts them; the portal offers them first)', 'share-format', shared.toString(), 'Copy the format of links on your own site') : ''}
${copyable('Tracked redirect of a code (counts the click, then sends the visitor on)', 'redirect-format', `${c.portal?.publicUrl ?? c.origin}${c.basePath}/r/${example}`, 'Copy the tracked redirect format')}
<p id="copy-status" class="hint" role="status" data-copied="Copied to the clipboard."></p></section></div>`
}

async function campaignOf(c: Ctx, id: string): Promise<Campaign> {
  try {
    return await c.api.campaigns.get(id)
  } catch {
    throw new PageError(404, 'Campaign not found', 'There is no such campaign in your workspaces.', {
      href: `${c.path}/campaigns`,
      label: 'Back to campaigns',
    })
  }
}

export const campaignPages: Record<string, Handler> = {
  async 'GET /campaigns'(c) {
    const contains = c.v.url.searchParams.get('contains') ?? ''
    const [list, defaults] = await Promise.all([
      c.api.campaigns.list(listQuery(c, campaignList)),
      c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 }),
    ])
    const program = defaults.items.find((m) => m.isDefault)?.campaignName
    const rows = list.items.map((m) => [
      html`<a href="${c.path}/campaigns/edit?campaignId=${m.id}">${m.campaignName}</a>${m.isDefault ? html` <span class="status">default</span>` : ''}`,
      html`${rewardRules(m)[0]}${m.maxCommissionsPerCustomer === null ? '' : `, at most ${m.maxCommissionsPerCustomer} per customer`}`,
      html`${m.currency}`,
      html`${m.requiresApprovalToJoin ? 'Approval' : 'Open'}`,
      html`${m.isDefault ? '' : actionForm(c.v.csrf, `${c.path}/campaigns/default`, { campaignId: m.id }, 'Make default', { label: `Make default: ${m.campaignName}` })} ${actionForm(c.v.csrf, `${c.path}/campaigns/delete`, { campaignId: m.id }, 'Delete', { danger: true, confirm: `Delete the campaign ${m.campaignName}? This cannot be undone.`, label: `Delete ${m.campaignName}` })}`,
    ])
    return c.page(
      'Campaigns',
      html`${head('Campaigns', html`<a class="button" href="${c.path}/campaigns/new">New campaign</a>`)}${noticeBox(c.notice())}
<p class="card">Program name in e-mails to affiliates: ${program ? html`<strong>${program}</strong> (the default campaign’s name, unless the host sets <code>notify.programName</code>)` : html`the host’s <code>notify.programName</code>; without it, make a campaign the default and its name is used`}.</p>
<form class="filters card" method="get"><div><label for="contains">Search</label><input id="contains" name="contains" value="${contains}"></div><div><button type="submit">Filter</button></div></form>
${rows.length ? table(['Name', 'Reward', 'Currency', 'Joining', 'Actions'], rows) : html`<p class="card">No campaigns yet. <a href="${c.path}/campaigns/new">Create the first one</a>.</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
  async 'GET /campaigns/new'(c) {
    const values = { ...defaultValues(campaignCreate), commissionType: 'percentage' }
    return c.page(
      'New campaign',
      html`${head('New campaign')}${campaignForm(c, `${c.path}/campaigns/new`, values, {}, undefined, 'Create campaign')}`,
    )
  },
  async 'POST /campaigns/new'(c) {
    const form = await c.form()
    try {
      await c.api.campaigns.create(parseForm(campaignCreate, form, { workspaceId: c.workspaceId }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, FORM_FIELDS)
      const values = typedValues(campaignCreate, form)
      return c.page(
        'New campaign',
        html`${head('New campaign')}${campaignForm(c, `${c.path}/campaigns/new`, values, errors, problem, 'Create campaign')}`,
        status,
      )
    }
    return c.redirect(`${c.path}/campaigns?notice=campaign-created`)
  },
  async 'GET /campaigns/edit'(c) {
    const campaign = await campaignOf(c, c.v.url.searchParams.get('campaignId') ?? '')
    const mails = c.notifications
      ? html`<a class="button quiet" href="${c.path}/campaigns/notifications?campaignId=${campaign.id}">E-mail notifications</a>`
      : undefined
    return c.page(
      `Edit ${campaign.campaignName}`,
      html`${head(`Edit ${campaign.campaignName}`, mails)}${noticeBox(c.notice())}${campaignSummary(c, campaign)}${campaignForm(c, `${c.path}/campaigns/edit?campaignId=${campaign.id}`, formValues(campaignCreate, campaign), {}, undefined, 'Save campaign')}`,
    )
  },
  async 'POST /campaigns/edit'(c) {
    const campaign = await campaignOf(c, c.v.url.searchParams.get('campaignId') ?? '')
    const form = await c.form()
    try {
      await c.api.campaigns.update(campaign.id, parseForm(campaignUpdate, form, {}, { keep: true }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, FORM_FIELDS)
      const values = typedValues(campaignCreate, form)
      return c.page(
        `Edit ${campaign.campaignName}`,
        html`${head(`Edit ${campaign.campaignName}`)}${campaignForm(c, `${c.path}/campaigns/edit?campaignId=${campaign.id}`, values, errors, problem, 'Save campaign')}`,
        status,
      )
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
      return confirmation(
        c,
        'Delete campaign',
        `Delete the campaign ${campaign.campaignName}? This cannot be undone.`,
        `${c.path}/campaigns/delete`,
        { campaignId: campaign.id },
        'Delete campaign',
        `${c.path}/campaigns`,
      )
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
