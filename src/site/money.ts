/// <reference lib="es2023.intl" />
// Money as people read it, for the portal and the admin, through one `Intl.NumberFormat` path.
// `Intl.NumberFormat` takes decimal text as it is (ES2023's Intl.NumberFormat v3: Node 20, Bun,
// Deno), so the API's two-decimal strings are grouped and written exactly, never rounded through a
// float.

// Made on first use: the first Intl.NumberFormat of a process loads ICU's number data (about 10 ms
// on Node 20), which a cold start answering /health never needs.
let twoDecimals: Intl.NumberFormat | undefined
const twoDecimalsFormat = (): Intl.NumberFormat =>
  (twoDecimals ??= new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }))
/** Currency code -> its format; only codes Intl knows are kept (a few hundred at most). */
const inCurrency = new Map<string, Intl.NumberFormat>()

function formatOf(currency: string): Intl.NumberFormat | null {
  let format = inCurrency.get(currency)
  if (format) return format
  try {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency })
  } catch {
    return null
  }
  inCurrency.set(currency, format)
  return format
}

// The API's amounts are decimal text ("12.50"), numbers written as text: what ES2023's `format` takes.
const written = (format: Intl.NumberFormat, amount: string | number): string => format.format(`${amount}` as `${number}`)

/** An amount without its currency, thousands grouped, two decimals (`10,020.00`): for columns that name theirs. */
export const amountText = (amount: string | number): string => written(twoDecimalsFormat(), amount)

/**
 * An amount with its currency: `'code'` after the figure (`10,020.00 USD`, the admin's tables),
 * `'symbol'` in the currency's own style (`$10,020.00`, the portal; a code Intl does not know is
 * written `10020.00 XYZ`).
 * @default display 'code'
 */
export function moneyText(amount: string | number, currency: string, display: 'code' | 'symbol' = 'code'): string {
  const format = display === 'symbol' ? formatOf(currency) : twoDecimalsFormat()
  if (!format) return `${String(amount)} ${currency}`
  return display === 'symbol' ? written(format, amount) : `${written(format, amount)} ${currency}`
}
