// The fraud rules (SPEC wave 4, "Fraud rules and the hold status"), each a pure function over what
// a conversion already knows: the customer's e-mail, its click, its affiliate and that affiliate's
// recent history. src/api/fraud-checks.ts gathers those facts in the conversion's transaction;
// docs/fraud.md says why each rule exists and how to tune it.

import { emailDomain, normaliseEmail } from './email.js'

export const FRAUD_RULES = ['self_referral', 'disposable_email', 'paid_ad_click', 'address_burst', 'refund_rate'] as const
export type FraudRule = (typeof FRAUD_RULES)[number]

/** `off`: not checked; `flag`: the commission is made `hold` for review; `block`: no commission (`fraud_<rule>`). */
export const FRAUD_MODES = ['off', 'flag', 'block'] as const
export type FraudMode = (typeof FRAUD_MODES)[number]

export type FraudRules = Record<FraudRule, FraudMode>

/** What a campaign checks when it says nothing else. */
export const DEFAULT_FRAUD_RULES: Readonly<FraudRules> = Object.freeze({
  self_referral: 'block',
  disposable_email: 'flag',
  paid_ad_click: 'off',
  address_burst: 'flag',
  refund_rate: 'flag',
})

/** The skip reason of a sale a blocking rule stopped (`fraud_self_referral`, ...). */
export type FraudSkipReason = `fraud_${FraudRule}`
export const fraudSkipReason = (rule: FraudRule): FraudSkipReason => `fraud_${rule}`
export const FRAUD_SKIP_REASONS: readonly FraudSkipReason[] = FRAUD_RULES.map(fraudSkipReason)

/** A campaign's setting as stored (JSON text): every rule, those it leaves out at their default. */
export function fraudRulesOf(stored: string | Partial<Record<string, string>>): FraudRules {
  let given: unknown = stored
  if (typeof stored === 'string') {
    try {
      given = JSON.parse(stored)
    } catch {
      given = {}
    }
  }
  const out: FraudRules = { ...DEFAULT_FRAUD_RULES }
  if (typeof given === 'object' && given !== null) {
    for (const rule of FRAUD_RULES) {
      const mode = (given as Record<string, unknown>)[rule]
      if (typeof mode === 'string' && (FRAUD_MODES as readonly string[]).includes(mode)) out[rule] = mode as FraudMode
    }
  }
  return out
}

/** The JSON text a campaign stores for `rules` (every rule named, in rule order). */
export const storedFraudRules = (rules: Partial<Record<string, string>>): string => JSON.stringify(fraudRulesOf(rules))

// ---- self_referral ----------------------------------------------------------------------------

/** What self-referral compares: the customer and the affiliate, by e-mail and by visitor. */
export interface SelfReferralFacts {
  customerEmail: string
  /** The affiliate's e-mail and its payout e-mail ('' when none). */
  affiliateEmails: readonly string[]
  /** The device hash of the click that brought the customer (under its day's salt); null without one. */
  clickDevice: string | null
  /** The device hashes of the affiliate's own portal visits (each under its day's salt). */
  affiliateDevices: readonly string[]
}

/**
 * Fires when the customer's e-mail is the affiliate's after normalising (`normaliseEmail`), or the
 * click that brought the customer came from a device the affiliate used the portal from that day.
 */
export function selfReferral(f: SelfReferralFacts): boolean {
  if (f.customerEmail !== '') {
    const customer = normaliseEmail(f.customerEmail)
    if (f.affiliateEmails.some((email) => email !== '' && normaliseEmail(email) === customer)) return true
  }
  return f.clickDevice !== null && f.clickDevice !== '' && f.affiliateDevices.includes(f.clickDevice)
}

// ---- disposable_email -------------------------------------------------------------------------

/** Fires when the customer's e-mail domain is on `disposableDomains` (a maintained list: src/fraud/disposable.ts). */
export function disposableEmail(customerEmail: string, disposableDomains: ReadonlySet<string>): boolean {
  const domain = emailDomain(customerEmail)
  return domain !== '' && disposableDomains.has(domain)
}

// ---- paid_ad_click ----------------------------------------------------------------------------

/** The click ids ad networks add to landing urls: Google (gclid, gbraid, wbraid), Meta, Microsoft, TikTok. */
export const AD_CLICK_PARAMETERS = ['gclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'ttclid'] as const

/** Whether a landing url's query carries an ad network's click id (a non-empty value). */
export function carriesAdClick(params: URLSearchParams): boolean {
  return AD_CLICK_PARAMETERS.some((name) => (params.get(name) ?? '') !== '')
}

/** Fires when the click that brought the customer landed from a paid ad (`carriesAdClick` when it was made). */
export const paidAdClick = (click: { paidAd: boolean } | null): boolean => click !== null && click.paidAd

// ---- address_burst ----------------------------------------------------------------------------

/** More than this many customers of one affiliate from one address within the window fire the rule. */
export const ADDRESS_BURST_LIMIT = 3
export const ADDRESS_BURST_WINDOW_MS = 24 * 3_600_000

/**
 * Fires when the customer is one of more than `ADDRESS_BURST_LIMIT` customers of its affiliate
 * whose clicks came from one client address (hashed) within `ADDRESS_BURST_WINDOW_MS`: `customers`
 * counts them, this one included.
 */
export const addressBurst = (customers: number): boolean => customers > ADDRESS_BURST_LIMIT

// ---- refund_rate ------------------------------------------------------------------------------

export const REFUND_RATE_WINDOW_DAYS = 90
/** The share (percent) of refunded sales above which the rule fires. */
export const REFUND_RATE_PERCENT = 30
/** Fewer sales than this in the window say too little: the rule does not fire. */
export const REFUND_RATE_MIN_SALES = 10

/**
 * Fires when, of the affiliate's sales over the last `REFUND_RATE_WINDOW_DAYS` days (at least
 * `REFUND_RATE_MIN_SALES`), more than `REFUND_RATE_PERCENT` % were refunded: exact, in integers.
 */
export function refundRate(history: { sales: number; refunded: number }): boolean {
  return history.sales >= REFUND_RATE_MIN_SALES && history.refunded * 100 > REFUND_RATE_PERCENT * history.sales
}

// ---- the verdict ------------------------------------------------------------------------------

/** What the rules decided about one conversion. */
export interface FraudVerdict {
  /** The first rule (in rule order) set to `block` that fired; null when none did. */
  blockedBy: FraudRule | null
  /** The rules set to `flag` that fired, in rule order: the commission's `holdReasons`. */
  holdReasons: FraudRule[]
}

/**
 * The verdict of `rules` on a conversion: `fired(rule)` is asked only for rules that are not `off`,
 * in rule order, and not at all after a blocking rule fired (so a caller may gather each rule's facts
 * only when it is asked).
 */
export async function judge(rules: FraudRules, fired: (rule: FraudRule) => boolean | Promise<boolean>): Promise<FraudVerdict> {
  const holdReasons: FraudRule[] = []
  for (const rule of FRAUD_RULES) {
    const mode = rules[rule]
    if (mode === 'off' || !(await fired(rule))) continue
    if (mode === 'block') return { blockedBy: rule, holdReasons: [] }
    holdReasons.push(rule)
  }
  return { blockedBy: null, holdReasons }
}
