import { Struct } from 'superstruct'
import { isUuid } from '../uuid.js'
import { parseMoney } from './money.js'

// The checks of one value a request gives, each a superstruct struct carrying its JSON Schema. Each
// failure message completes a sentence that starts with the field name: "email" + " must be a valid
// e-mail address". Model descriptions (./descriptions) name them; route schemas (src/schemas) too.

/** A JSON Schema (2020-12) object. */
export type JsonSchema = Record<string, unknown>

/**
 * A check, described once: the superstruct struct that checks a value, with the JSON Schema that
 * documents it kept in the struct's `schema` slot (superstruct leaves that slot empty for custom
 * types, and carries it through `optional()`). The OpenAPI document reads it from there, so what
 * is checked and what is documented are one description. `validator` answers `true` for a valid
 * value, else a message completing a sentence that starts with the field name.
 */
export const check = <T>(name: string, json: JsonSchema, validator: (value: unknown) => boolean | string): Struct<T, JsonSchema> =>
  new Struct<T, JsonSchema>({ type: name, schema: json, validator: (value) => validator(value) })

// A practical address check (local@domain.tld), not the whole of RFC 5322.
const EMAIL =
  /^[^\s@"(),:;<>[\\\]]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2})$/

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
const daysInMonth = (year: number, month: number) => (month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31)

export const uuid = check<string>('uuid', { type: 'string', format: 'uuid' }, (value) => isUuid(value) || 'must be a UUID')

// NUL, other C0 controls but tab and line breaks, and a surrogate without its pair cannot be stored
// faithfully (PostgreSQL refuses NUL; SQLite and pg turn a lone surrogate into U+FFFD).
// biome-ignore lint/suspicious/noControlCharactersInRegex: it finds the control characters storage refuses
const UNSTORABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const isEmail = (value: unknown) => typeof value === 'string' && value.length <= 254 && EMAIL.test(value) && !UNSTORABLE.test(value)

export const email = check<string>(
  'email',
  { type: 'string', format: 'email', maxLength: 254 },
  (value) => isEmail(value) || 'must be a valid e-mail address',
)

/** An e-mail address, or the empty string for "none". */
export const optionalEmail = check<string>(
  'optionalEmail',
  { anyOf: [{ type: 'string', format: 'email', maxLength: 254 }, { const: '' }] },
  (value) => value === '' || isEmail(value) || 'must be a valid e-mail address or an empty string',
)

export const text = (max: number, { min = 0 } = {}) =>
  check<string>('text', { type: 'string', maxLength: max, ...(min ? { minLength: min } : {}) }, (value) => {
    if (typeof value !== 'string') return 'must be a string'
    if (value.length < min) return min === 1 ? 'must not be empty' : `must have at least ${min} characters`
    if (value.length > max) return `must have at most ${max} characters`
    return !UNSTORABLE.test(value) || 'must not hold control characters or unpaired surrogates'
  })

export const bool = check<boolean>('bool', { type: 'boolean' }, (value) => typeof value === 'boolean' || 'must be true or false')

export const integer = (min: number, max: number) =>
  check<number>(
    'integer',
    { type: 'integer', minimum: min, maximum: max },
    (value) =>
      (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max) || `must be an integer from ${min} to ${max}`,
  )

const DIGITS = /^\d{1,16}$/

/**
 * An integer that arrives as a query-string digit string: the struct's own coercer turns digits
 * into a number (superstruct's `coerce()` would first test every absent optional field with `is()`).
 */
export const queryInteger = (min: number, max: number): Struct<number, JsonSchema> => {
  const base = integer(min, max)
  return new Struct<number, JsonSchema>({
    ...base,
    coercer: (value, context) => base.coercer(typeof value === 'string' && DIGITS.test(value) ? Number(value) : value, context),
  })
}

/**
 * One or more UUIDs. In a query the name is given once (a string, coerced to a list of one) or
 * repeated (`?payoutId=a&payoutId=b`, which the handler gives as an array); each bad item is
 * named on its own (`payoutId[1] must be a UUID`).
 */
export const uuids = (max: number): Struct<string[], JsonSchema> =>
  new Struct<string[], JsonSchema>({
    type: 'uuids',
    schema: {
      type: 'array',
      items: { type: 'string', format: 'uuid' },
      minItems: 1,
      maxItems: max,
      description: `One to ${max} UUIDs; in a query, repeat the name for each (\`?name=a&name=b\`).`,
    },
    coercer: (value) => (typeof value === 'string' ? [value] : value),
    *validator(value, context) {
      if (!Array.isArray(value) || value.length === 0 || value.length > max) {
        // `value: null`: the failure is about the list as a whole, not a query name given twice.
        yield { value: null, message: `must be one to ${max} UUIDs` }
        return
      }
      for (const [i, item] of value.entries())
        if (!isUuid(item)) yield { path: [...context.path, i], value: item, message: 'must be a UUID' }
    },
  })

export const oneOf = <T extends string>(values: readonly T[]) =>
  check<T>('oneOf', { type: 'string', enum: [...values] }, (value) => values.includes(value as T) || `must be one of: ${values.join(', ')}`)

// C0 and C1 controls and DEL. The URL parser drops tabs and line breaks silently, so without this
// check a url with CR/LF would pass and be stored (and shown, and exported) as sent.
// biome-ignore lint/suspicious/noControlCharactersInRegex: it finds control characters in a url
const URL_CONTROL = /[\u0000-\u001f\u007f-\u009f]/

export const httpUrl = check<string>(
  'httpUrl',
  { type: 'string', format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?:[^\\u0000-\\u001f\\u007f-\\u009f]*$' },
  (value) => {
    if (typeof value !== 'string' || value.length > 2048) return 'must be an http or https URL of at most 2048 characters'
    if (URL_CONTROL.test(value)) return 'must be an http or https URL without control characters (such as CR, LF or tab)'
    try {
      const url = new URL(value)
      return url.protocol === 'http:' || url.protocol === 'https:' || 'must be an http or https URL'
    } catch {
      return 'must be an http or https URL'
    }
  },
)

/**
 * A non-negative amount with at most two decimals, as a JSON number or a decimal string; with
 * `positive`, more than zero (a sale's or a refund's).
 */
export const money = (max: number, { positive = false } = {}) =>
  check<number | string>(
    positive ? 'positiveAmount' : 'money',
    {
      description: `An amount ${positive ? 'above zero ' : ''}with at most two decimals, as a JSON number or a decimal string.`,
      anyOf: [
        { type: 'number', ...(positive ? { exclusiveMinimum: 0 } : { minimum: 0 }), maximum: max },
        { type: 'string', pattern: '^\\d+(\\.\\d{1,2})?$' },
      ],
    },
    (value) => {
      const minor = parseMoney(value)
      if (minor === null) return `must be a ${positive ? 'number above zero' : 'non-negative number'} with at most two decimals`
      if (positive && minor === 0) return 'must be more than zero'
      return minor <= max * 100 || `must be at most ${max}`
    },
  )

const CURRENCY = /^[A-Z]{3}$/
let twoDecimalCurrencies: ReadonlySet<string> | undefined

/**
 * The ISO 4217 codes whose amounts have two decimals, from the runtime's own ICU data (`Intl`)
 * rather than a list kept here: money is kept in hundredths, so JPY (none) or KWD (three) are refused.
 */
export function isTwoDecimalCurrency(code: string): boolean {
  twoDecimalCurrencies ??= new Set(
    Intl.supportedValuesOf('currency').filter(
      (c) => new Intl.NumberFormat('en', { style: 'currency', currency: c }).resolvedOptions().maximumFractionDigits === 2,
    ),
  )
  return twoDecimalCurrencies.has(code)
}

export const currency = check<string>(
  'currency',
  { type: 'string', pattern: CURRENCY.source, description: 'An ISO 4217 code of a currency with two decimals, such as USD or EUR.' },
  (value) =>
    (typeof value === 'string' && CURRENCY.test(value) && isTwoDecimalCurrency(value)) ||
    'must be the ISO 4217 code of a currency with two decimals (USD, EUR, GBP, ...)',
)

export const timestamp = check<string>('timestamp', { type: 'string', format: 'date-time' }, (value) => {
  const match = typeof value === 'string' ? ISO_TIMESTAMP.exec(value) : null
  if (!match) return 'must be an ISO 8601 timestamp'
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  // Date.parse rolls a day the month lacks over (2026-02-30 becomes March 2nd): refuse it instead.
  const isDate = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
  return (isDate && !Number.isNaN(Date.parse(value as string))) || 'must be an ISO 8601 timestamp'
})

export const nullable = <T>(struct: Struct<T, JsonSchema>): Struct<T | null, JsonSchema> =>
  new Struct<T | null, JsonSchema>({
    type: struct.type,
    schema: { anyOf: [struct.schema, { type: 'null' }] },
    validator: (value, context) => value === null || struct.validator(value, context),
  })

export type { Struct }
