import { describe, expect, it } from 'vitest'
import { amountText, moneyText } from '../../src/site/money.js'

// The pages' one way to write money: Intl.NumberFormat, handed the API's decimal text as it is.

describe('money on pages', () => {
  it('groups thousands and keeps two decimals, with the code after the figure', () => {
    expect(amountText('10020.5')).toBe('10,020.50')
    expect(amountText(0)).toBe('0.00')
    expect(moneyText('999999999.99', 'USD')).toBe('999,999,999.99 USD')
    expect(moneyText('-12.30', 'EUR')).toBe('-12.30 EUR')
  })

  it('writes decimal text exactly, beyond what a double holds', () => {
    // 2^53 + 1.01: a float would write ...993.00 or round the cents away.
    expect(amountText('9007199254740993.01')).toBe('9,007,199,254,740,993.01')
    expect(moneyText('9007199254740993.01', 'USD', 'symbol')).toBe('$9,007,199,254,740,993.01')
  })

  it('writes a currency in its own style, and a code Intl refuses as it came', () => {
    expect(moneyText('10020.00', 'USD', 'symbol')).toBe('$10,020.00')
    expect(moneyText('49.5', 'EUR', 'symbol')).toBe('€49.50')
    expect(moneyText('1250', 'JPY', 'symbol')).toBe('¥1,250')
    expect(moneyText('12.50', 'US', 'symbol')).toBe('12.50 US')
    // The same format again (kept per currency), the same text.
    expect(moneyText('10020.00', 'USD', 'symbol')).toBe('$10,020.00')
  })
})
