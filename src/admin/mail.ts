import { csrfField, errorSummary, input, type FieldErrors } from '../site/forms.js'
import { html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { CAMPAIGN_KINDS, KINDS } from '../notifications/kinds.js'
import { head, when, type Ctx, type Handler } from './ui.js'

// Settings → E-mail (the owners' addresses, the development mailbox) and each campaign's
// notification switches (SPEC wave 4, "Notifications").

const PAGE = '/settings/mail'
const ADDRESS = /^[^\s@<>,]+@[^\s@<>,]+\.[^\s@<>,]+$/

function notifying(c: Ctx) {
  if (!c.notifications) {
    throw new PageError(404, 'E-mail is off', 'This service sends no notifications: it was created without the notify option.', {
      href: `${c.path}/settings/integrations`,
      label: 'Back to settings',
    })
  }
  return c.notifications
}

async function mailPage(c: Ctx, state: { values?: string; errors?: FieldErrors } = {}, status = 200) {
  const n = notifying(c)
  const stored = n.fixedOwners ? null : await n.preferences.owners(c.workspaceId)
  const messages = n.mailbox?.messages() ?? null
  const rows = (messages ?? []).map((m, i) => [
    when(m.receivedAt),
    html`${m.to}`,
    html`<details><summary>${m.subject}</summary><pre id="mail-${i}" class="hint" style="white-space:pre-wrap">${m.text}</pre></details>`,
  ])
  const owners = n.fixedOwners
    ? html`<p>Set by the host (<code>notify.owners</code>): ${n.fixedOwners.join(', ')}.</p>`
    : html`${errorSummary(state.errors ?? {})}<form method="post" action="${c.path}${PAGE}/owners" novalidate>${csrfField(c.v.csrf)}
${input({ name: 'owners', label: 'Owners’ e-mail addresses', value: state.values ?? stored!.join('\n'), errors: state.errors ?? {}, textarea: true, hint: 'One per line. They are told of new applicants and failing payment provider endpoints.' })}
<div class="actions"><button type="submit">Save addresses</button></div></form>`
  return c.page(
    'E-mail',
    html`${head('Settings → E-mail')}${noticeBox(c.notice())}<p><a href="${c.path}/settings/integrations">Integrations</a> · E-mail</p>
<section class="card" id="owner-addresses"><h2>Owners</h2>${owners}</section>
<section class="card" id="mailbox"><h2>Development mailbox</h2>
${
  messages === null
    ? html`<p>Messages go out through the host’s mailer (<code>notify.send</code>).</p>`
    : html`<p>No mail server is set (<code>SMTP_URL</code>): messages stay in this process, newest first, and are printed on the terminal. Not for production.</p>
${rows.length ? table(['Received', 'To', 'Subject and text'], rows) : html`<p class="muted">No messages yet.</p>`}`
}</section>`,
    status,
  )
}

export const mailPages: Record<string, Handler> = {
  [`GET ${PAGE}`]: (c) => mailPage(c),
  async [`POST ${PAGE}/owners`](c) {
    const n = notifying(c)
    const form = await c.form()
    const value = form.get('owners')
    const owners = value.split(/[\s,;]+/).filter(Boolean)
    const wrong = owners.find((o) => !ADDRESS.test(o) || o.length > 254)
    if (n.fixedOwners)
      throw new PageError(409, 'Set by the host', 'The owners’ addresses are set by the host (notify.owners).', {
        href: `${c.path}${PAGE}`,
        label: 'Back',
      })
    if (wrong !== undefined || owners.length > 20) {
      const message = wrong !== undefined ? `${wrong} is not an e-mail address` : 'At most 20 addresses'
      return mailPage(c, { values: value, errors: { owners: message } }, 400)
    }
    await n.preferences.setOwners(c.workspaceId, owners)
    return c.redirect(`${c.path}${PAGE}?notice=mail-saved`)
  },
  async 'GET /campaigns/notifications'(c) {
    const n = notifying(c)
    const campaign = await campaignOf(c)
    const sends = await n.preferences.ofCampaign(campaign.id)
    const rows = CAMPAIGN_KINDS.map(
      (kind) =>
        html`<div class="check"><input type="checkbox" id="kind-${kind}" name="sends" value="${kind}"${sends.includes(kind) ? html` checked` : ''}> <label for="kind-${kind}">${KINDS[kind].label} <span class="hint">(${kind}, to ${KINDS[kind].to === 'owners' ? 'the owners' : 'the affiliate'}${KINDS[kind].byDefault ? '' : '; off unless turned on'})</span></label></div>`,
    )
    return c.page(
      `E-mails of ${campaign.campaignName}`,
      html`${head(`E-mails of ${campaign.campaignName}`)}${noticeBox(c.notice())}
<form class="card" method="post" action="${c.path}/campaigns/notifications?campaignId=${campaign.id}">${csrfField(c.v.csrf)}
<fieldset><legend>This campaign sends</legend>${rows}</fieldset>
<div class="actions"><button type="submit">Save</button><a href="${c.path}/campaigns/edit?campaignId=${campaign.id}">Back to the campaign</a></div></form>`,
    )
  },
  async 'POST /campaigns/notifications'(c) {
    const n = notifying(c)
    const campaign = await campaignOf(c)
    const sends = (await c.form()).all('sends')
    await n.preferences.setCampaign(
      { id: campaign.id, workspaceId: campaign.workspaceId },
      CAMPAIGN_KINDS.filter((kind) => sends.includes(kind)),
    )
    return c.redirect(`${c.path}/campaigns/notifications?campaignId=${campaign.id}&notice=mail-saved`)
  },
}

async function campaignOf(c: Ctx) {
  try {
    return await c.api.campaigns.get(c.v.url.searchParams.get('campaignId') ?? '')
  } catch {
    throw new PageError(404, 'Campaign not found', 'There is no such campaign in your workspaces.', {
      href: `${c.path}/campaigns`,
      label: 'Back to campaigns',
    })
  }
}
