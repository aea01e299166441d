import { is, optional, type as looseObject, validate, type Failure, type Struct } from 'superstruct'
import { validationError, type FieldError } from '../errors.js'
import type { JsonSchema } from '../domain/checks.js'
import type { FieldSpec, InputSpec } from '../domain/describe.js'

type Location = FieldError['location']
type Shape = Record<string, Struct<any, any>>

/** The most field errors one answer lists: a body of thousands of bad keys answers 50, not thousands. */
export const MAX_FIELD_ERRORS = 50

/** A strict object schema: fields listed in `shape`, anything else refused, `readOnly` named as such. */
export interface Schema<T> {
  struct: Struct<T, any>
  fields: ReadonlySet<string>
  readOnly: ReadonlySet<string>
  /** Each field's struct, in field order, and whether it may be left out. */
  entries: readonly (readonly [name: string, struct: Struct<any, any>, optional: boolean])[]
  /** Optional fields of which at least one must be given (`affiliateId` or `clickId`); empty when none. */
  requireOneOf: readonly string[]
  /** A schema made from a model's description: each field's description, by its name in requests (see `parseForm`). */
  described?: ReadonlyMap<string, FieldSpec | InputSpec>
}

// Unknown keys are found here rather than by superstruct's object(): its message for them prints
// the value, which throws on values such as null-prototype objects from a typed-API caller.
// `entries` is worked out on first use: asking each field whether it may be left out runs its
// struct, and doing that for every schema at import cost a cold start a few ms.
export const schema = <S extends Shape>(
  shape: S,
  readOnly: readonly string[] = [],
  options: { requireOneOf?: readonly (keyof S & string)[] } = {},
) => {
  let entries: Schema<unknown>['entries'] | undefined
  return {
    struct: looseObject(shape),
    fields: new Set(Object.keys(shape)),
    readOnly: new Set(readOnly),
    get entries(): Schema<unknown>['entries'] {
      return (entries ??= Object.entries(shape).map(([name, struct]) => [name, struct, is(undefined, struct)] as const))
    },
    requireOneOf: options.requireOneOf ?? [],
  }
}

/** A query that takes no field at all: what every POST route accepts. */
const noQuery = schema({})

/** Every field of `shape` made optional, for partial updates. */
export const allOptional = <S extends Shape>(shape: S) =>
  Object.fromEntries(Object.entries(shape).map(([field, struct]) => [field, optional(struct)])) as {
    [K in keyof S]: S[K] extends Struct<infer T, infer X> ? Struct<T | undefined, X> : never
  }

const pathOf = (failure: Failure): string =>
  failure.path.reduce<string>(
    (path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${String(key)}` : String(key)),
    '',
  )

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function toFieldError(failure: Failure, location: Location): FieldError {
  const path = pathOf(failure)
  let msg: string
  if (location === 'query' && Array.isArray(failure.value)) msg = `${path} must be given once`
  else if (failure.value === undefined) msg = `${path} is required`
  else msg = `${path} ${failure.message}`
  return { type: 'field', msg, path, location }
}

/**
 * Checks `value` with superstruct (coercing query strings) and answers the failures as `errors`
 * entries: one per failing field, then one per unknown or read-only field, at most `room` in all.
 */
function fieldErrors<T>(schema: Schema<T>, value: unknown, location: Location, room: number): { value: T; errors: FieldError[] } {
  if (!isRecord(value)) {
    const msg = `${location === 'body' ? 'the request body' : 'the query string'} must be an object`
    return { value: value as T, errors: [{ type: 'field', msg, path: '', location }] }
  }
  const errors: FieldError[] = []
  // Each field given is checked by its own struct; a field left out only needs to be optional.
  // (The same checks as superstruct's `type()` over the whole object, without walking every
  // optional field a request leaves out: a list query has ten.)
  const result: Record<string, unknown> = {}
  const coerce = location === 'query'
  for (const [name, struct, optional] of schema.entries) {
    if (errors.length >= room) break
    const given = value[name]
    if (given === undefined) {
      if (!optional) errors.push({ type: 'field', msg: `${name} is required`, path: name, location })
      continue
    }
    const [error, checked] = validate(given, struct, { coerce })
    if (!error) {
      result[name] = checked
      continue
    }
    const seen = new Set<string>()
    for (const failure of error.failures()) {
      if (errors.length >= room) break
      const entry = toFieldError({ ...failure, path: [name, ...failure.path] }, location)
      if (seen.has(entry.path)) continue
      seen.add(entry.path)
      errors.push(entry)
    }
  }
  const [first, ...others] = schema.requireOneOf
  if (first !== undefined && errors.length < room && schema.requireOneOf.every((name) => value[name] === undefined)) {
    errors.push({ type: 'field', msg: `${first} is required (or ${others.join(' or ')})`, path: first, location })
  }
  for (const key of Object.keys(value)) {
    if (errors.length >= room) break
    if (schema.fields.has(key)) continue
    const msg = schema.readOnly.has(key) ? `${key} is read-only` : `${key} is not a known field`
    errors.push({ type: 'field', msg, path: key, location })
  }
  return { value: (errors.length ? value : result) as T, errors }
}

/**
 * The first problem of `value` under an object schema (as the sentence of its field error), or
 * null when it passes: for a list whose items are objects of that schema (`events` of a batch).
 */
export function firstProblem<T>(schema: Schema<T>, value: unknown): string | null {
  return fieldErrors(schema, value, 'body', 1).errors[0]?.msg ?? null
}

/** Checks a request's query and body together, so one answer names every failing field (up to 50). */
export function parse<Q, B>(query: [Schema<Q>, unknown], body: [Schema<B>, unknown]): { query: Q; body: B }
export function parse<Q>(query: [Schema<Q>, unknown]): { query: Q }
export function parse(query: [Schema<unknown>, unknown], body?: [Schema<unknown>, unknown]) {
  const q = fieldErrors(query[0], query[1], 'query', MAX_FIELD_ERRORS)
  const b = body ? fieldErrors(body[0], body[1], 'body', MAX_FIELD_ERRORS - q.errors.length) : { value: undefined, errors: [] }
  const errors = [...q.errors, ...b.errors]
  if (errors.length) throw validationError(errors)
  return { query: q.value, body: b.value }
}

/** Checks the body of a route that takes no query field (every POST): any query field is refused. */
export const parseBody = <B>(schema: Schema<B>, body: unknown, query: unknown = {}): B => parse([noQuery, query], [schema, body]).body

/**
 * The JSON Schema of an object schema, from each field's own description (see `field`): its
 * properties, the fields that are required (those `undefined` fails), and no other property.
 * With `requireOneOf` it is an `anyOf` of whole object schemas, one per field that may be the one
 * given (each requiring it), rather than an object with an `anyOf` of bare `required` lists: code
 * generators (openapi-typescript) type the latter `unknown` and then accept any body.
 */
export function jsonSchemaOf<T>(schema: Schema<T>): JsonSchema {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const [name, struct, optional] of schema.entries) {
    properties[name] = struct.schema ?? {}
    if (!optional) required.push(name)
  }
  const object = (needed: string[]): JsonSchema => ({
    type: 'object',
    properties,
    ...(needed.length ? { required: needed } : {}),
    additionalProperties: false,
  })
  const [first, ...others] = schema.requireOneOf
  if (first === undefined) return object(required)
  return {
    description: `\`${first}\` is required, or ${others.map((name) => `\`${name}\``).join(' or ')} in its place; both may be given.`,
    anyOf: schema.requireOneOf.map((name) => object([...required, name])),
  }
}
