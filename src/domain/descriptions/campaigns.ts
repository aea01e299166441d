import * as check from '../checks.js'
import { model } from '../describe.js'
import { DEFAULT_FRAUD_RULES, FRAUD_MODES, FRAUD_RULES, type FraudMode, type FraudRule } from '../fraud-rules.js'
import { bool, editable, int, list, money, required, stamps, text } from './fields.js'

/** Largest fixed amount, in currency units. Keeps every sum of minor units a safe integer. */
export const MAX_AMOUNT = 1_000_000_000

export const COMMISSION_TYPES = ['percentage', 'fixed'] as const

const PARAMETER = /^[A-Za-z0-9_.-]{1,64}$/

const urlParameters = check.check<string[]>(
  'urlParameters',
  { type: 'array', items: { type: 'string', pattern: PARAMETER.source }, minItems: 1, maxItems: 20, uniqueItems: true },
  (value) => {
    const ok =
      Array.isArray(value) &&
      value.length >= 1 &&
      value.length <= 20 &&
      value.every((item) => typeof item === 'string' && PARAMETER.test(item)) &&
      new Set(value).size === value.length
    return ok || 'must be a list of 1 to 20 distinct parameter names of letters, digits, _ . or -'
  },
)

const atLeastOne = check.check<number>(
  'atLeastOne',
  { type: 'integer', minimum: 1 },
  (value) => (Number.isSafeInteger(value) && (value as number) >= 1) || 'must be an integer of 1 or more',
)

/** A campaign's fraud rules as a request gives them: some of the rules, each `off`, `flag` or `block`. */
const fraudRules = check.check<Partial<Record<FraudRule, FraudMode>>>(
  'fraudRules',
  {
    type: 'object',
    properties: Object.fromEntries(FRAUD_RULES.map((rule) => [rule, { type: 'string', enum: [...FRAUD_MODES] }])),
    additionalProperties: false,
  },
  (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return 'must be an object of rules, each "off", "flag" or "block"'
    for (const [rule, mode] of Object.entries(value)) {
      if (!(FRAUD_RULES as readonly string[]).includes(rule))
        return `has an unknown rule "${rule}": the rules are ${FRAUD_RULES.join(', ')}`
      if (!(FRAUD_MODES as readonly unknown[]).includes(mode)) return `.${rule} must be "off", "flag" or "block"`
    }
    return true
  },
)

const reward = 'Reward'
const portal = 'Joining and the portal'

export const campaigns = model(
  {
    id: text(),
    campaignName: text({ searched: true, input: check.text(200, { min: 1 }), ...required, form: { label: 'Name', group: 'Campaign' } }),
    workspaceId: text({ indexed: true, input: check.uuid, create: 'required' }),
    commissionType: text({
      values: COMMISSION_TYPES,
      ...required,
      form: { label: 'Commission type', group: reward, options: { percentage: 'Percentage of each sale', fixed: 'Fixed amount per sale' } },
    }),
    /** Hundredths: a percentage of 12.5 is 1250, a fixed 10.00 is 1000. */
    amountMinor: money('amount', {
      description: 'A percentage (0 to 100) when `commissionType` is `percentage`, else an amount of money.',
      input: check.money(MAX_AMOUNT),
      ...required,
      form: { label: 'Amount', group: reward, hint: 'A percentage (0-100) or an amount with two decimals.' },
    }),
    minimumPayoutMinor: money('minimumPayoutAmount', {
      input: check.money(MAX_AMOUNT),
      ...editable,
      default: 0,
      form: { label: 'Minimum payout amount', group: reward },
    }),
    payoutId: text(),
    url: text({
      input: check.httpUrl,
      ...required,
      form: { label: 'Website URL', group: 'Campaign', control: 'url', hint: 'Where referral links send visitors.' },
    }),
    requiresApprovalToJoin: bool({ ...editable, default: false, form: { label: 'Applicants need approval', group: portal } }),
    collectAdditionalInfo: bool({ ...editable, default: false, form: { label: 'Ask applicants about themselves', group: portal } }),
    hideCustomerEmail: bool({ ...editable, default: false, form: { label: "Hide customers' e-mails from affiliates", group: portal } }),
    payoutTerm: int({
      description: 'Days.',
      input: check.integer(0, 3650),
      ...editable,
      default: 0,
      form: { label: 'Payout term (days)', group: reward },
    }),
    affiliatePortalWelcomeMessage: text({
      input: check.text(5000),
      ...editable,
      default: '',
      form: { label: 'Portal welcome message', group: portal, control: 'textarea' },
    }),
    affiliateDashboardText: text({
      input: check.text(5000),
      ...editable,
      default: '',
      form: { label: 'Portal dashboard text', group: portal, control: 'textarea' },
    }),
    stripeCouponId: text({ input: check.text(255), ...editable, default: '', form: { label: 'Stripe coupon ID', group: portal } }),
    allowedUrlParameters: list({
      input: urlParameters,
      ...editable,
      default: ['ref'],
      form: { label: 'Allowed URL parameters', group: portal, hint: 'Comma-separated, e.g. ref, via.' },
    }),
    beaconInstalled: bool({
      description:
        "The host's pages run the beacon: the portal offers affiliates each link's shareUrl (on the host's own site) before the redirect.",
      ...editable,
      default: false,
      form: {
        label: 'The beacon is installed on the website',
        group: portal,
        hint: 'Then the portal offers links on your own site (?via=CODE) first.',
      },
    }),
    isDefault: bool({ ...editable, default: false, form: { label: 'Default campaign of the workspace', group: portal } }),
    currency: text({
      description: 'ISO 4217 code of a two-decimal currency; fixed once the campaign has commissions.',
      input: check.currency,
      ...editable,
      default: 'USD',
      form: { label: 'Currency', group: reward, hint: 'ISO 4217 code, e.g. USD.' },
    }),
    attributionWindowDays: int({
      description: 'Days (1 to 365) a click may lead to a signup or sale it is credited with.',
      input: check.integer(1, 365),
      ...editable,
      default: 30,
      form: { label: 'Attribution window (days)', group: reward },
    }),
    recurringMonths: int({
      nullable: true,
      description:
        'Which paid sales of a customer earn: null every one, 0 only the first, N (up to 120) those paid before the first paid sale + N calendar months (UTC).',
      input: check.nullable(check.integer(0, 120)),
      ...editable,
      default: null,
      form: {
        label: 'Months a customer earns for',
        group: reward,
        hint: 'Empty: every paid sale earns; 0: only the first; N: those paid within N months of the first.',
      },
    }),
    maxCommissionsPerCustomer: int({
      nullable: true,
      description: "The most commissions one customer's sales earn (1 or more); null for no limit.",
      input: check.nullable(atLeastOne),
      ...editable,
      default: null,
      form: { label: 'Most commissions per customer', group: reward, hint: 'Empty for no limit.' },
    }),
    fraudRules: {
      kind: 'map',
      description:
        'Each fraud rule (self_referral, disposable_email, paid_ad_click, address_burst, refund_rate) as `off`, `flag` (the commission is held for review) or `block` (no commission). Rules a request leaves out take their default. See docs/fraud.md.',
      input: fraudRules,
      ...editable,
      default: JSON.stringify(DEFAULT_FRAUD_RULES),
      form: {
        label: 'Fraud rules',
        group: 'Fraud',
        control: 'textarea',
        hint: 'rule=mode pairs, mode off, flag or block, e.g. self_referral=block, disposable_email=flag, paid_ad_click=off, address_burst=flag, refund_rate=flag',
      },
    } as const,
    ...stamps,
  },
  {
    answers: { campaign: 'all' },
    list: { orderBy: ['createdAt', 'updatedAt', 'campaignName'] },
  },
)
