import type { EventStorage, EventTransaction } from '../events/outbox.js'
import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { toCommission } from '../domain/commission.js'
import { toCustomer, type Customer, type SaleRefundResult, type SaleResult } from '../domain/customer.js'
import type { FraudRule } from '../domain/fraud-rules.js'
import { parseMoney } from '../domain/money.js'
import type { AffiliateRecord, CustomerRecord, LinkRecord, PromoCodeRecord, SaleRecord } from '../domain/records.js'
import { AffiliateError, notFound, unprocessable, validationError } from '../errors.js'
import { ATTRIBUTIONS, conversionLead, conversionRefund, conversionSale } from '../schemas/conversions.js'
import { parseBody } from '../schemas/validate.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { requireWorkspace, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { clickedLink } from './commission-records.js'
import { customerByExternalId, insertCustomer } from './customers.js'
import { checkConversion, customersFromAddress } from './fraud-checks.js'
import { findLinkByCode } from './links.js'
import { promoCodeByCode } from './promo-codes.js'
import { claimSales, earnIn } from './sale-earnings.js'
import { refundSaleIn } from './sale-refunds.js'
import { answered, inTransaction, readOnly, type Answered, type Deps } from './shared.js'

export type ConversionLeadInput = Infer<typeof conversionLead.struct>
export type ConversionSaleInput = Infer<typeof conversionSale.struct>
export type ConversionRefundInput = Infer<typeof conversionRefund.struct>

/** Who brought a new customer: its affiliate, the link and click when it came through one, and the click's time. */
interface Attribution {
  affiliate: AffiliateRecord
  link: LinkRecord | null
  clickId: string | null
  /** When the click was made: the customer's attribution time when a click brought it. */
  clickedAt: string | null
  /** What the click tells the fraud rules, copied onto the customer it makes ('' and false without a click). */
  clickFacts: Pick<CustomerRecord, 'clickAddress' | 'clickDevice' | 'clickPaidAd'>
}

/**
 * The ways of naming who brought a customer that a request may give; a promo code comes found
 * (`promo`, see `usePromoCode`), since what an unknown one means depends on the caller.
 */
type AttributionInput = {
  clickId?: string | undefined
  referralCode?: string | undefined
  promo?: PromoCodeRecord | null | undefined
  affiliateId?: string | undefined
}

/**
 * The workspace's promo code a lead or sale names (any case), with one more use counted on it in
 * `tx`; null when the workspace has no such code (another workspace's codes are never found).
 */
async function usePromoCode(tx: StorageTransaction, workspaceId: string, code: string | undefined): Promise<PromoCodeRecord | null> {
  if (code === undefined) return null
  const found = await promoCodeByCode(tx, workspaceId, code)
  return found && (await tx.increment('promoCodes', found.id, { uses: 1 }))
}

/**
 * Who brought a new customer of `workspaceId`, from a click (checked against its campaign's
 * attribution window at `at`, or at the click when `at` is before it: 422 outside it), a referral
 * code, a promo code (found already) or an affiliate id; null when none is given.
 */
async function attribute(
  tx: StorageTransaction,
  access: Access,
  workspaceId: string,
  input: AttributionInput,
  at: string,
): Promise<Attribution | null> {
  let link: LinkRecord | null = null
  let clickedAt: string | null = null
  let clickFacts: Attribution['clickFacts'] = { clickAddress: '', clickDevice: '', clickPaidAd: false }
  if (input.clickId !== undefined) {
    const click = await tx.get('clicks', input.clickId.toLowerCase())
    clickedAt = click?.createdAt ?? null
    if (click) clickFacts = { clickAddress: click.address, clickDevice: click.device, clickPaidAd: click.paidAd }
    // A sale paid before its click is no refusal: it is the customer's, and earns nothing (`before_attribution`).
    const checkedAt = clickedAt !== null && at < clickedAt ? clickedAt : at
    link = await clickedLink(
      tx,
      access,
      { referralCode: input.referralCode, referredUser: '', amountMinor: 0, adminEarnedMinor: 0, status: 'pending' },
      input.clickId,
      checkedAt,
    )
  } else if (input.referralCode !== undefined) {
    link = await findLinkByCode(tx, access, input.referralCode)
    if (!link || link.workspaceId !== workspaceId) throw notFound('Link')
  }
  if (link && link.workspaceId !== workspaceId) throw unprocessable('The clickId belongs to another workspace', 'workspace_mismatch')
  const affiliateId = link?.affiliateId ?? input.promo?.affiliateId ?? input.affiliateId
  if (affiliateId === undefined) return null
  const affiliate = await findAffiliate(tx, access, affiliateId)
  if (affiliate.workspaceId !== workspaceId) throw unprocessable('The affiliate is not in this workspace', 'workspace_mismatch')
  return { affiliate, link, clickId: input.clickId?.toLowerCase() ?? null, clickedAt, clickFacts }
}

/**
 * Runs `work`; when it breaks one of `constraints` (a repeat that raced the first, or came after
 * it), or is refused, answers `replay()` instead. When there is nothing to replay, `work` runs once more (what it
 * collided with is now there to be found) before the violation is answered as a 422.
 */
async function orReplay<T>(
  storage: EventStorage,
  constraints: readonly string[],
  work: (tx: EventTransaction) => Promise<T>,
  replay: () => Promise<T | null>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await storage.transaction(work)
    } catch (error) {
      if (error instanceof UniqueViolationError && constraints.includes(error.constraint)) {
        const answer = await replay()
        if (answer !== null) return answer
        if (attempt < 2) continue
      }
      // A repeat is answered as the first was, even where it would now be refused (a click since expired).
      if (error instanceof AffiliateError) {
        const answer = await replay()
        if (answer !== null) return answer
      }
      return inTransaction(storage, () => Promise.reject(error))
    }
  }
}

/** The refusal of a lead a blocking fraud rule stopped: 422 with the rule's code (`fraud_<rule>`), which a provider's event is recorded `ignored` with. */
const FRAUD_REFUSALS: { [R in FraudRule]: [code: `fraud_${R}`, why: string] } = {
  self_referral: [
    'fraud_self_referral',
    "the customer is the affiliate (the affiliate's own e-mail, or the device the affiliate uses the portal from)",
  ],
  disposable_email: ['fraud_disposable_email', "the customer's e-mail is at a disposable-mail domain"],
  paid_ad_click: ['fraud_paid_ad_click', 'the click came from a paid ad'],
  address_burst: ['fraud_address_burst', 'more than 3 customers of this affiliate came from one address within 24 hours'],
  refund_rate: ['fraud_refund_rate', "over 30 % of this affiliate's sales of the last 90 days were refunded"],
}
const fraudBlocked = (rule: FraudRule): AffiliateError => {
  const [code, why] = FRAUD_REFUSALS[rule]
  return unprocessable(`The campaign's fraud rule ${rule} blocks this lead: ${why}`, code)
}

/** `POST /conversions/lead`'s body, parsed: exactly one of clickId, referralCode, promoCode and affiliateId (400 otherwise). */
export function parseLead(body: unknown, query: unknown = {}): ConversionLeadInput {
  const input = parseBody(conversionLead, body, query)
  const given = ATTRIBUTIONS.filter((name) => input[name] !== undefined)
  if (given.length > 1) {
    throw validationError([
      {
        type: 'field',
        msg: `${given[1]} cannot be given with ${given[0]}: give one of clickId, referralCode, promoCode or affiliateId`,
        path: given[1]!,
        location: 'body',
      },
    ])
  }
  return input
}

/** `POST /conversions/sale`'s body, parsed: a promoCode names the affiliate alone (not with a clickId or referralCode: 400). */
export function parseSale(body: unknown, query: unknown = {}): ConversionSaleInput {
  const input = parseBody(conversionSale, body, query)
  const other = input.clickId !== undefined ? 'clickId' : input.referralCode !== undefined ? 'referralCode' : null
  if (input.promoCode !== undefined && other !== null) {
    throw validationError([
      {
        type: 'field',
        msg: `promoCode cannot be given with ${other}: give one of clickId, referralCode or promoCode`,
        path: 'promoCode',
        location: 'body',
      },
    ])
  }
  return input
}

/** `POST /conversions/refund`'s body, parsed. */
export const parseRefund = (body: unknown, query: unknown = {}): ConversionRefundInput => parseBody(conversionRefund, body, query)

/**
 * A sale as the sale step takes it: money in minor units, straight from a provider or from
 * `POST /conversions/sale` (`saleStep`). The customer is found by `externalId` (else the e-mail) or
 * made from the click or code, unless the caller found it already (`customer`).
 */
export interface SaleStep {
  workspaceId: string
  /** The customer the caller found (a provider's sale of a bound Stripe customer), or null for none. */
  customer?: CustomerRecord | null | undefined
  externalId?: string | undefined
  email?: string | undefined
  clickId?: string | undefined
  referralCode?: string | undefined
  /**
   * A discount code the customer used, as typed (any case): a provider module passes the code it
   * finds in an event (a Stripe, Paddle or Lemon Squeezy discount's code), `POST /conversions/sale`
   * its `promoCode`. When it is one of the workspace's promo codes, the code's use is counted and a
   * customer the sale makes is attributed to its affiliate (a known customer stays whose it is: the
   * first attribution wins). Any other code (a discount no affiliate holds, another workspace's
   * code) attributes no one and refuses nothing.
   */
  promoCode?: string | undefined
  amountMinor: number
  /** ISO 4217, upper case. */
  currency: string
  invoiceId: string
  chargeId?: string | null | undefined
  paymentIntentId?: string | null | undefined
  subscriptionId?: string | null | undefined
  /** The Stripe customer that paid: kept on a sale of no customer yet, which binding it later attributes. */
  stripeCustomerId?: string | null | undefined
  /** ISO; default now. */
  paidAt?: string | undefined
}

/** `POST /conversions/sale`'s parsed body as a sale step: the decimal amount in minor units. */
export const saleStep = (input: ConversionSaleInput): SaleStep => ({
  ...input,
  workspaceId: input.workspaceId.toLowerCase(),
  amountMinor: parseMoney(input.amount)!,
  ...(input.paidAt === undefined ? {} : { paidAt: new Date(input.paidAt).toISOString() }),
})

/** When a Stripe (or other provider's) lead is attributed, when the event says so: see `leadIn`. */
export interface LeadOptions {
  /** The lead's time (ISO) when not now, e.g. when the checkout was opened; a click's time wins. */
  at?: string | undefined
}

/**
 * The work of a lead, a sale and a refund inside a transaction the caller gives, so a caller can
 * make it one with writes of its own (a Stripe event and its record in the event log). The input is
 * parsed (`parseLead`, `saleStep`, `parseRefund`), the caller may see its workspace, and a clickId
 * it names is written (`clickWritten`). A repeat collides on a unique constraint (the invoiceId, the
 * refundId, the externalId) and the transaction then fails: the operations below answer it with
 * the first answer, the Stripe events by what they find on the next try.
 */
export function conversionSteps({ clock, disposableDomains }: Pick<Deps, 'clock' | 'disposableDomains'>) {
  /** Finds or makes the sale's customer, applies the reward rules (`earnIn`), and writes the sale with its answer. */
  async function recordSaleIn(tx: EventTransaction, access: Access, input: SaleStep): Promise<{ sale: SaleRecord; answer: SaleResult }> {
    const workspaceId = input.workspaceId
    const now = isoAt(clock)
    const paidAt = input.paidAt ?? now
    let customer: CustomerRecord | null = input.customer ?? null
    const promo = await usePromoCode(tx, workspaceId, input.promoCode)
    if (input.customer === undefined) {
      // Without the host's own id, the e-mail is the customer's key (see docs/decisions.md).
      const externalId = input.externalId ?? input.email!.toLowerCase()
      customer = await customerByExternalId(tx, workspaceId, externalId)
      if (!customer) {
        const attribution = await attribute(
          tx,
          access,
          workspaceId,
          { clickId: input.clickId, referralCode: input.referralCode, promo },
          paidAt,
        )
        if (attribution) {
          customer = await insertCustomer(tx, clock, {
            workspaceId,
            campaignId: attribution.affiliate.campaignId,
            affiliateId: attribution.affiliate.id,
            linkId: attribution.link?.id ?? null,
            clickId: attribution.clickId,
            // A code named by the sale itself attributes it: the sale's time is the attribution's.
            attributedAt: attribution.clickedAt ?? paidAt,
            externalId,
            email: input.email ?? '',
            name: null,
            stripeCustomerId: null,
            ...attribution.clickFacts,
          })
        }
      }
    }
    const facts = {
      workspaceId,
      invoiceId: input.invoiceId,
      chargeId: input.chargeId ?? null,
      paymentIntentId: input.paymentIntentId ?? null,
      subscriptionId: input.subscriptionId ?? null,
      amountMinor: input.amountMinor,
      currency: input.currency,
      paidAt,
    }
    const earned = await earnIn(tx, access, clock, facts, customer, disposableDomains)
    const answer: SaleResult = {
      customer: earned.customer && toCustomer(earned.customer),
      commission: earned.commission && toCommission(earned.commission),
      skipped: earned.skipped,
    }
    // Written last, with its answer: a repeat collides here (a skipped sale) or on the commission's invoiceId.
    const sale: SaleRecord = {
      id: newId(),
      ...facts,
      stripeCustomerId: input.stripeCustomerId ?? earned.customer?.stripeCustomerId ?? null,
      customerId: earned.customer?.id ?? null,
      commissionId: earned.commission?.id ?? null,
      refundedMinor: 0,
      commissionMinor: earned.commission?.amountMinor ?? 0,
      commissionRefundedMinor: 0,
      answer: JSON.stringify(answer),
      createdAt: now,
      updatedAt: now,
    }
    await tx.insert('sales', sale)
    return { sale, answer }
  }

  return {
    /**
     * Makes the customer bound to whoever the input names, or answers the known one (200). A
     * Stripe customer it names is bound to it, and that Stripe customer's sales recorded before
     * are attributed now (`claimSales`).
     */
    async leadIn(tx: EventTransaction, access: Access, input: ConversionLeadInput, options: LeadOptions = {}): Promise<Answered<Customer>> {
      const workspaceId = input.workspaceId.toLowerCase()
      const existing = await customerByExternalId(tx, workspaceId, input.externalId)
      if (existing) return answered(toCustomer(existing), 200)
      const now = isoAt(clock)
      // A lead must name its affiliate: an unknown code (or another workspace's) is 404.
      const promo = await usePromoCode(tx, workspaceId, input.promoCode)
      if (input.promoCode !== undefined && !promo) throw notFound('Promo code')
      const attribution = (await attribute(tx, access, workspaceId, { ...input, promo }, now))!
      // The campaign's blocking fraud rules refuse the lead: no customer is bound to this affiliate.
      const campaign = (await tx.get('campaigns', attribution.affiliate.campaignId))!
      const clickAddressCount = await customersFromAddress(tx, attribution.affiliate.id, attribution.clickFacts.clickAddress, now)
      const { blockedBy } = await checkConversion(
        tx,
        disposableDomains,
        {
          campaign,
          affiliate: attribution.affiliate,
          customer: { email: input.email, ...attribution.clickFacts, clickAddressCount },
          at: now,
          now,
        },
        { lead: true },
      )
      if (blockedBy !== null) throw fraudBlocked(blockedBy)
      const customer = await insertCustomer(tx, clock, {
        workspaceId,
        campaignId: attribution.affiliate.campaignId,
        affiliateId: attribution.affiliate.id,
        linkId: attribution.link?.id ?? null,
        clickId: attribution.clickId,
        attributedAt: attribution.clickedAt ?? (options.at !== undefined && options.at < now ? options.at : now),
        externalId: input.externalId,
        email: input.email,
        name: input.name ?? null,
        stripeCustomerId: input.stripeCustomerId ?? null,
        ...attribution.clickFacts,
        clickAddressCount,
      })
      await claimSales(tx, access, clock, customer, disposableDomains)
      return answered(toCustomer((await tx.get('customers', customer.id))!), 201)
    },

    /** Finds or makes the customer, applies the reward rules, and writes the sale with its answer (201 with a commission). */
    async saleIn(tx: EventTransaction, access: Access, input: SaleStep): Promise<Answered<SaleResult>> {
      const { answer } = await recordSaleIn(tx, access, input)
      return answered(answer, answer.commission ? 201 : 200)
    },

    recordSaleIn,

    /** Takes the commission's share of a refund of its sale back, and writes the refund with its answer. */
    async refundIn(tx: EventTransaction, _access: Access, input: ConversionRefundInput): Promise<SaleRefundResult> {
      const sale = await refundedSale(tx, input)
      const current = sale?.commissionId ? await tx.get('commissions', sale.commissionId) : null
      if (!sale || !current) throw notFound('Commission for this sale')
      const refundMinor = input.amount === undefined ? sale.amountMinor - sale.refundedMinor : parseMoney(input.amount)!
      return refundSaleIn(tx, clock, sale, current, refundMinor, input.refundId ?? null)
    },
  }
}

/** The sale a refund names by `invoiceId` or `chargeId` (both: they must be one sale's, else 422). */
async function refundedSale(tx: StorageTransaction, input: ConversionRefundInput): Promise<SaleRecord | null> {
  const workspaceId = input.workspaceId.toLowerCase()
  const [sale] = await tx.find('sales', {
    where: input.invoiceId !== undefined ? { workspaceId, invoiceId: input.invoiceId } : { workspaceId, chargeId: input.chargeId! },
    limit: 1,
  })
  if (sale && input.invoiceId !== undefined && input.chargeId !== undefined && sale.chargeId !== input.chargeId) {
    throw unprocessable('The chargeId is not the charge of that invoiceId', 'attribution_mismatch')
  }
  return sale ?? null
}

export function conversionOperations(deps: Deps) {
  const { storage } = deps
  const { leadIn, saleIn, refundIn } = conversionSteps(deps)
  const storedAnswer = async <T extends object>(
    read: (tx: StorageTransaction) => Promise<{ answer: string } | null>,
  ): Promise<T | null> => {
    const found = await storage.transaction(read, readOnly)
    return found ? (JSON.parse(found.answer) as T) : null
  }
  /** The first answer of a sale with this `invoiceId`, answered again with 200. */
  const saleByInvoice = async (workspaceId: string, invoiceId: string) => {
    const first = await storedAnswer<SaleResult>(
      async (tx) => (await tx.find('sales', { where: { workspaceId, invoiceId }, limit: 1 }))[0] ?? null,
    )
    return first && answered(first, 200)
  }
  /** The first answer of a refund with this `refundId`: refused (422) when it was of another sale than `input` names. */
  const refundById = (input: ConversionRefundInput, refundId: string) =>
    storedAnswer<SaleRefundResult>(async (tx) => {
      const [first] = await tx.find('saleRefunds', { where: { workspaceId: input.workspaceId.toLowerCase(), refundId }, limit: 1 })
      if (!first) return null
      if ((await refundedSale(tx, input))?.id !== first.saleId)
        throw unprocessable('This refundId was already used for another sale', 'duplicate')
      return first
    })

  return {
    /**
     * A signup: makes the customer, bound to the affiliate the click, code or affiliate id names
     * (201), and counts it as a signup. An `externalId` already known answers that customer
     * unchanged (200): the first attribution wins.
     */
    async lead(access: Access, body: unknown, query: unknown = {}): Promise<Answered<Customer>> {
      const input = parseLead(body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      // A click the redirect answered may still wait in its batch: the lead waits for it.
      if (input.clickId !== undefined) await deps.clickWritten?.(input.clickId.toLowerCase())
      const known = async () => {
        const customer = await storage.transaction((tx) => customerByExternalId(tx, workspaceId, input.externalId), readOnly)
        return customer && answered(toCustomer(customer), 200)
      }
      return orReplay(storage, ['customers_workspace_external'], (tx) => leadIn(tx, access, input), known)
    },

    /**
     * A paid sale: finds its customer (by `externalId`, else the e-mail) or makes one from the click
     * or referral code, applies the campaign's reward rules (`reward`), and makes the commission
     * (201) or says why none was made (200). A repeat of an `invoiceId` answers the first answer (200).
     */
    async sale(access: Access, body: unknown, query: unknown = {}): Promise<Answered<SaleResult>> {
      const input = parseSale(body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      if (input.clickId !== undefined) await deps.clickWritten?.(input.clickId.toLowerCase())
      // No read first: the sale's insert collides with a repeat (one already stored, or racing), and then it is answered.
      return orReplay(
        storage,
        // The sale's own insert, or before it its commission's (the same invoiceId) or its new customer's.
        ['sales_workspace_invoice', 'commissions_workspace_invoice', 'customers_workspace_external'],
        (tx) => saleIn(tx, access, saleStep(input)),
        () => saleByInvoice(workspaceId, input.invoiceId),
      )
    },

    /**
     * A refund of a sale: takes back the commission's share of it (commission x refunded / sale, to
     * the cent, the last refund taking what is left) through the commission refund path (a clawback
     * when the commission was paid). A repeated `refundId` answers the first answer and changes nothing.
     */
    async refund(access: Access, body: unknown, query: unknown = {}): Promise<SaleRefundResult> {
      const input = parseRefund(body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      const replay = async () => (input.refundId === undefined ? null : refundById(input, input.refundId))
      // Read first too (refunds are rare): a repeat answers the first answer even where this one would fail (an unknown invoice).
      const first = await replay()
      if (first) return first
      return orReplay(storage, ['sale_refunds_workspace_refund'], (tx) => refundIn(tx, access, input), replay)
    },
  }
}
