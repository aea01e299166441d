import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { COMMISSION_STATUSES, earnedMinor, reviewError, reviewMoveError, statusChangeError } from '../../src/domain/commission-status.js'
import { generateReferralCode, REFERRAL_CODE, referralUrl } from '../../src/domain/link.js'
import { formatMoney, moneyNumber, parseMoney } from '../../src/domain/money.js'
import type { CommissionStatus } from '../../src/domain/records.js'

describe('parseMoney', () => {
  it.each([
    [0, 0],
    [-0, 0],
    [0.1, 10],
    [0.01, 1],
    [12.5, 1250],
    [100, 100_00],
    [1_000_000_000, 100_000_000_000],
    ['0', 0],
    ['0.00', 0],
    ['0.1', 10],
    ['0.10', 10],
    ['12.5', 1250],
    ['12.50', 1250],
    ['90071992547409.91', Number.MAX_SAFE_INTEGER],
  ])('reads %j as %d minor units', (input, minor) => {
    expect(parseMoney(input)).toBe(minor)
  })

  it.each([
    ['negative number', -1],
    ['negative cent', -0.01],
    ['negative string', '-1.00'],
    ['string minus zero', '-0'],
    ['three decimals', 0.125],
    ['three decimal string', '1.005'],
    ['float sum that is not two-decimal', 0.1 + 0.2],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['"NaN"', 'NaN'],
    ['"Infinity"', 'Infinity'],
    ['exponent number', 1e21],
    ['tiny exponent number', 1e-7],
    ['exponent string', '1e3'],
    ['leading zero', '012'],
    ['double zero', '00'],
    ['trailing dot', '12.'],
    ['leading dot', '.5'],
    ['leading space', ' 1'],
    ['trailing space', '1 '],
    ['plus sign', '+1'],
    ['comma', '1,50'],
    ['hex', '0x10'],
    ['empty string', ''],
    ['16 integer digits', '1000000000000000'],
    ['one cent past the safe integers', '90071992547409.92'],
    ['15 integer digits past the safe integers', '99999999999999.99'],
    ['beyond safe integer', Number.MAX_SAFE_INTEGER],
    ['null', null],
    ['undefined', undefined],
    ['boolean', true],
    ['object', { amount: 1 }],
    ['array', [1]],
    ['bigint', 1n],
  ])('refuses %s', (_name, input) => {
    expect(parseMoney(input)).toBeNull()
  })

  it('answers a safe integer whenever it answers at all', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.string(), fc.integer()), (value) => {
        const minor = parseMoney(value)
        return minor === null || (Number.isSafeInteger(minor) && minor >= 0)
      }),
    )
  })

  it('reads every two-decimal amount exactly, as number and as string', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000_000_000 }), (minor) => {
        const text = formatMoney(minor)
        expect(parseMoney(text)).toBe(minor)
        expect(parseMoney(Number(text))).toBe(minor)
        expect(parseMoney(moneyNumber(minor))).toBe(minor)
      }),
    )
  })
})

describe('formatMoney', () => {
  it.each([
    [0, '0.00'],
    [1, '0.01'],
    [5, '0.05'],
    [10, '0.10'],
    [99, '0.99'],
    [100, '1.00'],
    [1250, '12.50'],
    [123456, '1234.56'],
    [100_000_000_000, '1000000000.00'],
    [-5, '-0.05'],
    [-150, '-1.50'],
  ])('writes %d as %s', (minor, text) => {
    expect(formatMoney(minor)).toBe(text)
  })

  it('always writes exactly two decimals', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (minor) => {
        expect(formatMoney(minor)).toMatch(/^-?(0|[1-9]\d*)\.\d{2}$/)
      }),
    )
  })
})

describe('moneyNumber', () => {
  it.each([
    [0, 0],
    [1, 0.01],
    [10, 0.1],
    [1250, 12.5],
    [1999, 19.99],
    [-1050, -10.5],
  ])('turns %d into %d', (minor, value) => {
    expect(moneyNumber(minor)).toBe(value)
  })

  it('is the double nearest to the decimal form, so sums of cents never drift', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 50 }), (cents) => {
        const total = cents.reduce((sum, c) => sum + c, 0)
        expect(moneyNumber(total)).toBe(Number(formatMoney(total)))
        expect(Math.round(moneyNumber(total) * 100)).toBe(total)
      }),
    )
  })
})

describe('commission status machine', () => {
  const allowed: Record<CommissionStatus, CommissionStatus[]> = {
    pending: ['processing', 'paid', 'refunded'],
    processing: ['paid', 'refunded', 'pending'],
    paid: ['refunded'],
    refunded: [],
    // Review's moves (the release and void routes); PUT refuses them (reviewMoveError).
    hold: ['pending', 'voided'],
    voided: [],
  }
  const pairs = COMMISSION_STATUSES.flatMap((from) => COMMISSION_STATUSES.map((to) => [from, to] as const))

  it('knows exactly the six statuses', () => {
    expect([...COMMISSION_STATUSES].sort()).toEqual(['hold', 'paid', 'pending', 'processing', 'refunded', 'voided'])
    expect(pairs).toHaveLength(36)
  })

  it('leaves a held or voided commission to review: PUT may not move it, nor put one there', () => {
    expect(reviewMoveError('hold', 'pending')).toMatch(/POST \/commissions\/release/)
    expect(reviewMoveError('hold', 'voided')).toMatch(/POST \/commissions\/void/)
    expect(reviewMoveError('voided', 'pending')).toBe('A voided commission is final: its status cannot change')
    expect(reviewMoveError('hold', 'hold')).toBeNull()
    expect(reviewMoveError('pending', 'paid')).toBeNull()
    expect(reviewError('hold', 'release')).toBeNull()
    expect(reviewError('pending', 'void')).toBe('Only a held commission can be voided; this one is pending')
    expect(reviewError('voided', 'release')).toBe('Only a held commission can be released; this one is voided')
  })

  it.each(pairs)('%s -> %s', (from, to) => {
    const error = statusChangeError(from, to)
    if (from === to || allowed[from].includes(to)) {
      expect(error).toBeNull()
    } else {
      expect(error).toBe(`Cannot change status from ${from} to ${to}`)
    }
  })

  it('counts every sale but refunded ones as earned, less what was refunded after payment; never a clawback', () => {
    const sale = (status: 'pending' | 'processing' | 'paid' | 'refunded', refundedMinor = 0) => ({
      kind: 'sale' as const,
      status,
      amountMinor: 1250,
      refundedMinor,
    })
    expect(earnedMinor(sale('pending'))).toBe(1250)
    expect(earnedMinor(sale('processing'))).toBe(1250)
    expect(earnedMinor(sale('paid'))).toBe(1250)
    // Held for review: not earned until released; voided: never.
    expect(earnedMinor({ kind: 'sale', status: 'hold', amountMinor: 1250, refundedMinor: 0 })).toBe(0)
    expect(earnedMinor({ kind: 'sale', status: 'voided', amountMinor: 1250, refundedMinor: 0 })).toBe(0)
    expect(earnedMinor(sale('paid', 250))).toBe(1000)
    expect(earnedMinor(sale('refunded'))).toBe(0)
    expect(earnedMinor(sale('refunded', 1250))).toBe(0)
    expect(earnedMinor({ kind: 'clawback', status: 'pending', amountMinor: -250, refundedMinor: 0 })).toBe(0)
    expect(earnedMinor({ kind: 'clawback', status: 'paid', amountMinor: -250, refundedMinor: 0 })).toBe(0)
  })
})

describe('referralUrl', () => {
  it('appends the parameter to a bare url', () => {
    expect(referralUrl('https://shop.example.com/landing', 'ref', 'REF-ABCD1234')).toBe('https://shop.example.com/landing?ref=REF-ABCD1234')
  })

  it('keeps the existing query and fragment', () => {
    expect(referralUrl('https://shop.example.com/p?utm_source=x&a=1#pricing', 'via', 'abc')).toBe(
      'https://shop.example.com/p?utm_source=x&a=1&via=abc#pricing',
    )
  })

  it('replaces a parameter of the same name instead of doubling it', () => {
    const url = new URL(referralUrl('https://shop.example.com/?ref=old&x=1', 'ref', 'new-code'))
    expect(url.searchParams.getAll('ref')).toEqual(['new-code'])
    expect(url.searchParams.get('x')).toBe('1')
  })

  it('adds a path to a bare origin and keeps a port', () => {
    expect(referralUrl('http://localhost:8080', 'ref', 'abc')).toBe('http://localhost:8080/?ref=abc')
  })

  it('round-trips every valid code and parameter through URLSearchParams', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{3,64}$/), fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/), (code, parameter) => {
        const url = new URL(referralUrl('https://shop.example.com/a?keep=1#frag', parameter, code))
        expect(url.searchParams.get(parameter)).toBe(code)
        expect(url.hash).toBe('#frag')
        expect(url.pathname).toBe('/a')
        if (parameter !== 'keep') expect(url.searchParams.get('keep')).toBe('1')
      }),
    )
  })
})

describe('generateReferralCode', () => {
  it('draws REF- and 8 characters of [A-Z0-9], valid as a supplied code too', () => {
    for (let i = 0; i < 200; i++) {
      const code = generateReferralCode()
      expect(code).toMatch(/^REF-[A-Z0-9]{8}$/)
      expect(code).toMatch(REFERRAL_CODE)
    }
  })

  it('draws different codes and uses the whole alphabet', () => {
    const codes = Array.from({ length: 500 }, generateReferralCode)
    expect(new Set(codes).size).toBe(codes.length)
    const seen = new Set(codes.flatMap((code) => [...code.slice(4)]))
    // 4000 draws from 36 symbols: missing one has probability below 1e-40.
    expect(seen.size).toBe(36)
  })
})

describe('REFERRAL_CODE', () => {
  it.each(['abc', 'A_b-9', 'x'.repeat(64)])('accepts %s', (code) => expect(REFERRAL_CODE.test(code)).toBe(true))
  it.each(['ab', 'x'.repeat(65), 'has space', 'dot.ted', 'sl/ash', 'émoji', '', 'a\nbc'])('refuses %j', (code) =>
    expect(REFERRAL_CODE.test(code)).toBe(false),
  )
})

describe('text that cannot be stored faithfully', () => {
  it('is refused in any text field and e-mail with 400, naming the field', async () => {
    const { setup, campaignInput } = await import('../support/helpers.js')
    const { call } = setup()
    for (const bad of ['a\u0000b', 'x\ud800', '\udc00y', 'bell\u0007']) {
      const campaign = await call('POST', '/campaigns', { body: campaignInput({ campaignName: bad }) })
      expect(campaign.status).toBe(400)
      expect(campaign.body.errors).toEqual([
        {
          type: 'field',
          msg: 'campaignName must not hold control characters or unpaired surrogates',
          path: 'campaignName',
          location: 'body',
        },
      ])
    }
    for (const bad of ['a%00b', 'bell%07']) {
      expect((await call('GET', `/affiliates/list?contains=${bad}`)).status).toBe(400)
    }
    const email = await call('POST', '/affiliates', {
      body: { email: 'a\u0000b@example.com', campaignId: '99999999-9999-4999-8999-999999999999' },
    })
    expect(email.body.errors).toEqual([{ type: 'field', msg: 'email must be a valid e-mail address', path: 'email', location: 'body' }])
    for (const fine of ['tab\there', 'line\nbreak', 'emoji 😀', 'Zoë']) {
      expect((await call('POST', '/campaigns', { body: campaignInput({ campaignName: fine }) })).status).toBe(201)
    }
  })
})
