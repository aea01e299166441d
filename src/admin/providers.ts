import type { Integration } from '../domain/integration.js'
import { PROVIDER_EVENTS_PATH } from '../http/handler.js'
import { integrationCreate, PROVIDER_EVENT_STATUSES, providerEventList } from '../schemas/integrations.js'
import { csrfField, errorSummary, input, refusal, type FieldErrors } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { defaultValues, modelFields, typedValues } from '../site/model-fields.js'
import { parseForm } from '../site/parse-form.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { badge, confirmation, head, listQuery, pager, when, type Ctx, type Handler } from './ui.js'

// The payment providers of Settings → Integrations (SPEC "Admin dashboard"): connect Stripe, the
// endpoint URL to paste into Stripe, replace the signing secret, disconnect, the event log. Every
// action is `api.integrations.*` as the admin. The signing secret comes from Stripe and is only
// stored: no page ever shows it, not even a refused form (it is typed again).

const PAGE = '/settings/integrations'

export interface ConnectState {
  values?: Record<string, string>
  errors?: FieldErrors
  problem?: string
}

/** Where Stripe posts this integration's events: this request's origin, the API's base path, the events route. */
export const endpointUrl = (c: Ctx, integrationId: string): string => `${c.origin}${c.basePath}${PROVIDER_EVENTS_PATH.replace(':integrationId', integrationId)}`

const nameOf = (i: Integration): string => (i.description ? `Stripe ${i.description}` : 'Stripe')

/** The endpoint URL, whole (it wraps on a phone) and selectable; a copy button joins it with JavaScript. */
const endpointField = (c: Ctx, i: Integration): Html =>
  html`<p class="field-name">Endpoint URL (paste it into Stripe)</p><div class="copy"><code class="url" id="endpoint-${i.integrationId}" data-copy="${`Copy the endpoint URL of ${nameOf(i)}`}">${endpointUrl(c, i.integrationId)}</code></div>`

async function integrationOf(c: Ctx, id: string): Promise<Integration> {
  try {
    return await c.api.integrations.get(id)
  } catch {
    throw new PageError(404, 'Integration not found', 'There is no such integration in your workspaces.', { href: `${c.path}${PAGE}#providers`, label: 'Back to integrations' })
  }
}

/** The section of the integrations page: the connected providers and the form that connects Stripe. */
export async function providersSection(c: Ctx, state: ConnectState = {}): Promise<Html> {
  const [list, campaigns] = await Promise.all([
    c.api.integrations.list({ workspaceId: c.workspaceId, limit: 100 }),
    c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 }),
  ])
  const campaignName = new Map(campaigns.items.map((m) => [m.id, m.campaignName]))
  const connected = list.items.map(
    (i) => html`<li><h3>${nameOf(i)}</h3><p class="muted">${i.livemode ? 'Live mode' : 'Test mode'} · ${i.campaignId ? (campaignName.get(i.campaignId) ?? i.campaignId) : 'any campaign'} · connected ${when(i.createdAt)}</p>
${endpointField(c, i)}
<div class="actions"><a href="${c.path}${PAGE}/events?integrationId=${i.integrationId}" aria-label="Event log of ${nameOf(i)}">Event log</a><a href="${c.path}${PAGE}/secret?integrationId=${i.integrationId}" aria-label="Replace the signing secret of ${nameOf(i)}">Replace secret</a>${actionForm(
      c.v.csrf,
      `${c.path}${PAGE}/disconnect`,
      { integrationId: i.integrationId },
      'Disconnect',
      { danger: true, confirm: disconnectSentence(i), label: `Disconnect ${nameOf(i)}` },
    )}</div></li>`,
  )
  const values = state.values ?? defaultValues(integrationCreate)
  const errors = state.errors ?? {}
  return html`<section class="card" id="providers"><h2>Payment providers</h2>
${connected.length ? html`<ul class="providers">${connected}</ul>` : html`<p class="muted">Stripe is not connected. Connect it and each paid invoice becomes a commission, each refund takes its share back.</p>`}
<h3>Connect Stripe</h3>${errorSummary(Object.fromEntries(Object.entries(errors).map(([name, msg]) => [name === 'livemode' ? name : `connect-${name}`, msg])), state.problem)}<form method="post" action="${c.path}${PAGE}/connect" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="provider" value="stripe">
${modelFields(integrationCreate, { values, errors, idPrefix: 'connect-', choices: { campaignId: campaigns.items.map((m) => [m.id, m.campaignName] as const) } })}
<div class="actions"><button type="submit">Connect Stripe</button></div></form></section>`
}

const disconnectSentence = (i: Integration): string =>
  `Disconnect ${nameOf(i)}? Its endpoint refuses Stripe’s events from now on and its event log is deleted; the sales and commissions it made stay.`

export const providerPages = (integrations: (c: Ctx, connect: ConnectState, status: number) => Promise<Response>): Record<string, Handler> => ({
  async [`POST ${PAGE}/connect`](c) {
    const form = await c.form()
    // The secret and the Stripe key are typed again after a refusal: no page ever shows them.
    const { signingSecret: _secret, apiKey: _key, ...values } = typedValues(integrationCreate, form)
    try {
      await c.api.integrations.create(parseForm(integrationCreate, form, { workspaceId: c.workspaceId }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...integrationCreate.fields])
      return integrations(c, { values, errors, problem }, status)
    }
    return c.redirect(`${c.path}${PAGE}?notice=integration-connected#providers`)
  },
  async [`GET ${PAGE}/secret`](c) {
    return secretPage(c, await integrationOf(c, c.v.url.searchParams.get('integrationId') ?? ''), {})
  },
  async [`POST ${PAGE}/secret`](c) {
    const form = await c.form()
    const integration = await integrationOf(c, form.get('integrationId'))
    try {
      await c.api.integrations.update(integration.integrationId, { signingSecret: form.get('signingSecret') })
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['signingSecret'])
      return secretPage(c, integration, errors, problem, status)
    }
    return c.redirect(`${c.path}${PAGE}?notice=integration-secret#providers`)
  },
  async [`POST ${PAGE}/disconnect`](c) {
    const form = await c.form()
    const integration = await integrationOf(c, form.get('integrationId'))
    if (form.get('confirmed') !== 'yes') {
      return confirmation(c, 'Disconnect Stripe', disconnectSentence(integration), `${c.path}${PAGE}/disconnect`, { integrationId: integration.integrationId }, 'Disconnect', `${c.path}${PAGE}#providers`)
    }
    await c.api.integrations.delete(integration.integrationId)
    return c.redirect(`${c.path}${PAGE}?notice=integration-disconnected#providers`)
  },
  async [`GET ${PAGE}/events`](c) {
    const q = c.v.url.searchParams
    const integration = await integrationOf(c, q.get('integrationId') ?? '')
    const status = q.get('status') ?? ''
    const list = await c.api.integrations.events(listQuery(c, providerEventList, { integrationId: integration.integrationId }))
    const rows = list.items.map((e) => [
      when(e.receivedAt),
      html`<code>${e.eventId}</code>`,
      html`${e.type}`,
      badge(e.status),
      html`${e.reason ?? ''}`,
      e.commissionId ? html`<a href="${c.path}/commissions/detail?commissionId=${e.commissionId}">${e.commissionId.slice(0, 8)}</a>` : '—',
    ])
    return c.page(
      `Events from ${nameOf(integration)}`,
      html`${head(`Events from ${nameOf(integration)}`)}${noticeBox(c.notice())}<p><a href="${c.path}${PAGE}#providers">Back to integrations</a></p>
<section class="card">${endpointField(c, integration)}</section>
<form class="filters card" method="get"><input type="hidden" name="integrationId" value="${integration.integrationId}">
<div><label for="status">Status</label><select id="status" name="status">${['', ...PROVIDER_EVENT_STATUSES].map((value) => html`<option value="${value}"${value === status ? html` selected` : ''}>${value || 'Any'}</option>`)}</select></div>
<div><button type="submit">Filter</button></div></form>
${rows.length ? table(['Received', 'Event ID', 'Type', 'Status', 'Reason', 'Commission'], rows) : html`<p class="card">${status ? 'No events with this status.' : 'No events yet. Add the endpoint URL in Stripe’s dashboard (Developers → Webhooks), or send one with stripe trigger invoice.paid.'}</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
})

function secretPage(c: Ctx, i: Integration, errors: FieldErrors, problem?: string, status = 200): Response {
  return c.page(
    'Replace signing secret',
    html`${head(`Replace the signing secret of ${nameOf(i)}`)}${errorSummary(errors, problem)}<div class="card"><p>Events are checked with the new secret as soon as it is saved: paste the one Stripe shows for this endpoint.</p>
${endpointField(c, i)}
<form method="post" action="${c.path}${PAGE}/secret" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="integrationId" value="${i.integrationId}">
${input({ name: 'signingSecret', label: 'New signing secret', type: 'password', autocomplete: 'off', required: true, errors, maxLength: 255, hint: 'Stripe’s whsec_… secret of this endpoint.' })}
<div class="actions"><button type="submit">Replace secret</button><a href="${c.path}${PAGE}#providers">Cancel</a></div></form></div>`,
    status,
  )
}
