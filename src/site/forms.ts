import { AffiliateError } from '../errors.js'
import { html, type Html } from './html.js'

/** Field -> what is wrong with it, shown beside the field and in a summary at the top of the form. */
export type FieldErrors = Record<string, string>

/** The hidden CSRF field every form carries. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="csrf" value="${token}">`

/** The summary at the top of a refused form: a general problem and a link to each field in error. */
export const errorSummary = (errors: FieldErrors, general?: string): Html | '' => {
  const list = Object.entries(errors)
  if (list.length === 0 && !general) return ''
  return html`<div class="alert" role="alert"><strong>${general ?? 'Please correct the following:'}</strong>${
    list.length ? html`<ul>${list.map(([name, msg]) => html`<li><a href="#${name}">${msg}</a></li>`)}</ul>` : ''
  }</div>`
}

export interface InputSpec {
  name: string
  label: string
  type?: string
  value?: string | undefined
  required?: boolean
  autocomplete?: string
  hint?: string
  errors: FieldErrors
  textarea?: boolean
  maxLength?: number
  /** A `<select>` of these `[value, label]` pairs instead of an input. */
  options?: readonly (readonly [string, string])[]
  /** Extra attributes, already safe (e.g. `html\` step="0.01"\``). */
  attributes?: Html
  /** The element id, when the name is not unique on the page. @default name */
  id?: string
}

/** A labelled control; its error, when it has one, is tied to it with aria-describedby. */
export function input(spec: InputSpec): Html {
  const id = spec.id ?? spec.name
  const error = spec.errors[spec.name]
  const described = [spec.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')
  const attributes = html` id="${id}" name="${spec.name}"${spec.required ? html` required` : ''}${
    spec.autocomplete ? html` autocomplete="${spec.autocomplete}"` : ''
  }${spec.maxLength ? html` maxlength="${spec.maxLength}"` : ''}${described ? html` aria-describedby="${described}"` : ''}${
    error ? html` aria-invalid="true"` : ''
  }${spec.attributes ?? ''}`
  const control = spec.options
    ? html`<select${attributes}>${spec.options.map(([value, label]) => html`<option value="${value}"${value === (spec.value ?? '') ? html` selected` : ''}>${label}</option>`)}</select>`
    : spec.textarea
      ? html`<textarea${attributes}>${spec.value ?? ''}</textarea>`
      : html`<input type="${spec.type ?? 'text'}"${attributes} value="${spec.value ?? ''}">`
  return html`<label for="${id}">${spec.label}${spec.required ? '' : html` <span class="hint">(optional)</span>`}</label>
${spec.hint ? html`<span class="hint" id="${id}-hint">${spec.hint}</span>` : ''}
${control}
${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}`
}

/** A labelled checkbox (sent as `true` when ticked; a hidden `false` before it says it was shown). */
export function checkbox(spec: { name: string; label: string; checked: boolean; hint?: string; errors: FieldErrors }): Html {
  const error = spec.errors[spec.name]
  return html`<div class="check"><input type="hidden" name="${spec.name}" value="false"><input type="checkbox" id="${spec.name}" name="${spec.name}" value="true"${spec.checked ? html` checked` : ''}${
    error ? html` aria-invalid="true" aria-describedby="${spec.name}-error"` : ''
  }> <label for="${spec.name}">${spec.label}${spec.hint ? html` <span class="hint">${spec.hint}</span>` : ''}</label>${
    error ? html`<p class="field-error" id="${spec.name}-error">${error}</p>` : ''
  }</div>`
}

/** An API refusal of a form as what the page shows: its message and each named field's. Other errors are thrown on. */
export function refusal(error: unknown, fields: readonly string[]): { problem: string; errors: FieldErrors; status: number } {
  if (!(error instanceof AffiliateError) || error.status >= 500 || error.status === 404) throw error
  const errors: FieldErrors = {}
  for (const entry of error.errors ?? []) if (fields.includes(entry.path)) errors[entry.path] = entry.msg
  const problem = error.errors ? 'Please correct the following:' : error.message
  return { problem, errors, status: error.status }
}
