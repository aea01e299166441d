import { describe, expect, it } from 'vitest'
import { emailDomain, normaliseEmail } from '../../src/domain/email.js'
import {
  addressBurst,
  carriesAdClick,
  DEFAULT_FRAUD_RULES,
  disposableEmail,
  FRAUD_RULES,
  fraudRulesOf,
  judge,
  paidAdClick,
  refundRate,
  selfReferral,
  storedFraudRules,
  type FraudRule,
  type FraudRules,
} from '../../src/domain/fraud-rules.js'
import { disposableDomainsLoader } from '../../src/api/fraud-checks.js'

// The fraud rules (SPEC wave 4, "Fraud rules and the hold status") as pure functions: each firing
// and not firing at its boundary. test/api/fraud.test.ts drives them through leads and sales.

describe('normaliseEmail', () => {
  it.each([
    ['Ann@Example.com', 'ann@example.com'],
    ['  ann@example.com  ', 'ann@example.com'],
    ['ann+shop@example.com', 'ann@example.com'],
    ['ann+a+b@example.com', 'ann@example.com'],
    // Dots are Gmail's alone: elsewhere they name another mailbox.
    ['a.n.n@example.com', 'a.n.n@example.com'],
    ['a.n.n+1@gmail.com', 'ann@gmail.com'],
    ['A.N.N@GoogleMail.com', 'ann@gmail.com'],
    ['ann@gmail.com.', 'ann@gmail.com'],
    // A leading + is the whole local part, not a tag.
    ['+ann@example.com', '+ann@example.com'],
    ['no-at-sign', 'no-at-sign'],
    ['', ''],
  ])('%s -> %s', (given, expected) => {
    expect(normaliseEmail(given)).toBe(expected)
  })

  it('folds every spelling of one Gmail mailbox into one', () => {
    const spellings = ['me@gmail.com', 'Me+1@gmail.com', 'm.e@googlemail.com', 'M.E+affiliate@GMAIL.COM']
    expect(new Set(spellings.map(normaliseEmail))).toEqual(new Set(['me@gmail.com']))
  })

  it('takes the domain lower case without its trailing dot', () => {
    expect(emailDomain('x@Mailinator.COM.')).toBe('mailinator.com')
    expect(emailDomain('nothing')).toBe('')
  })
})

describe('self_referral', () => {
  const facts = { customerEmail: 'buyer@example.com', affiliateEmails: ['ann@gmail.com', ''], clickDevice: null, affiliateDevices: [] }

  it("fires on the affiliate's own e-mail in another spelling, or its payout e-mail", () => {
    expect(selfReferral({ ...facts, customerEmail: 'a.n.n+1@gmail.com' })).toBe(true)
    expect(selfReferral({ ...facts, customerEmail: 'ANN@googlemail.com' })).toBe(true)
    expect(selfReferral({ ...facts, customerEmail: 'pay@example.com', affiliateEmails: ['ann@gmail.com', 'Pay+x@example.com'] })).toBe(true)
  })

  it('does not fire on another person, nor on an empty e-mail against an empty payout e-mail', () => {
    expect(selfReferral(facts)).toBe(false)
    expect(selfReferral({ ...facts, customerEmail: 'ann2@gmail.com' })).toBe(false)
    expect(selfReferral({ ...facts, customerEmail: '' })).toBe(false)
    // Outside Gmail, dots name another mailbox.
    expect(selfReferral({ ...facts, customerEmail: 'a.nn@example.com', affiliateEmails: ['ann@example.com'] })).toBe(false)
  })

  it('fires when the click came from a device the affiliate used the portal from, and not from another', () => {
    expect(selfReferral({ ...facts, clickDevice: 'dev-1', affiliateDevices: ['dev-0', 'dev-1'] })).toBe(true)
    expect(selfReferral({ ...facts, clickDevice: 'dev-2', affiliateDevices: ['dev-0', 'dev-1'] })).toBe(false)
    // No address on the click: nothing to compare.
    expect(selfReferral({ ...facts, clickDevice: '', affiliateDevices: [''] })).toBe(false)
  })
})

describe('disposable_email', () => {
  it('fires on a listed domain, in any case, and not on others', async () => {
    const domains = await disposableDomainsLoader()()
    expect(domains.size).toBeGreaterThan(1000)
    expect(disposableEmail('someone@mailinator.com', domains)).toBe(true)
    expect(disposableEmail('Someone@MAILINATOR.com', domains)).toBe(true)
    expect(disposableEmail('someone@gmail.com', domains)).toBe(false)
    expect(disposableEmail('someone@example.com', new Set(['example.com']))).toBe(true)
    expect(disposableEmail('', domains)).toBe(false)
  })

  it('loads the list once per loader', async () => {
    const load = disposableDomainsLoader()
    expect(await load()).toBe(await load())
  })
})

describe('paid_ad_click', () => {
  it.each(['gclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'ttclid'])('fires on a landing url carrying %s', (name) => {
    expect(carriesAdClick(new URL(`https://shop.example.com/?via=ann&${name}=Cj0KCQ`).searchParams)).toBe(true)
  })

  it('does not fire without one, or with an empty one', () => {
    expect(carriesAdClick(new URL('https://shop.example.com/?via=ann&utm_source=google').searchParams)).toBe(false)
    expect(carriesAdClick(new URL('https://shop.example.com/?gclid=').searchParams)).toBe(false)
    expect(paidAdClick({ paidAd: true })).toBe(true)
    expect(paidAdClick({ paidAd: false })).toBe(false)
    expect(paidAdClick(null)).toBe(false)
  })
})

describe('address_burst', () => {
  it('fires at the fourth customer from one address, not the third', () => {
    expect(addressBurst(3)).toBe(false)
    expect(addressBurst(4)).toBe(true)
  })
})

describe('refund_rate', () => {
  it('fires above 30 % refunded, not at 29 %', () => {
    expect(refundRate({ sales: 100, refunded: 29 })).toBe(false)
    expect(refundRate({ sales: 100, refunded: 30 })).toBe(false)
    expect(refundRate({ sales: 100, refunded: 31 })).toBe(true)
  })

  it('needs 10 sales: 9 say too little', () => {
    expect(refundRate({ sales: 9, refunded: 9 })).toBe(false)
    expect(refundRate({ sales: 10, refunded: 4 })).toBe(true)
    expect(refundRate({ sales: 10, refunded: 3 })).toBe(false)
  })
})

describe('the verdict', () => {
  const every = (mode: 'off' | 'flag' | 'block'): FraudRules => Object.fromEntries(FRAUD_RULES.map((rule) => [rule, mode])) as FraudRules

  it('off: never asks; flag: holds with the rules in order; block: the first blocking rule wins', async () => {
    const asked: FraudRule[] = []
    const firing = (rule: FraudRule) => {
      asked.push(rule)
      return rule !== 'paid_ad_click'
    }
    expect(await judge(every('off'), firing)).toEqual({ blockedBy: null, holdReasons: [] })
    expect(asked).toEqual([])
    expect(await judge(every('flag'), firing)).toEqual({
      blockedBy: null,
      holdReasons: ['self_referral', 'disposable_email', 'address_burst', 'refund_rate'],
    })
    asked.length = 0
    expect(await judge({ ...every('flag'), address_burst: 'block' }, firing)).toEqual({ blockedBy: 'address_burst', holdReasons: [] })
    // Rules after the blocking one are not asked (their facts are not gathered).
    expect(asked).toEqual(['self_referral', 'disposable_email', 'paid_ad_click', 'address_burst'])
  })

  it('a campaign setting fills what it leaves out with the defaults, and ignores what it does not know', () => {
    expect(fraudRulesOf('{}')).toEqual(DEFAULT_FRAUD_RULES)
    expect(fraudRulesOf({ paid_ad_click: 'block' })).toEqual({ ...DEFAULT_FRAUD_RULES, paid_ad_click: 'block' })
    expect(fraudRulesOf('{"self_referral":"maybe","other":"block"}')).toEqual(DEFAULT_FRAUD_RULES)
    expect(fraudRulesOf('not json')).toEqual(DEFAULT_FRAUD_RULES)
    expect(JSON.parse(storedFraudRules({ refund_rate: 'off' }))).toEqual({ ...DEFAULT_FRAUD_RULES, refund_rate: 'off' })
    expect(DEFAULT_FRAUD_RULES).toEqual({
      self_referral: 'block',
      disposable_email: 'flag',
      paid_ad_click: 'off',
      address_burst: 'flag',
      refund_rate: 'flag',
    })
  })
})
