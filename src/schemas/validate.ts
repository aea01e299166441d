import { type as looseObject, validate, type Failure, type Struct } from 'superstruct'
import { validationError, type FieldError } from '../errors.js'
import { flatFieldOf, optionalField, type FlatField } from './flat.js'

type Location = FieldError['location']
type Shape = Record<string, Struct<any, any>>

/** A strict object schema: fields listed in `shape`, anything else refused, `readOnly` named as such. */
export interface Schema<T> {
  struct: Struct<T, any>
  fields: ReadonlySet<string>
  readOnly: ReadonlySet<string>
  /**
   * Every field's plain check, when every field is flat (see `FlatField`): a valid value is then
   * checked (and coerced) without superstruct. Undefined when any field is not flat.
   */
  flat?: readonly (readonly [name: string, field: FlatField])[] | undefined
}

function flatFields(shape: Shape): Schema<unknown>['flat'] {
  const list: [string, FlatField][] = []
  for (const [name, struct] of Object.entries(shape)) {
    const field = flatFieldOf(struct)
    if (!field) return undefined
    list.push([name, field])
  }
  return list
}

// Unknown keys are found here rather than by superstruct's object(): its message for them prints
// the value, which throws on values such as null-prototype objects from a typed-API caller.
export const schema = <S extends Shape>(shape: S, readOnly: readonly string[] = []) => ({
  struct: looseObject(shape),
  fields: new Set(Object.keys(shape)),
  readOnly: new Set(readOnly),
  flat: flatFields(shape),
})

/** Every field of `shape` made optional, for partial updates. */
export const allOptional = <S extends Shape>(shape: S) =>
  Object.fromEntries(Object.entries(shape).map(([field, struct]) => [field, optionalField(struct)])) as {
    [K in keyof S]: S[K] extends Struct<infer T, infer X> ? Struct<T | undefined, X> : never
  }

const pathOf = (failure: Failure): string =>
  failure.path.reduce<string>(
    (path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${String(key)}` : String(key)),
    '',
  )

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function toFieldError(failure: Failure, location: Location): FieldError {
  const path = pathOf(failure)
  let msg: string
  if (location === 'query' && Array.isArray(failure.value)) msg = `${path} must be given once`
  else if (failure.value === undefined) msg = `${path} is required`
  else msg = `${path} ${failure.message}`
  return { type: 'field', msg, path, location }
}

/**
 * What superstruct's `validate(value, looseObject(shape), { coerce })` answers for a valid value,
 * without superstruct: a copy with coerced fields when coercing, the value itself when not.
 * Undefined when anything fails or is unknown: the caller then asks superstruct for the failures.
 */
function quickValue(schema: Schema<unknown>, value: Record<string, unknown>, coerce: boolean): Record<string, unknown> | undefined {
  const fields = schema.flat
  if (!fields) return undefined
  for (const key of Object.keys(value)) if (!schema.fields.has(key)) return undefined
  const out = coerce ? { ...value } : value
  for (const [name, field] of fields) {
    let item = out[name]
    if (coerce && field.coerce) {
      item = field.coerce(item)
      if (item !== undefined || name in out) out[name] = item
    }
    if (!field.check(item)) return undefined
  }
  return out
}

/** Checks `value` and answers the failures as `errors` entries, one per failing field. */
export function fieldErrors<T>(schema: Schema<T>, value: unknown, location: Location): { value: T; errors: FieldError[] } {
  if (isRecord(value)) {
    const valid = quickValue(schema as Schema<unknown>, value, location === 'query')
    if (valid !== undefined) return { value: valid as T, errors: [] }
  } else {
    const msg = `${location === 'body' ? 'the request body' : 'the query string'} must be an object`
    return { value: value as T, errors: [{ type: 'field', msg, path: '', location }] }
  }
  const errors: FieldError[] = []
  const [error, result] = validate(value, schema.struct, { coerce: location === 'query' })
  const seen = new Set<string>()
  for (const failure of error?.failures() ?? []) {
    const entry = toFieldError(failure, location)
    if (seen.has(entry.path)) continue
    seen.add(entry.path)
    errors.push(entry)
  }
  for (const key of Object.keys(value)) {
    if (schema.fields.has(key)) continue
    const msg = schema.readOnly.has(key) ? `${key} is read-only` : `${key} is not a known field`
    errors.push({ type: 'field', msg, path: key, location })
  }
  return { value: (errors.length ? value : result) as T, errors }
}

/** Checks a request's query and body together, so one answer names every failing field. */
export function parse<Q, B>(query: [Schema<Q>, unknown], body: [Schema<B>, unknown]): { query: Q; body: B }
export function parse<Q>(query: [Schema<Q>, unknown]): { query: Q }
export function parse(query: [Schema<unknown>, unknown], body?: [Schema<unknown>, unknown]) {
  const q = fieldErrors(query[0], query[1], 'query')
  const b = body ? fieldErrors(body[0], body[1], 'body') : { value: undefined, errors: [] }
  const errors = [...q.errors, ...b.errors]
  if (errors.length) throw validationError(errors)
  return { query: q.value, body: b.value }
}

/** Checks a body alone. */
export function parseBody<B>(schema: Schema<B>, body: unknown): B {
  const { value, errors } = fieldErrors(schema, body, 'body')
  if (errors.length) throw validationError(errors)
  return value
}
