import { define, Struct } from 'superstruct'
import { parseMoney } from '../domain/money.js'
import { asFlat, field, flatFieldOf } from './flat.js'

// Field structs. Each failure message completes a sentence that starts with the field name:
// "email" + " must be a valid e-mail address".

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// A practical address check (local@domain.tld), not the whole of RFC 5322.
const EMAIL = /^[^\s@"(),:;<>[\\\]]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2})$/

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
const daysInMonth = (year: number, month: number) =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

export const uuid = field<string>('uuid', (value) => (typeof value === 'string' && UUID.test(value)) || 'must be a UUID')

// NUL, other C0 controls but tab and line breaks, and a surrogate without its pair cannot be stored
// faithfully (PostgreSQL refuses NUL; SQLite and pg turn a lone surrogate into U+FFFD).
const UNSTORABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const isEmail = (value: unknown) => typeof value === 'string' && value.length <= 254 && EMAIL.test(value) && !UNSTORABLE.test(value)

export const email = field<string>('email', (value) => isEmail(value) || 'must be a valid e-mail address')

/** An e-mail address, or the empty string for "none". */
export const optionalEmail = field<string>(
  'optionalEmail',
  (value) => value === '' || isEmail(value) || 'must be a valid e-mail address or an empty string',
)

export const text = (max: number, { min = 0 } = {}) =>
  field<string>('text', (value) => {
    if (typeof value !== 'string') return 'must be a string'
    if (value.length < min) return min === 1 ? 'must not be empty' : `must have at least ${min} characters`
    if (value.length > max) return `must have at most ${max} characters`
    return !UNSTORABLE.test(value) || 'must not hold control characters or unpaired surrogates'
  })

export const bool = field<boolean>('bool', (value) => typeof value === 'boolean' || 'must be true or false')

export const integer = (min: number, max: number) =>
  field<number>(
    'integer',
    (value) => (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max) || `must be an integer from ${min} to ${max}`,
  )

/**
 * An integer that arrives as a query-string digit string. Coerced by hand rather than with
 * superstruct's `coerce(struct, string(), ...)`: that one tests the condition with `is()`, which
 * builds a StructError (stack trace and all) for every absent optional field, on every list request.
 */
export const queryInteger = (min: number, max: number) => {
  const base = integer(min, max)
  const coerce = (value: unknown) => (typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value)
  const struct = new Struct<number, null>({ ...base, coercer: (value, context) => base.coercer(coerce(value), context) })
  return asFlat(struct, { check: flatFieldOf(base)!.check, coerce })
}

export const oneOf = <T extends string>(values: readonly T[]) =>
  field<T>('oneOf', (value) => values.includes(value as T) || `must be one of: ${values.join(', ')}`)

export const httpUrl = field<string>('httpUrl', (value) => {
  if (typeof value !== 'string' || value.length > 2048) return 'must be an http or https URL of at most 2048 characters'
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' || 'must be an http or https URL'
  } catch {
    return 'must be an http or https URL'
  }
})

/** A non-negative amount with at most two decimals, as a JSON number or a decimal string. */
export const money = (max: number) =>
  field<number | string>('money', (value) => {
    const minor = parseMoney(value)
    if (minor === null) return 'must be a non-negative number with at most two decimals'
    return minor <= max * 100 || `must be at most ${max}`
  })

export const timestamp = field<string>('timestamp', (value) => {
  const match = typeof value === 'string' ? ISO_TIMESTAMP.exec(value) : null
  if (!match) return 'must be an ISO 8601 timestamp'
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  // Date.parse rolls a day the month lacks over (2026-02-30 becomes March 2nd): refuse it instead.
  const isDate = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
  return (isDate && !Number.isNaN(Date.parse(value as string))) || 'must be an ISO 8601 timestamp'
})

export const nullable = <T>(struct: Struct<T>) => {
  const inner = flatFieldOf(struct)
  const nullableStruct = define<T | null>(struct.type, (value, context) => value === null || struct.validator(value, context))
  return inner ? asFlat(nullableStruct, { check: (value) => value === null || inner.check(value) }) : nullableStruct
}

export type { Struct }
