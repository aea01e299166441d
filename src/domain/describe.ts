import type { Struct } from 'superstruct'
import type { JsonSchema } from './checks.js'

// How a model is described: once, every field with how it is stored, answered, given by requests
// and shown in the admin's forms (./descriptions holds the descriptions). The record type, the
// answers, the request schemas, the OpenAPI parts, the storages' tables and the admin forms are all
// derived from a description, as Drizzle derives `$inferSelect` and its insert schemas from a table.

/**
 * How a field is kept and shown. `timestamp` is an ISO 8601 string; `money` is integer minor
 * units (cents) in storage, shown on the wire as its `wire` says; `list` is a string array; `map`
 * is an object of string values on the wire, kept as its JSON text (a text column in every storage).
 */
export type FieldKind = 'text' | 'int' | 'bool' | 'list' | 'timestamp' | 'money' | 'map'

/** How a field is kept in a column: what SQL storages need to know. */
export type ColumnKind = 'text' | 'int' | 'bool' | 'list'

/** Whether a request must give a field, or may. */
export type Presence = 'required' | 'optional'

/** How the admin's forms show a field. */
export interface FormControl {
  label: string
  hint?: string
  /**
   * The control. @default `checkbox` for bool, `select` for a field with `values` (or choices the
   * page gives), `number` for int, `decimal` for money, else `text` (a list: comma-separated);
   * `checkboxes`: a list chosen among `options`
   */
  control?: 'text' | 'textarea' | 'email' | 'url' | 'number' | 'decimal' | 'select' | 'checkbox' | 'checkboxes' | 'list' | 'password'
  /** The fieldset (its legend) the field is shown in. */
  group?: string
  /** A select's options as value -> label, in order. @default each of `values`, labelled by itself */
  options?: Readonly<Record<string, string>>
  /** The label of a select's empty option (a nullable field's null, or "the default"). */
  none?: string
}

export interface FieldSpec {
  kind: FieldKind
  /** May hold null. @default false */
  nullable?: boolean
  /** No two records share the value (a null never collides); the name is the constraint's. */
  unique?: string
  /** Records are looked up by this field: storages index it (in list order). @default false */
  indexed?: boolean
  /** `contains` searches it, case-insensitively. @default false */
  searched?: boolean
  /** The values a text field may hold. */
  values?: readonly string[]
  /** For `money`: a two-decimal string (`"12.50"`) or a number (`12.5`) in answers. @default 'number' */
  wire?: 'string' | 'number'
  /** Its name in API answers and requests, when not the field's own. */
  answerAs?: string
  /** A note for people; becomes the JSON Schema's description. */
  description?: string
  /** The check of the value a request gives (its wire form), with its JSON Schema. */
  input?: Struct<any, JsonSchema>
  /** Taken when a request creates the record. @default not taken */
  create?: Presence
  /** Taken when a request updates the record. @default not taken */
  update?: Presence
  /** What a create that leaves the field out stores (lists are copied; a map's is its JSON text, and the keys a request leaves out of a map keep it). */
  default?: unknown
  /** Never taken from a request though no answer shows it (a secret): refused as read-only, not unknown. */
  readOnly?: boolean
  /** Lists filter by it: the value checked by `input`, or by the struct given. */
  filter?: true | Struct<any, JsonSchema>
  /** How the admin's forms show it; a field without one is in no form. */
  form?: FormControl
}

/** A request field that is not stored (a commission's `clickId`): how requests give it. */
export interface InputSpec {
  kind: FieldKind
  nullable?: boolean
  input: Struct<any, JsonSchema>
  create?: Presence
  update?: Presence
  form?: FormControl
}

/** What a model says besides its fields. */
export interface ModelOptions<F> {
  /** Unique constraints over several fields (one-field ones are the fields' `unique`). */
  unique?: readonly { name: string; fields: readonly (keyof F & string)[] }[]
  /** Look-ups over several fields, each served by one index (one-field ones are `indexed`). */
  indexes?: readonly (readonly (keyof F & string)[])[]
  /**
   * Lists in another order than `createdAt`: records matching `where` (equality) ordered by `orderBy`
   * (then `id`), which SQL storages serve from an index on (`where`…, `orderBy`, `id`) rather than a sort.
   */
  ordered?: readonly { where: readonly (keyof F & string)[]; orderBy: keyof F & string }[]
  /** The API answers made from this record: each a list of fields in answer order, or `all` of them in description order. */
  answers?: Readonly<Record<string, readonly (keyof F & string)[] | 'all'>>
  /** Request fields that are not stored, after the fields. */
  inputs?: Readonly<Record<string, InputSpec>>
  /** Of the fields a create may leave out, it must give at least one of these. */
  requireOneOf?: readonly string[]
  /** The list query: the fields it may order by (in this order), and filters that are no field. */
  list?: { orderBy: readonly (keyof F & string)[]; filters?: Readonly<Record<string, Struct<any, JsonSchema>>> }
}

/** A model's description. */
export type ModelSpec<F extends Record<string, FieldSpec> = Record<string, FieldSpec>> = { fields: F } & ModelOptions<F>

/** Describes a model, keeping its literal types so that its record and requests can be inferred. */
export const model = <const F extends Record<string, FieldSpec>, const O extends ModelOptions<F> = {}>(
  fields: F,
  options?: O,
): { fields: F } & O => ({ fields, ...options }) as { fields: F } & O

type Base<F> = F extends { values: readonly (infer V)[] }
  ? V
  : F extends { kind: 'int' | 'money' }
    ? number
    : F extends { kind: 'bool' }
      ? boolean
      : F extends { kind: 'list' }
        ? string[]
        : string
type OrNull<F, T> = F extends { nullable: true } ? T | null : T

/** The stored value of a field. */
export type ValueOf<F> = OrNull<F, Base<F>>

/** A model's record: each field's stored value (the field's JSDoc goes with it). */
export type RecordOfModel<M> = M extends { fields: infer F } ? { -readonly [K in keyof F]: ValueOf<F[K]> } : never

/** A field's value in answers: money as its `wire` says, a map as an object. */
export type WireOf<F> = OrNull<
  F,
  F extends { kind: 'money' }
    ? F extends { wire: 'string' }
      ? string
      : number
    : F extends { kind: 'map' }
      ? Record<string, string>
      : Base<F>
>

/** A field's name in answers and requests. */
export type NameOf<F, K> = F extends { answerAs: infer A extends string } ? A : K

/** One of a model's answers (`answers[A]`), as the API gives it. */
export type AnswerOfModel<M, A extends string> = M extends { fields: infer F; answers: infer As }
  ? A extends keyof As
    ? (As[A] extends 'all' ? keyof F : As[A] extends readonly (infer L)[] ? L : never) extends infer L
      ? { -readonly [K in keyof F as K extends L ? NameOf<F[K], K> : never]: WireOf<F[K]> }
      : never
    : never
  : never

type Taken<F, Mode extends 'create' | 'update'> = F extends { [P in Mode]: Presence } ? true : false
export type RequestFields<M> = (M extends { fields: infer F } ? F : {}) & (M extends { inputs: infer I } ? I : {})
/** The value a request gives for a field: what its `input` checks, else its stored value (bool, timestamp, one of `values`). */
export type InputOf<F> = F extends { input: Struct<infer T, any> } ? T : ValueOf<F>

/** What a create (or update) request takes, field by field: required ones, then optional ones. */
export type RequestOf<M, Mode extends 'create' | 'update'> =
  RequestFields<M> extends infer F
    ? {
        -readonly [K in keyof F as Taken<F[K], Mode> extends true
          ? F[K] extends { [P in Mode]: 'required' }
            ? NameOf<F[K], K>
            : never
          : never]: InputOf<F[K]>
      } & {
        -readonly [K in keyof F as Taken<F[K], Mode> extends true
          ? F[K] extends { [P in Mode]: 'required' }
            ? never
            : NameOf<F[K], K>
          : never]?: InputOf<F[K]> | undefined
      }
    : never

/** The column kind a field is kept as. */
export const columnKind = (spec: FieldSpec): ColumnKind =>
  spec.kind === 'timestamp' || spec.kind === 'map' ? 'text' : spec.kind === 'money' ? 'int' : spec.kind

const MONEY_STRING = '^-?\\d+\\.\\d{2}$'

/** The JSON Schema of a field's value as API answers give it. */
export function fieldJsonSchema(spec: Pick<FieldSpec, 'kind' | 'nullable' | 'values' | 'wire' | 'description'>): JsonSchema {
  let out: JsonSchema
  switch (spec.kind) {
    case 'text':
      out = spec.values ? { type: 'string', enum: [...spec.values] } : { type: 'string' }
      break
    case 'timestamp':
      out = { type: 'string', format: 'date-time' }
      break
    case 'int':
      out = { type: 'integer' }
      break
    case 'bool':
      out = { type: 'boolean' }
      break
    case 'list':
      out = { type: 'array', items: { type: 'string' } }
      break
    case 'map':
      out = { type: 'object', additionalProperties: { type: 'string' } }
      break
    case 'money':
      out = spec.wire === 'string' ? { type: 'string', pattern: MONEY_STRING } : { type: 'number' }
      break
  }
  if (spec.description) out.description = spec.description
  if (spec.nullable) {
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null]
    out.type = [out.type, 'null']
  }
  return out
}

/** The fields of one of a model's answers, in answer order (the first answer unless named; none without answers). */
export function answerList(model: Pick<ModelSpec, 'fields' | 'answers'>, answer?: string): readonly string[] {
  const listed = answer === undefined ? Object.values(model.answers ?? {})[0] : model.answers?.[answer]
  return listed === 'all' ? Object.keys(model.fields) : (listed ?? [])
}

/** Each request field of a model (its fields, then its inputs) with its name in requests. */
export function requestFields(
  model: ModelSpec,
): ([name: string, field: string, spec: FieldSpec] | [name: string, field: null, spec: InputSpec])[] {
  return [
    ...Object.entries(model.fields).map(([field, spec]): [string, string, FieldSpec] => [spec.answerAs ?? field, field, spec]),
    ...Object.entries(model.inputs ?? {}).map(([name, spec]): [string, null, InputSpec] => [name, null, spec]),
  ]
}
