import type { FieldSpec, InputSpec } from '../domain/describe.js'
import { parse, parseBody, type Schema } from '../schemas/validate.js'
import type { Form } from './form-reader.js'

// Forms parsed by the routes' own schemas (as Hono's `validator('form')` or conform's
// `parseWithZod`): the form's text becomes what the route takes, field by field as the model's
// description says, and the route's schema then checks it, so a form is refused exactly as the API
// would refuse the same request, with the same messages.

/** A form's text as a value of the field: a number, a boolean, a list or null where the field holds one. */
function formValue(spec: FieldSpec | InputSpec, form: Form, name: string, keep: boolean): unknown {
  if (spec.kind === 'bool') return form.all(name).includes('true')
  // A map is typed as `key=value` pairs (as the form shows it); a pair without `=` is passed on for the route to refuse.
  if (spec.kind === 'map') {
    return Object.fromEntries(
      form
        .get(name)
        .split(/[\s,]+/)
        .filter(Boolean)
        .map((pair) => [pair.split(/[=:]/)[0]!, pair.split(/[=:]/)[1] ?? '']),
    )
  }
  if (spec.kind === 'list')
    return spec.form?.control === 'checkboxes'
      ? form.all(name).filter(Boolean)
      : form
          .get(name)
          .split(/[\s,]+/)
          .filter(Boolean)
  const text = form.get(name)
  if (text === '') return keep ? (spec.nullable ? null : '') : undefined
  // Text that is no integer is passed on as typed: the route's message then names it.
  return spec.kind === 'int' && /^-?\d{1,15}$/.test(text) ? Number(text) : text
}

/**
 * The request a form stands for, checked by `schema` (a route's body schema): each field of the
 * schema the form sent, as its description says (a blank one left out, or with `keep` set to '' or
 * null: an edit form shows every value, so a blank there is a value), then `fixed` (the page's
 * own, such as the workspace). Throws the route's validation error (400, `errors` per field).
 */
export function parseForm<T>(schema: Schema<T>, form: Form, fixed: Record<string, unknown> = {}, { keep = false } = {}): T {
  const input: Record<string, unknown> = {}
  for (const [name, spec] of schema.described ?? []) {
    if (!form.has(name)) continue
    const value = formValue(spec, form, name, keep)
    if (value !== undefined) input[name] = value
  }
  return parseBody(schema, { ...input, ...fixed })
}

/** A list page's query, from the filters its URL holds (blank ones left out) and the page's own, checked by the route's query schema. */
export function parseQuery<T>(schema: Schema<T>, params: URLSearchParams, fixed: Record<string, unknown> = {}): T {
  const query: Record<string, unknown> = {}
  for (const [name] of schema.entries) {
    const value = params.get(name)
    if (value) query[name] = value
  }
  return parse([schema, { ...query, ...fixed }]).query
}
