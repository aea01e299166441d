import type { FieldSpec, FormControl, InputSpec } from '../domain/describe.js'
import { moneyNumber } from '../domain/money.js'
import type { Schema } from '../schemas/validate.js'
import type { Form } from './form-reader.js'
import { checkbox, input, type FieldErrors } from './forms.js'
import { html, type Html } from './html.js'

// A form's controls made from a route's schema and the model's description: each field the route
// takes that the description gives a form control, in description order, grouped in fieldsets. A
// field added to a description with a `form` is in the admin's form with no other edit.

type Described = [name: string, spec: (FieldSpec | InputSpec) & { form: FormControl }, required: boolean]
type Choices = readonly (readonly [string, string])[]

/** The text a form shows for a value of an answer. */
export const formText = (value: unknown): string =>
  value === null || value === undefined
    ? ''
    : Array.isArray(value)
      ? value.join(', ')
      : typeof value === 'object'
        ? Object.entries(value)
            .map(([key, item]) => `${key}=${String(item)}`)
            .join(', ')
        : String(value)

/** The fields of `schema` that have a form control, each with whether the form must give it. */
function formFields<T>(schema: Schema<T>): Described[] {
  const optional = new Map(schema.entries.map(([name, , isOptional]) => [name, isOptional]))
  const shown = [...(schema.described ?? [])].filter((entry): entry is [string, Described[1]] => entry[1].form !== undefined)
  // Of fields one of which must be given (affiliateId or clickId), the one a form shows is required.
  const oneOf = schema.requireOneOf.filter((name) => shown.some(([shownName]) => shownName === name))
  return shown.map(([name, spec]) => [name, spec, optional.get(name) === false || (oneOf.length === 1 && oneOf[0] === name)])
}

/** The values a form shows for a record as the API answers it: each of the form's fields, as text. */
export function formValues<T>(schema: Schema<T>, answer: object): Record<string, string> {
  const values: Record<string, unknown> = { ...answer }
  return Object.fromEntries(formFields(schema).map(([name]) => [name, formText(values[name])]))
}

/** What a new record's form shows first: each field's default, as answers write it. */
export function defaultValues<T>(schema: Schema<T>): Record<string, string> {
  return Object.fromEntries(
    formFields(schema).flatMap(([name, spec]) =>
      'default' in spec && spec.default !== undefined
        ? [
            [
              name,
              spec.kind === 'money'
                ? formText(moneyNumber(Number(spec.default)))
                : formText(spec.kind === 'map' ? JSON.parse(String(spec.default)) : spec.default),
            ],
          ]
        : [],
    ),
  )
}

/** What a sent form held, as text to show again when it is refused. */
export function typedValues<T>(schema: Schema<T>, form: Form): Record<string, string> {
  return Object.fromEntries(
    formFields(schema)
      .filter(([name]) => form.has(name))
      .map(([name, spec]) => [
        name,
        spec.kind === 'bool'
          ? String(form.all(name).includes('true'))
          : spec.kind === 'list' && spec.form.control === 'checkboxes'
            ? form.all(name).join(', ')
            : form.get(name),
      ]),
  )
}

/** The JSON Schema's `maxLength` of a check (of its non-null branch when nullable). */
function maxLengthOf(spec: FieldSpec | InputSpec): number | undefined {
  const json = spec.input?.schema
  const branch = Array.isArray(json?.anyOf) ? json.anyOf[0] : json
  return typeof branch?.maxLength === 'number' ? branch.maxLength : undefined
}

export interface ModelFieldsOptions {
  values: Record<string, string>
  errors: FieldErrors
  /** Options of selects whose values are records (a campaign), by field. */
  choices?: Record<string, Choices>
  /** Element ids start with it, when another form on the page has fields of the same names. */
  idPrefix?: string
  /** Fields left out of this form (one that does not apply to what the form makes, e.g. a Stripe key for another provider). */
  omit?: readonly string[]
}

function control(name: string, spec: Described[1], required: boolean, options: ModelFieldsOptions): Html {
  const { form } = spec
  const value = options.values[name]
  const hint = form.hint
  if (spec.kind === 'bool')
    return checkbox({ name, label: form.label, checked: value === 'true', errors: options.errors, ...(hint ? { hint } : {}) })
  const values = 'values' in spec ? spec.values : undefined
  const kind =
    form.control ??
    (values || options.choices?.[name] ? 'select' : spec.kind === 'int' ? 'number' : spec.kind === 'money' ? 'decimal' : 'text')
  const id = `${options.idPrefix ?? ''}${name}`
  const common = { name, label: form.label, value, errors: options.errors, required, id, ...(hint ? { hint } : {}) }
  if (kind === 'checkboxes') {
    const chosen = new Set((value ?? '').split(', '))
    const error = options.errors[name]
    return html`<fieldset id="${id}"><legend>${form.label}</legend>${Object.entries(form.options ?? {}).map(
      ([option, label], i) =>
        html`<div class="check"><input type="checkbox" id="${id}-${i}" name="${name}" value="${option}"${chosen.has(option) ? html` checked` : ''}> <label for="${id}-${i}">${label}</label></div>`,
    )}${error ? html`<p class="field-error">${error}</p>` : ''}</fieldset>`
  }
  if (kind === 'select') {
    const listed: Choices = options.choices?.[name] ?? Object.entries(form.options ?? Object.fromEntries((values ?? []).map((v) => [v, v])))
    const none = form.none ?? (spec.nullable ? 'None' : undefined)
    return input({ ...common, options: none === undefined ? listed : [['', none], ...listed] })
  }
  const maxLength = maxLengthOf(spec)
  return input({
    ...common,
    ...(maxLength ? { maxLength } : {}),
    ...(kind === 'textarea' ? { textarea: true } : {}),
    ...(kind === 'number' || kind === 'email' || kind === 'url' || kind === 'password' ? { type: kind } : {}),
    ...(kind === 'password' ? { autocomplete: 'off' } : {}),
    ...(kind === 'decimal' ? { attributes: html` inputmode="decimal"` } : {}),
  })
}

/**
 * The controls of the fields `schema` takes that have a form control: those of a group in a
 * `<fieldset class="card">` under its name (groups in the order their first field comes), the
 * others as they come. A required one is marked required; a bool is a checkbox, a field with
 * `values` or `choices` a select (with the description's `none` as its empty option).
 */
export function modelFields<T>(schema: Schema<T>, options: ModelFieldsOptions): Html {
  const groups = new Map<string | undefined, Html[]>()
  for (const [name, spec, required] of formFields(schema)) {
    if (options.omit?.includes(name)) continue
    const group = spec.form.group
    groups.set(group, [...(groups.get(group) ?? []), control(name, spec, required, options)])
  }
  return html`${[...groups].map(([group, controls]) => (group === undefined ? html`${controls}` : html`<fieldset class="card"><legend>${group}</legend>\n${controls}\n</fieldset>`))}`
}
