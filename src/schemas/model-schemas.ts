import { optional, Struct } from 'superstruct'
import * as check from '../domain/checks.js'
import {
  answerList,
  requestFields,
  type FieldSpec,
  type InputOf,
  type InputSpec,
  type ModelSpec,
  type NameOf,
  type RecordOfModel,
  type RequestFields,
  type RequestOf,
  type ValueOf,
} from '../domain/describe.js'
import { parseMoney } from '../domain/money.js'
import { listQuery } from './list.js'
import { schema, type Schema } from './validate.js'

// The request schemas a model's description makes (create, update, list), and what a validated
// request stores: as drizzle-zod's `createInsertSchema` makes a table's insert schema.

type Mode = 'create' | 'update'
type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** A model's request fields by their name in requests. */
export type RequestSpecs<M> = RequestFields<M> extends infer F ? { [K in keyof F as NameOf<F[K], K>]: F[K] } : never

/** What a create (or update) request of the model takes, as its route's schema checks it. */
export type ModelRequest<M, Md extends Mode> = Simplify<RequestOf<M, Md>>

/** The struct checking a request's value of a field: its own `input`, else the one its kind implies. */
export function inputOf(spec: FieldSpec | InputSpec, name = 'a field'): Struct<any, check.JsonSchema> {
  if (spec.input) return spec.input
  const values = 'values' in spec ? spec.values : undefined
  const implied: Struct<any, check.JsonSchema> | undefined = values
    ? check.oneOf(values)
    : spec.kind === 'bool'
      ? check.bool
      : spec.kind === 'timestamp'
        ? check.timestamp
        : undefined
  if (!implied) throw new Error(`${name} has no input: describe how a request gives it`)
  return spec.nullable ? check.nullable(implied) : implied
}

/**
 * The names a request may not give though the answer shows them (refused as read-only rather than
 * unknown): the answer's fields (the first one's unless named), the stored `id` when answers rename
 * it, the fields marked `readOnly` and the request-only inputs, less what the schema takes.
 */
export function readOnlyOf(model: ModelSpec, taken: object, answerName?: string): string[] {
  const fields: Record<string, FieldSpec> = model.fields
  const names = [
    ...answerList(model, answerName).map((field) => fields[field]!.answerAs ?? field),
    ...(fields.id?.answerAs ? ['id'] : []),
    ...Object.entries(fields).flatMap(([field, spec]) => (spec.readOnly ? [spec.answerAs ?? field] : [])),
    ...Object.keys(model.inputs ?? {}),
  ]
  return [...new Set(names)].filter((name) => !Object.hasOwn(taken, name))
}

function requestSchema<M extends ModelSpec, Md extends Mode>(model: M, mode: Md): Schema<ModelRequest<M, Md>> {
  const shape: Record<string, Struct<any, any>> = {}
  const described = new Map<string, FieldSpec | InputSpec>()
  for (const [name, , spec] of requestFields(model)) {
    const presence = spec[mode]
    if (!presence) continue
    shape[name] = presence === 'required' ? inputOf(spec, name) : optional(inputOf(spec, name))
    described.set(name, spec)
  }
  const made = schema(shape, readOnlyOf(model, shape), { requireOneOf: mode === 'create' ? (model.requireOneOf ?? []) : [] })
  // The same struct, typed with the request the description says (superstruct's own type sees only names).
  return { ...made, struct: new Struct<ModelRequest<M, Md>, any>({ ...made.struct }), described }
}

/** `POST` of a model: the fields it takes on create, each required or optional as described. */
export const createSchema = <M extends ModelSpec>(model: M) => requestSchema(model, 'create')

/** `PUT` of a model: the fields it takes on update (a partial update: all optional unless described required). */
export const updateSchema = <M extends ModelSpec>(model: M) => requestSchema(model, 'update')

type Fields<M> = M extends { fields: infer F } ? F : never
type OrderNames<M> = M extends { fields: infer F; list: { orderBy: readonly (infer K)[] } }
  ? K extends keyof F
    ? NameOf<F[K], K> & string
    : never
  : never
type FilterStruct<F> = F extends { filter: Struct<infer T, any> } ? T : InputOf<F>
type FilterShape<M> = {
  [K in keyof Fields<M> as Fields<M>[K] extends { filter: unknown } ? NameOf<Fields<M>[K], K> : never]: Struct<
    FilterStruct<Fields<M>[K]>,
    check.JsonSchema
  >
} & (M extends { list: { filters: infer X } } ? { -readonly [K in keyof X]: X[K] } : {})

/** `GET /<model>/list`: the list query, ordered by the fields `list.orderBy` names, filtered by each field marked `filter`. */
export function listSchema<M extends ModelSpec>(model: M): ReturnType<typeof listQuery<OrderNames<M>, FilterShape<M>>> {
  const filters: Record<string, Struct<any, any>> = {}
  for (const [name, , spec] of requestFields(model)) {
    if ('filter' in spec && spec.filter) filters[name] = spec.filter === true ? inputOf(spec, name) : spec.filter
  }
  Object.assign(filters, model.list?.filters)
  const fields: Record<string, FieldSpec> = model.fields
  const order = (model.list?.orderBy ?? []).map((field) => fields[field]!.answerAs ?? field)
  return listQuery(order as OrderNames<M>[], filters as FilterShape<M>)
}

/** The stored field an answer (or request) name stands for: `totalEarnings` is kept as `totalEarningsMinor`. */
export function storedField<M extends ModelSpec>(model: M, name: string): keyof M['fields'] & string {
  for (const [field, spec] of Object.entries(model.fields)) if ((spec.answerAs ?? field) === name) return field
  throw new Error(`no field answers as ${name}`)
}

/** Each named request field's struct, for schemas that compose a model's fields with others. */
export function inputsOf<M extends ModelSpec, const N extends keyof RequestSpecs<M> & string>(
  model: M,
  names: readonly N[],
): { [K in N]: Struct<InputOf<RequestSpecs<M>[K]>, check.JsonSchema> } {
  const byName = new Map(requestFields(model).map(([name, , spec]) => [name, spec]))
  return Object.fromEntries(names.map((name) => [name, inputOf(byName.get(name)!, name)])) as {
    [K in N]: Struct<InputOf<RequestSpecs<M>[K]>, check.JsonSchema>
  }
}

/**
 * A request's value as stored: money in minor units, timestamps in UTC with milliseconds, lists
 * copied, a map as JSON text over its default (the keys a request leaves out keep their default).
 */
function stored(spec: FieldSpec, value: unknown): unknown {
  if (spec.kind === 'money') return parseMoney(value)
  if (spec.kind === 'map')
    return JSON.stringify({ ...(typeof spec.default === 'string' ? JSON.parse(spec.default) : {}), ...(value as object) })
  if (spec.kind === 'timestamp' && typeof value === 'string') return new Date(value).toISOString()
  return Array.isArray(value) ? [...value] : value
}

type CreateFields<M> = { [K in keyof Fields<M>]: Fields<M>[K] extends { create: unknown } ? K : never }[keyof Fields<M>]
type Settled<F> = F extends { create: 'required' } ? true : F extends { default: unknown } ? true : false

/** The stored values of a create request's fields: each given one converted, each left out its default (undefined when it has none). */
export type CreateValues<M> = Simplify<{
  -readonly [K in CreateFields<M>]: Settled<Fields<M>[K]> extends true ? ValueOf<Fields<M>[K]> : ValueOf<Fields<M>[K]> | undefined
}>

/** The stored values of a validated create request (see `CreateValues`). */
export function createValues<M extends ModelSpec>(model: M, input: ModelRequest<M, 'create'>): CreateValues<M> {
  const given: Record<string, unknown> = input
  const out: Record<string, unknown> = {}
  for (const [name, field, spec] of requestFields(model)) {
    if (field === null || !spec.create) continue
    const value = given[name]
    out[field] = value !== undefined ? stored(spec, value) : Array.isArray(spec.default) ? [...spec.default] : spec.default
  }
  return out as CreateValues<M>
}

/**
 * The stored changes of a validated request (an update, or a route's own schema of the model's
 * fields): each field of the model it gives, converted.
 */
export function patchOf<M extends ModelSpec>(model: M, input: object): Partial<RecordOfModel<M>> {
  const given: Record<string, unknown> = { ...input }
  const out: Record<string, unknown> = {}
  for (const [name, field, spec] of requestFields(model)) {
    if (field !== null && given[name] !== undefined) out[field] = stored(spec, given[name])
  }
  return out as Partial<RecordOfModel<M>>
}
