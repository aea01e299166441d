import type { Integration } from '../domain/integration.js'
import { PROVIDER_EVENTS_PATH } from '../http/handler.js'
import { INTEGRATION_PROVIDERS, integrationCreate, PROVIDER_EVENT_STATUSES, providerEventList } from '../schemas/integrations.js'
import { csrfField, errorSummary, input, refusal, type FieldErrors } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { defaultValues, modelFields, typedValues } from '../site/model-fields.js'
import { parseForm } from '../site/parse-form.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { badge, confirmation, head, listQuery, pager, when, type Ctx, type Handler } from './ui.js'

// The payment providers of Settings → Integrations (SPEC "Admin dashboard"; wave 4, "Payment
// providers beyond Stripe: one contract"): connect Stripe, Paddle Billing or Lemon Squeezy, the
// endpoint URL to paste into the provider, replace the signing secret, disconnect, the event log.
// Every action is `api.integrations.*` as the admin. The signing secret comes from the provider and
// is only stored: no page ever shows it, not even a refused form (it is typed again).

const PAGE = '/settings/integrations'

type ProviderName = (typeof INTEGRATION_PROVIDERS)[number]

/** What the pages say of each provider: its name, where its webhooks are set up, which events to send. */
const PROVIDER_COPY: Record<ProviderName, { label: string; where: string; secret: string; events: string; empty: string }> = {
  stripe: {
    label: 'Stripe',
    where: 'Stripe’s dashboard (Developers → Webhooks)',
    secret: 'Stripe’s whsec_… secret of this endpoint.',
    events: 'checkout.session.completed, customer.created, customer.updated, invoice.paid, invoice_payment.paid, charge.refunded',
    empty:
      'No events yet. Add the endpoint URL in Stripe’s dashboard (Developers → Webhooks), or send one with stripe trigger invoice.paid.',
  },
  paddle: {
    label: 'Paddle Billing',
    where: 'Paddle (Developer tools → Notifications → New destination)',
    secret: 'The secret key Paddle shows for this notification destination.',
    events: 'transaction.completed, adjustment.created, adjustment.updated, customer.created, customer.updated',
    empty:
      'No events yet. Add the endpoint URL as a notification destination in Paddle (Developer tools → Notifications), or send a test one from there.',
  },
  lemonsqueezy: {
    label: 'Lemon Squeezy',
    where: 'Lemon Squeezy (Settings → Webhooks)',
    secret: 'The signing secret typed into this webhook in Lemon Squeezy (6 to 40 characters).',
    events: 'order_created, order_refunded, subscription_payment_success, subscription_payment_refunded',
    empty:
      'No events yet. Add the endpoint URL as a webhook in Lemon Squeezy (Settings → Webhooks), or resend one from its list of recent events.',
  },
}

const isProvider = (value: string | null | undefined): value is ProviderName =>
  (INTEGRATION_PROVIDERS as readonly string[]).includes(value ?? '')
const copyOf = (provider: string) => PROVIDER_COPY[isProvider(provider) ? provider : 'stripe']

export interface ConnectState {
  values?: Record<string, string>
  errors?: FieldErrors
  problem?: string
}

/** Where the provider posts this integration's events: this request's origin, the API's base path, the events route. */
export const endpointUrl = (c: Ctx, integrationId: string): string =>
  `${c.origin}${c.basePath}${PROVIDER_EVENTS_PATH.replace(':integrationId', integrationId)}`

const nameOf = (i: Integration): string => `${copyOf(i.provider).label}${i.description ? ` ${i.description}` : ''}`

/** The endpoint URL, whole (it wraps on a phone) and selectable; a copy button joins it with JavaScript. */
const endpointField = (c: Ctx, i: Integration): Html =>
  html`<p class="field-name">Endpoint URL (paste it into ${copyOf(i.provider).label})</p><div class="copy"><code class="url" id="endpoint-${i.integrationId}" data-copy="${`Copy the endpoint URL of ${nameOf(i)}`}">${endpointUrl(c, i.integrationId)}</code></div>`

async function integrationOf(c: Ctx, id: string): Promise<Integration> {
  try {
    return await c.api.integrations.get(id)
  } catch {
    throw new PageError(404, 'Integration not found', 'There is no such integration in your workspaces.', {
      href: `${c.path}${PAGE}#providers`,
      label: 'Back to integrations',
    })
  }
}

/** The provider the connect form is for: the one the form sent, else the one the page's `?provider=` names, else Stripe. */
const connecting = (c: Ctx, values: Record<string, string> | undefined): ProviderName => {
  const named = values?.provider ?? c.v.url.searchParams.get('provider')
  return isProvider(named) ? named : 'stripe'
}

/** The section of the integrations page: the connected providers and the form that connects one. */
export async function providersSection(c: Ctx, state: ConnectState = {}): Promise<Html> {
  const [list, campaigns] = await Promise.all([
    c.api.integrations.list({ workspaceId: c.workspaceId, limit: 100 }),
    c.api.campaigns.list({ workspaceId: c.workspaceId, limit: 100 }),
  ])
  const campaignName = new Map(campaigns.items.map((m) => [m.id, m.campaignName]))
  const connected = list.items.map(
    (
      i,
    ) => html`<li><h3>${nameOf(i)}</h3><p class="muted">${i.livemode ? 'Live mode' : 'Test mode'} · ${i.campaignId ? (campaignName.get(i.campaignId) ?? i.campaignId) : 'any campaign'} · connected ${when(i.createdAt)}</p>
${endpointField(c, i)}
<p class="muted">Events to send: ${copyOf(i.provider).events}</p>
<div class="actions"><a href="${c.path}${PAGE}/events?integrationId=${i.integrationId}" aria-label="Event log of ${nameOf(i)}">Event log</a><a href="${c.path}${PAGE}/secret?integrationId=${i.integrationId}" aria-label="Replace secret of ${nameOf(i)}">Replace secret</a>${actionForm(
      c.v.csrf,
      `${c.path}${PAGE}/disconnect`,
      { integrationId: i.integrationId },
      'Disconnect',
      { danger: true, confirm: disconnectSentence(i), label: `Disconnect ${nameOf(i)}` },
    )}</div></li>`,
  )
  const provider = connecting(c, state.values)
  const { label } = PROVIDER_COPY[provider]
  const values = state.values ?? defaultValues(integrationCreate)
  const errors = state.errors ?? {}
  const choices = INTEGRATION_PROVIDERS.map((name) =>
    name === provider
      ? html`<a href="${c.path}${PAGE}?provider=${name}#providers" aria-current="true">${PROVIDER_COPY[name].label}</a>`
      : html`<a href="${c.path}${PAGE}?provider=${name}#providers">${PROVIDER_COPY[name].label}</a>`,
  )
  return html`<section class="card" id="providers"><h2>Payment providers</h2>
${connected.length ? html`<ul class="providers">${connected}</ul>` : html`<p class="muted">No payment provider is connected. Connect Stripe, Paddle Billing or Lemon Squeezy and each paid invoice or order becomes a commission, each refund takes its share back.</p>`}
<nav class="actions" aria-label="Provider to connect"><span class="muted">Connect:</span>${choices}</nav>
<h3>Connect ${label}</h3>${errorSummary(Object.fromEntries(Object.entries(errors).map(([name, msg]) => [name === 'livemode' ? name : `connect-${name}`, msg])), state.problem)}<form method="post" action="${c.path}${PAGE}/connect" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="provider" value="${provider}">
${modelFields(integrationCreate, { values, errors, idPrefix: 'connect-', choices: { campaignId: campaigns.items.map((m) => [m.id, m.campaignName] as const) }, omit: provider === 'stripe' ? [] : ['apiKey'] })}
<p class="muted">Then add the endpoint URL shown above in ${PROVIDER_COPY[provider].where}, for these events: ${PROVIDER_COPY[provider].events}.</p>
<div class="actions"><button type="submit">Connect ${label}</button></div></form></section>`
}

const disconnectSentence = (i: Integration): string =>
  `Disconnect ${nameOf(i)}? Its endpoint refuses ${copyOf(i.provider).label}’s events from now on and its event log is deleted; the sales and commissions it made stay.`

export const providerPages = (
  integrations: (c: Ctx, connect: ConnectState, status: number) => Promise<Response>,
): Record<string, Handler> => ({
  async [`POST ${PAGE}/connect`](c) {
    const form = await c.form()
    // The secret and the Stripe key are typed again after a refusal: no page ever shows them.
    const { signingSecret: _secret, apiKey: _key, ...typed } = typedValues(integrationCreate, form)
    const values = { ...typed, provider: isProvider(form.get('provider')) ? form.get('provider') : 'stripe' }
    try {
      await c.api.integrations.create(parseForm(integrationCreate, form, { workspaceId: c.workspaceId }))
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...integrationCreate.fields])
      return integrations(c, { values, errors, problem }, status)
    }
    return c.redirect(`${c.path}${PAGE}?notice=${values.provider === 'stripe' ? 'integration' : values.provider}-connected#providers`)
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
      return confirmation(
        c,
        `Disconnect ${copyOf(integration.provider).label}`,
        disconnectSentence(integration),
        `${c.path}${PAGE}/disconnect`,
        { integrationId: integration.integrationId },
        'Disconnect',
        `${c.path}${PAGE}#providers`,
      )
    }
    await c.api.integrations.delete(integration.integrationId)
    return c.redirect(
      `${c.path}${PAGE}?notice=${integration.provider === 'stripe' ? 'integration' : integration.provider}-disconnected#providers`,
    )
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
${rows.length ? table(['Received', 'Event ID', 'Type', 'Status', 'Reason', 'Commission'], rows) : html`<p class="card">${status ? 'No events with this status.' : copyOf(integration.provider).empty}</p>`}${pager(c.v.url, list.pagination)}`,
    )
  },
})

function secretPage(c: Ctx, i: Integration, errors: FieldErrors, problem?: string, status = 200): Response {
  return c.page(
    'Replace signing secret',
    html`${head(`Replace the signing secret of ${nameOf(i)}`)}${errorSummary(errors, problem)}<div class="card"><p>Events are checked with the new secret as soon as it is saved: paste the one ${copyOf(i.provider).label} shows for this endpoint.</p>
${endpointField(c, i)}
<form method="post" action="${c.path}${PAGE}/secret" novalidate>${csrfField(c.v.csrf)}<input type="hidden" name="integrationId" value="${i.integrationId}">
${input({ name: 'signingSecret', label: 'New signing secret', type: 'password', autocomplete: 'off', required: true, errors, maxLength: 255, hint: copyOf(i.provider).secret })}
<div class="actions"><button type="submit">Replace secret</button><a href="${c.path}${PAGE}#providers">Cancel</a></div></form></div>`,
    status,
  )
}
