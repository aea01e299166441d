import { managesKeys, type KeyInfo } from '../keys/types.js'
import { csrfField, errorSummary, input, refusal, type FieldErrors } from '../site/forms.js'
import { html, type Html } from '../site/html.js'
import { PageError } from '../site/page-error.js'
import { webhookCreate } from '../schemas/webhooks.js'
import { modelFields, typedValues } from '../site/model-fields.js'
import { parseForm } from '../site/parse-form.js'
import { providerPages, providersSection, type ConnectState } from './providers.js'
import { noticeBox } from '../site/shell.js'
import { table } from '../site/table.js'
import { actionForm } from '../site/confirm.js'
import { badge, confirmation, head, when, type Ctx, type Handler } from './ui.js'

const PAGE = '/settings/integrations'

/** A secret shown once: in a `data-secret` element (a copy button joins it with JavaScript). */
const secretBox = (what: string, secret: string): Html =>
  html`<div class="notice" role="status"><p><strong>${what}</strong> You will not see it again: copy it now.</p><code class="secret" data-secret>${secret}</code></div>`

function keyForm(errors: FieldErrors, values: Record<string, string>, c: Ctx, problem?: string) {
  return html`${errorSummary(errors, problem)}<form method="post" action="${c.path}/settings/keys/create" novalidate>${csrfField(c.v.csrf)}
${input({ name: 'label', label: 'Label', value: values.label, errors, hint: 'Where the key is used, e.g. billing backend.', maxLength: 200 })}
${input({
  name: 'kind',
  label: 'Kind',
  value: values.kind ?? 'secret',
  errors,
  required: true,
  options: [
    ['secret', 'Secret (the API)'],
    ['publishable', 'Publishable (the tracking beacon only)'],
  ],
})}
${input({ name: 'allowedOrigins', label: 'Allowed origins', value: values.allowedOrigins, errors, hint: 'Publishable keys: the sites the beacon answers, one per line or comma-separated, e.g. https://shop.example.com.', textarea: true })}
<div class="actions"><button type="submit">Create API key</button></div></form>`
}

function webhookForm(errors: FieldErrors, values: Record<string, string>, c: Ctx, problem?: string) {
  return html`${errorSummary(errors, problem)}<form method="post" action="${c.path}/settings/webhooks/create" novalidate>${csrfField(c.v.csrf)}
${modelFields(webhookCreate, { values, errors })}
<div class="actions"><button type="submit">Add webhook</button></div></form>`
}

interface PageState {
  top?: Html
  keyErrors?: FieldErrors
  keyValues?: Record<string, string>
  keyProblem?: string
  hookErrors?: FieldErrors
  hookValues?: Record<string, string>
  hookProblem?: string
  connect?: ConnectState
}

async function integrations(c: Ctx, extra: PageState = {}, status = 200) {
  const [keys, hooks, providers] = await Promise.all([
    c.keys && managesKeys(c.keys) ? c.keys.list({ workspaceId: c.workspaceId }) : null,
    c.api.webhooks.list({ workspaceId: c.workspaceId, limit: 100 }),
    providersSection(c, extra.connect),
  ])
  const keyRows = (keys ?? []).map((k) => [
    html`${k.label || '—'}`,
    html`<code>${k.prefix}…</code>`,
    html`${k.kind}`,
    when(k.createdAt),
    k.lastUsedAt ? when(k.lastUsedAt) : 'never',
    k.revokedAt
      ? badge('revoked')
      : actionForm(c.v.csrf, `${c.path}/settings/keys/revoke`, { keyId: k.keyId }, 'Revoke', {
          danger: true,
          confirm: `Revoke the key ${k.label || k.prefix}? Requests with it are refused at once.`,
          label: `Revoke ${k.label || k.prefix}`,
        }),
  ])
  const hookRows = hooks.items.map((w) => [
    html`<span class="hint">${w.url}</span>`,
    html`${w.events.join(', ')}`,
    badge(w.enabled ? 'active' : 'disabled'),
    html`${actionForm(c.v.csrf, `${c.path}/settings/webhooks/test`, { webhookId: w.webhookId }, 'Send test', { label: `Send test to ${w.url}` })} ${actionForm(c.v.csrf, `${c.path}/settings/webhooks/rotate`, { webhookId: w.webhookId }, 'Rotate secret', { label: `Rotate secret of ${w.url}` })} <a href="${c.path}/settings/webhooks/deliveries?webhookId=${w.webhookId}">Deliveries</a>`,
  ])
  return c.page(
    'Integrations',
    html`${head('Settings → Integrations')}${noticeBox(c.notice())}${c.notifications ? html`<p>Integrations · <a href="${c.path}/settings/mail">E-mail</a></p>` : ''}${extra.top ?? ''}
<section class="card" id="keys"><h2>API keys</h2>
${keys === null ? html`<p>This service's key store does not manage keys here: keys are managed where the host configures them.</p>` : keyRows.length ? table(['Label', 'Prefix', 'Kind', 'Created', 'Last used', 'Actions'], keyRows) : html`<p class="muted">No keys for this workspace yet.</p>`}
${keys === null ? '' : keyForm(extra.keyErrors ?? {}, extra.keyValues ?? {}, c, extra.keyProblem)}</section>
${providers}
<section class="card" id="webhooks"><h2>Webhooks</h2>
${hookRows.length ? table(['URL', 'Events', 'State', 'Actions'], hookRows) : html`<p class="muted">No webhooks yet.</p>`}
${webhookForm(extra.hookErrors ?? {}, extra.hookValues ?? {}, c, extra.hookProblem)}</section>`,
    status,
  )
}

async function keyOf(c: Ctx, keyId: string): Promise<KeyInfo> {
  const keys = c.keys && managesKeys(c.keys) ? await c.keys.list({ workspaceId: c.workspaceId }) : []
  const found = keys.find((k) => k.keyId === keyId && k.workspaceIds.every((id) => c.workspaces.includes(id)))
  if (!found)
    throw new PageError(404, 'Key not found', 'There is no such key in your workspaces.', {
      href: `${c.path}${PAGE}`,
      label: 'Back to integrations',
    })
  return found
}

export const settingsPages: Record<string, Handler> = {
  'GET /settings': async (c) => c.redirect(`${c.path}${PAGE}`),
  [`GET ${PAGE}`]: (c) => integrations(c),
  ...providerPages((c, connect, status) => integrations(c, { connect }, status)),
  async 'POST /settings/keys/create'(c) {
    const form = await c.form()
    const values = { label: form.get('label'), kind: form.get('kind'), allowedOrigins: form.get('allowedOrigins') }
    const errors: FieldErrors = {}
    if (values.kind !== 'secret' && values.kind !== 'publishable') errors.kind = 'kind must be secret or publishable'
    if (values.label.length > 200) errors.label = 'label must be at most 200 characters'
    const origins = values.allowedOrigins.split(/[\s,]+/).filter(Boolean)
    if (values.kind === 'secret' && origins.length) errors.allowedOrigins = 'allowedOrigins is for publishable keys only'
    if (!c.keys || !managesKeys(c.keys)) throw new PageError(404, 'Not available', 'This key store does not manage keys.')
    if (Object.keys(errors).length === 0) {
      try {
        const { key, info } = await c.keys.create({
          workspaceIds: [c.workspaceId],
          label: values.label,
          kind: values.kind as 'secret',
          ...(values.kind === 'publishable' ? { allowedOrigins: origins } : {}),
        })
        return integrations(c, { top: secretBox(`Your new ${info.kind} key “${info.label || info.prefix}”.`, key) })
      } catch (error) {
        if (!(error instanceof TypeError)) throw error
        errors.allowedOrigins = error.message
      }
    }
    return integrations(c, { keyErrors: errors, keyValues: values }, 400)
  },
  async 'POST /settings/keys/revoke'(c) {
    const form = await c.form()
    const key = await keyOf(c, form.get('keyId'))
    if (form.get('confirmed') !== 'yes') {
      return confirmation(
        c,
        'Revoke API key',
        `Revoke the key ${key.label || key.prefix} (${key.prefix}…)? Every request with it is refused at once, on every instance.`,
        `${c.path}/settings/keys/revoke`,
        { keyId: key.keyId },
        'Revoke key',
        `${c.path}${PAGE}`,
      )
    }
    if (c.keys && managesKeys(c.keys)) await c.keys.revoke(key.keyId)
    return c.redirect(`${c.path}${PAGE}?notice=key-revoked#keys`)
  },
  async 'POST /settings/webhooks/create'(c) {
    const form = await c.form()
    try {
      const hook = await c.api.webhooks.create(parseForm(webhookCreate, form, { workspaceId: c.workspaceId }))
      return integrations(c, { top: secretBox(`The signing secret of ${hook.url}.`, hook.secret) })
    } catch (error) {
      const { problem, errors, status } = refusal(error, [...webhookCreate.fields])
      return integrations(c, { hookErrors: errors, hookValues: typedValues(webhookCreate, form), hookProblem: problem }, status)
    }
  },
  async 'POST /settings/webhooks/rotate'(c) {
    const form = await c.form()
    const hook = await c.api.webhooks.rotateSecret(form.get('webhookId'))
    return integrations(c, {
      top: secretBox(`The new signing secret of ${hook.url} (the previous one also signs for 24 hours).`, hook.secret),
    })
  },
  async 'POST /settings/webhooks/test'(c) {
    const form = await c.form()
    await c.api.webhooks.test(form.get('webhookId'))
    return c.redirect(`${c.path}/settings/webhooks/deliveries?webhookId=${encodeURIComponent(form.get('webhookId'))}&notice=webhook-test`)
  },
  async 'GET /settings/webhooks/deliveries'(c) {
    const webhookId = c.v.url.searchParams.get('webhookId') ?? ''
    const hook = await c.api.webhooks.get(webhookId)
    const list = await c.api.webhooks.deliveries({ webhookId: hook.webhookId, limit: 50 })
    const rows = list.items.map((d) => [
      when(d.createdAt),
      html`${d.eventType}`,
      badge(d.status),
      html`${d.attempts}`,
      html`${d.lastStatusCode ?? ''} ${d.lastError ?? ''}`,
      d.status === 'failed' || d.status === 'dead'
        ? actionForm(c.v.csrf, `${c.path}/settings/webhooks/retry`, { deliveryId: d.deliveryId, webhookId: hook.webhookId }, 'Retry')
        : '',
    ])
    return c.page(
      'Deliveries',
      html`${head(`Deliveries to ${hook.url}`)}${noticeBox(c.notice())}<p><a href="${c.path}${PAGE}#webhooks">Back to integrations</a></p>${rows.length ? table(['Created', 'Event', 'Status', ['Attempts', 'num'], 'Last answer', 'Actions'], rows) : html`<p class="card">No deliveries yet. Send a test.</p>`}`,
    )
  },
  async 'POST /settings/webhooks/retry'(c) {
    const form = await c.form()
    await c.api.webhooks.retryDelivery(form.get('deliveryId'))
    return c.redirect(
      `${c.path}/settings/webhooks/deliveries?webhookId=${encodeURIComponent(form.get('webhookId'))}&notice=delivery-retried`,
    )
  },
}
