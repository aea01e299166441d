import {
  ADDRESS_BURST_LIMIT,
  ADDRESS_BURST_WINDOW_MS,
  addressBurst,
  disposableEmail,
  fraudRulesOf,
  judge,
  paidAdClick,
  REFUND_RATE_WINDOW_DAYS,
  refundRate,
  selfReferral,
  type FraudRule,
  type FraudRules,
  type FraudVerdict,
} from '../domain/fraud-rules.js'
import { DAY_MS } from '../domain/due.js'
import type { AffiliateRecord, CampaignRecord } from '../domain/records.js'
import { dayRowId, levelKey, seriesKey } from '../reports/rollup.js'
import type { StorageTransaction } from '../storage/types.js'

// The fraud rules applied to a conversion (SPEC wave 4, "Fraud rules and the hold status"): the
// facts each rule of src/domain/fraud-rules.ts needs, gathered in the conversion's transaction,
// each only when its rule is on (and no earlier rule blocked). Every lead and every sale, from the
// API and from every provider, comes through here: from `leadIn` and `earnIn`.

/** The disposable e-mail domains, loaded on first use (`disposableDomainsLoader`). */
export type DisposableDomains = () => Promise<ReadonlySet<string>>

/**
 * Loads the disposable-domain list of the `disposable-email-domains-js` package (CC0, updated
 * monthly: upgrading the package updates the list) with its first call, once: a service that never
 * checks an e-mail, and every cold start, goes without it. One loader per service.
 */
export function disposableDomainsLoader(): DisposableDomains {
  let loaded: Promise<ReadonlySet<string>> | undefined
  return () =>
    (loaded ??= import('disposable-email-domains-js')
      .then((module) => {
        // A CommonJS package: its functions are named exports under Node, or only on `default` elsewhere.
        const list = module.disposableEmailBlocklist ?? module.default?.disposableEmailBlocklist
        if (typeof list !== 'function') throw new Error('disposable-email-domains-js has no disposableEmailBlocklist()')
        return new Set(list().map((domain) => domain.trim().toLowerCase()))
      })
      .catch((error: unknown) => {
        loaded = undefined
        throw error
      }))
}

/** The customer a conversion is of, as the rules see it (a lead's is not stored yet). */
export interface ConvertingCustomer {
  email: string
  /** What its click told (src/tracking/visitor.ts): its device hashed ('' when no click, or no address), and whether it came from a paid ad. */
  clickDevice: string
  clickPaidAd: boolean
  /** Its affiliate's customers from its click's address within the burst window, itself included (`customersFromAddress`). */
  clickAddressCount: number
}

export interface Conversion {
  campaign: CampaignRecord
  affiliate: AffiliateRecord
  customer: ConvertingCustomer
  /** When the conversion happens (ISO): a sale's `paidAt`, a lead's now. The refund rate looks back from it. */
  at: string
  /** The service's clock now (ISO). */
  now: string
}

/**
 * How many of the affiliate's customers came from `clickAddress` (a hash; '' for none: 0) within the
 * burst window up to `at`, counting one more for the customer about to be made; counted up to one
 * over the limit (enough to decide). Worked out once, when a customer is made (`clickAddressCount`).
 */
export async function customersFromAddress(tx: StorageTransaction, affiliateId: string, clickAddress: string, at: string): Promise<number> {
  if (clickAddress === '') return 0
  const found = await tx.select('customers', ['id'], {
    where: { affiliateId, clickAddress, createdAt: { gte: new Date(Date.parse(at) - ADDRESS_BURST_WINDOW_MS).toISOString(), lte: at } },
    limit: ADDRESS_BURST_LIMIT + 1,
  })
  return found.length + 1
}

/**
 * The affiliate's sales and how many of them were refunded in full, over the UTC days of the last
 * `REFUND_RATE_WINDOW_DAYS` up to `at`'s day: from the report rollups' day rows, never from the
 * commissions. The days before `at`'s day are read once a day and kept on the affiliate
 * (`refundWindow`, when `at` is `now`'s day: a sale dated in the past reads them each time); then a
 * sale reads only its own day's row. A write changing those earlier days' figures empties what is
 * kept (`forgetRefundWindow` in src/reports/rollup.ts).
 */
export async function refundHistory(
  tx: StorageTransaction,
  affiliate: Pick<AffiliateRecord, 'workspaceId' | 'id' | 'refundWindow'>,
  at: string,
  now: string,
): Promise<{ sales: number; refunded: number }> {
  const today = Math.floor(Date.parse(at) / DAY_MS)
  const day = new Date(today * DAY_MS).toISOString()
  const dayText = day.slice(0, 10)
  const prefix = levelKey(affiliate.workspaceId, '', affiliate.id)
  const own = await tx.get('rollups', dayRowId(prefix, dayText))
  let sales = own?.saleCount ?? 0
  let refunded = own?.refundedCount ?? 0
  const [keptDay, keptSales, keptRefunded] = affiliate.refundWindow
  if (keptDay === dayText) return { sales: sales + Number(keptSales), refunded: refunded + Number(keptRefunded) }
  const first = new Date((today - REFUND_RATE_WINDOW_DAYS + 1) * DAY_MS).toISOString()
  const rows = await tx.select('rollups', ['saleCount', 'refundedCount'], {
    where: { seriesKey: { in: monthsBetween(first, day).map((month) => seriesKey(prefix, month)) }, hourStart: { gte: first, lt: day } },
  })
  let earlierSales = 0
  let earlierRefunded = 0
  for (const row of rows) {
    earlierSales += row.saleCount
    earlierRefunded += row.refundedCount
  }
  if (now.slice(0, 10) === dayText)
    await tx.update('affiliates', affiliate.id, { refundWindow: [dayText, String(earlierSales), String(earlierRefunded)] })
  sales += earlierSales
  refunded += earlierRefunded
  return { sales, refunded }
}

/** The UTC months (`YYYY-MM`) from `first`'s to `last`'s (ISO instants), in order. */
function monthsBetween(first: string, last: string): string[] {
  const out: string[] = []
  const date = new Date(`${first.slice(0, 7)}-01T00:00:00.000Z`)
  const end = last.slice(0, 7)
  for (let month = first.slice(0, 7); month <= end; month = date.toISOString().slice(0, 7)) {
    out.push(month)
    date.setUTCMonth(date.getUTCMonth() + 1)
  }
  return out
}

/** Whether `rule` fires on `conversion`: its facts gathered, then its pure function asked. */
async function fires(
  tx: StorageTransaction,
  disposableDomains: DisposableDomains,
  rule: FraudRule,
  conversion: Conversion,
): Promise<boolean> {
  const { affiliate, customer } = conversion
  switch (rule) {
    case 'self_referral':
      return selfReferral({
        customerEmail: customer.email,
        affiliateEmails: [affiliate.email, affiliate.payoutEmail],
        clickDevice: customer.clickDevice,
        affiliateDevices: affiliate.portalDevices,
      })
    case 'disposable_email':
      return customer.email !== '' && disposableEmail(customer.email, await disposableDomains())
    case 'paid_ad_click':
      return paidAdClick({ paidAd: customer.clickPaidAd })
    case 'address_burst':
      return addressBurst(customer.clickAddressCount)
    case 'refund_rate':
      return refundRate(await refundHistory(tx, affiliate, conversion.at, conversion.now))
  }
}

/** The campaign's rules with every `flag` turned `off`: what a lead checks (a lead makes no commission to hold). */
const blockingOnly = (rules: FraudRules): FraudRules =>
  Object.fromEntries(Object.entries(rules).map(([rule, mode]) => [rule, mode === 'block' ? 'block' : 'off'])) as FraudRules

/**
 * The campaign's fraud rules applied to `conversion` in `tx`: the first blocking rule that fires,
 * and the flagging ones that fire. A lead (`lead: true`) checks only the blocking rules.
 */
export function checkConversion(
  tx: StorageTransaction,
  disposableDomains: DisposableDomains,
  conversion: Conversion,
  { lead = false } = {},
): Promise<FraudVerdict> {
  const rules = fraudRulesOf(conversion.campaign.fraudRules)
  return judge(lead ? blockingOnly(rules) : rules, (rule) => fires(tx, disposableDomains, rule, conversion))
}
