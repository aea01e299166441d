import { define, optional, type Struct } from 'superstruct'

/**
 * The plain functions behind a flat field struct (one with no nested entries and no refiners):
 * enough to check a valid value without superstruct's machinery, which builds generators and
 * failure objects for every field of every request. A failing value is always checked again by
 * superstruct itself, so every failure message stays superstruct's.
 */
export interface FlatField {
  /** Whether the (coerced) value is valid. */
  check(value: unknown): boolean
  /** The struct's coercer, when it has one that changes anything. */
  coerce?: (value: unknown) => unknown
}

const flat = new WeakMap<Struct<any, any>, FlatField>()

/** The plain check of `struct`, when it was made here; undefined for any other struct. */
export const flatFieldOf = (struct: Struct<any, any>): FlatField | undefined => flat.get(struct)

/** Records `struct` as flat, with its plain check (and coercer). */
export function asFlat<S extends Struct<any, any>>(struct: S, field: FlatField): S {
  flat.set(struct, field)
  return struct
}

/**
 * superstruct's `define`, recorded as flat: `validator` answers `true` for a valid value, else a
 * message (or false).
 */
export function field<T>(name: string, validator: (value: unknown) => boolean | string): Struct<T, null> {
  return asFlat(define<T>(name, validator), { check: (value) => validator(value) === true })
}

/** superstruct's `optional`, recorded as flat when `struct` is. */
export function optionalField<T, S>(struct: Struct<T, S>): Struct<T | undefined, S> {
  const wrapped = optional(struct)
  const inner = flat.get(struct)
  if (!inner) return wrapped
  return asFlat(wrapped, {
    check: (value) => value === undefined || inner.check(value),
    ...(inner.coerce ? { coerce: inner.coerce } : {}),
  })
}
