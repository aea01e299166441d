import type { Form } from '../site/form-reader.js'

// Form values as the API takes them: a form sends text, the API wants numbers and booleans. A
// value that is not what the API wants is passed on as typed, so the API's own message names it.

export const integerOf = (text: string): number | string => (/^-?\d{1,15}$/.test(text) ? Number(text) : text)
export const boolOf = (text: string): boolean | string => (text === 'true' ? true : text === 'false' ? false : text)

/** The named fields the form sent (blank ones left out unless `keepBlank`), converted for the API. */
export function pick(
  form: Form,
  spec: Record<string, 'text' | 'integer' | 'bool' | 'money' | 'list' | 'nullable'>,
  keepBlank = false,
): { values: Record<string, string>; input: Record<string, unknown> } {
  const values: Record<string, string> = {}
  const input: Record<string, unknown> = {}
  for (const [name, kind] of Object.entries(spec)) {
    if (!form.has(name)) continue
    const text = kind === 'bool' ? (form.all(name).includes('true') ? 'true' : 'false') : form.get(name)
    values[name] = text
    if (text === '' && !keepBlank && kind !== 'nullable') continue
    input[name] =
      kind === 'integer'
        ? integerOf(text)
        : kind === 'bool'
          ? boolOf(text)
          : kind === 'list'
            ? text.split(/[\s,]+/).filter(Boolean)
            : kind === 'nullable'
              ? text === '' ? null : text
              : text
  }
  return { values, input }
}
