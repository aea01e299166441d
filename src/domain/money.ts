// Money is integer minor units (cents) inside; decimal strings with exactly two decimals outside.

const DECIMAL = /^(0|[1-9]\d{0,14})(?:\.(\d{1,2}))?$/

/**
 * Minor units for a non-negative amount with at most two decimals, given as a number (`12.5`) or a
 * decimal string (`"12.50"`); null for anything else (negative, NaN, Infinity, `1e-7`, `0.125`).
 * Numbers are read through their shortest decimal form, so `0.1 + 0.2` is refused rather than rounded.
 */
export function parseMoney(value: unknown): number | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value
  if (typeof text !== 'string') return null
  const match = DECIMAL.exec(text)
  if (!match) return null
  const minor = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
  return Number.isSafeInteger(minor) ? minor : null
}

/** `1250` → `"12.50"`. */
export const formatMoney = (minor: number): string => {
  const sign = minor < 0 ? '-' : ''
  const abs = Math.abs(minor)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/** `1250` → `12.5`: exact, since a two-decimal value is the nearest double to its decimal form. */
export const moneyNumber = (minor: number): number => Number(formatMoney(minor))
