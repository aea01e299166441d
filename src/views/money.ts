// Money as people read it, for the portal and the admin. `Intl.NumberFormat` takes decimal text as
// it is (ES2023's Intl.NumberFormat v3: Node 20, Bun, Deno), so the API's two-decimal strings are
// grouped and written exactly, never rounded through a float.

/** `format` of a decimal string, which the ES2022 library types do not list yet. */
type DecimalFormat = { format(value: string): string }

/** `amount` (the API's decimal text, or a number worked out on a page) written by `format`. */
export const decimalText = (format: Intl.NumberFormat, amount: string | number): string => (format as unknown as DecimalFormat).format(String(amount))
