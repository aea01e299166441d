import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { toCommission } from '../domain/commission.js'
import { toCustomer, type Customer, type SaleRefundResult, type SaleResult } from '../domain/customer.js'
import { parseMoney } from '../domain/money.js'
import type { AffiliateRecord, CommissionRecord, CustomerRecord, LinkRecord, SaleRecord } from '../domain/records.js'
import { refundableMinor } from '../domain/refund.js'
import { afterSale, refundShare, reward } from '../domain/reward.js'
import { AffiliateError, notFound, unprocessable, validationError } from '../errors.js'
import { announce, emitChange } from '../events/outbox.js'
import { ATTRIBUTIONS, conversionLead, conversionRefund, conversionSale } from '../schemas/conversions.js'
import { parseBody } from '../schemas/validate.js'
import { UniqueViolationError, type Storage, type StorageTransaction } from '../storage/types.js'
import { requireWorkspace, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { clickedLink, insertCommission, refundCommission } from './commission-records.js'
import { customerByExternalId, insertCustomer } from './customers.js'
import { findLinkByCode } from './links.js'
import { inTransaction, readOnly, withStatus, type Deps } from './shared.js'

export type ConversionLeadInput = Infer<typeof conversionLead.struct>
export type ConversionSaleInput = Infer<typeof conversionSale.struct>
export type ConversionRefundInput = Infer<typeof conversionRefund.struct>

/** Who brought a new customer: its affiliate, and the link and click when it came through one. */
interface Attribution {
  affiliate: AffiliateRecord
  link: LinkRecord | null
  clickId: string | null
}

/** The ways of naming who brought a customer that a request may give. */
type AttributionInput = { clickId?: string | undefined; referralCode?: string | undefined; affiliateId?: string | undefined }

/**
 * Who brought a new customer of `workspaceId`, from a click (checked against its campaign's
 * attribution window at `at`: 422 outside it), a referral code or an affiliate id; null when none is given.
 */
async function attribute(tx: StorageTransaction, access: Access, workspaceId: string, input: AttributionInput, at: string): Promise<Attribution | null> {
  let link: LinkRecord | null = null
  if (input.clickId !== undefined) {
    link = await clickedLink(tx, access, { referralCode: input.referralCode, referredUser: '', amountMinor: 0, adminEarnedMinor: 0, status: 'pending' }, input.clickId, at)
  } else if (input.referralCode !== undefined) {
    link = await findLinkByCode(tx, access, input.referralCode)
    if (!link || link.workspaceId !== workspaceId) throw notFound('Link')
  }
  if (link && link.workspaceId !== workspaceId) throw unprocessable('The clickId belongs to another workspace', 'workspace_mismatch')
  const affiliateId = link?.affiliateId ?? input.affiliateId
  if (affiliateId === undefined) return null
  const affiliate = await findAffiliate(tx, access, affiliateId)
  if (affiliate.workspaceId !== workspaceId) throw unprocessable('The affiliate is not in this workspace', 'workspace_mismatch')
  return { affiliate, link, clickId: input.clickId?.toLowerCase() ?? null }
}

/**
 * Runs `work`; when it breaks one of `constraints` (a repeat that raced the first, or came after
 * it), or is refused, answers `replay()` instead. When there is nothing to replay, `work` runs once more (what it
 * collided with is now there to be found) before the violation is answered as a 422.
 */
async function orReplay<T>(storage: Storage, constraints: readonly string[], work: (tx: StorageTransaction) => Promise<T>, replay: () => Promise<T | null>): Promise<T> {
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

/** `POST /conversions/lead`'s body, parsed: exactly one of clickId, referralCode and affiliateId (400 otherwise). */
export function parseLead(body: unknown, query: unknown = {}): ConversionLeadInput {
  const input = parseBody(conversionLead, body, query)
  const given = ATTRIBUTIONS.filter((name) => input[name] !== undefined)
  if (given.length > 1) {
    throw validationError([{ type: 'field', msg: `${given[1]} cannot be given with ${given[0]}: give one of clickId, referralCode or affiliateId`, path: given[1]!, location: 'body' }])
  }
  return input
}

/** `POST /conversions/sale`'s body, parsed. */
export const parseSale = (body: unknown, query: unknown = {}): ConversionSaleInput => parseBody(conversionSale, body, query)

/** `POST /conversions/refund`'s body, parsed. */
export const parseRefund = (body: unknown, query: unknown = {}): ConversionRefundInput => parseBody(conversionRefund, body, query)

/**
 * The work of a lead, a sale and a refund inside a transaction the caller gives, so a caller can
 * make it one with writes of its own (a Stripe event and its record in the event log). The input is
 * parsed (`parseLead`, `parseSale`, `parseRefund`), the caller may see its workspace, and a clickId
 * it names is written (`clickWritten`). A repeat collides on a unique constraint (the invoiceId, the
 * refundId, the externalId) and the transaction then fails: the operations below answer it with
 * the first answer, the Stripe events by what they find on the next try.
 */
export function conversionSteps({ clock }: Pick<Deps, 'clock'>) {
  return {
    /** Makes the customer bound to whoever the input names, or answers the known one (200). */
    async leadIn(tx: StorageTransaction, access: Access, input: ConversionLeadInput): Promise<Customer> {
      const workspaceId = input.workspaceId.toLowerCase()
      const existing = await customerByExternalId(tx, workspaceId, input.externalId)
      if (existing) return withStatus(toCustomer(existing), 200)
      const attribution = (await attribute(tx, access, workspaceId, input, isoAt(clock)))!
      const customer = await insertCustomer(tx, clock, {
        workspaceId,
        campaignId: attribution.affiliate.campaignId,
        affiliateId: attribution.affiliate.id,
        linkId: attribution.link?.id ?? null,
        clickId: attribution.clickId,
        externalId: input.externalId,
        email: input.email,
        name: input.name ?? null,
        stripeCustomerId: input.stripeCustomerId ?? null,
      })
      return toCustomer(customer)
    },

    /** Finds or makes the customer, applies the reward rules, and writes the sale with its answer (201 with a commission). */
    async saleIn(tx: StorageTransaction, access: Access, input: ConversionSaleInput): Promise<SaleResult> {
      const workspaceId = input.workspaceId.toLowerCase()
      const amountMinor = parseMoney(input.amount)!
      // Without the host's own id, the e-mail is the customer's key (see docs/decisions.md).
      const externalId = input.externalId ?? input.email!.toLowerCase()
      const now = isoAt(clock)
      const paidAt = input.paidAt === undefined ? now : new Date(input.paidAt).toISOString()
      let customer: CustomerRecord | null = await customerByExternalId(tx, workspaceId, externalId)
      if (!customer) {
        const attribution = await attribute(tx, access, workspaceId, { clickId: input.clickId, referralCode: input.referralCode }, paidAt)
        if (attribution) {
          customer = await insertCustomer(tx, clock, {
            workspaceId,
            campaignId: attribution.affiliate.campaignId,
            affiliateId: attribution.affiliate.id,
            linkId: attribution.link?.id ?? null,
            clickId: attribution.clickId,
            externalId,
            email: input.email ?? '',
            name: null,
            stripeCustomerId: null,
          })
        }
      }
      const affiliate = customer && (await tx.get('affiliates', customer.affiliateId))
      const campaign = affiliate && (await tx.get('campaigns', affiliate.campaignId))
      const outcome = reward(campaign, affiliate, customer, { amountMinor, currency: input.currency, paidAt })
      let commission: CommissionRecord | null = null
      if (outcome.type === 'commission') {
        const link = customer!.linkId === null ? null : await tx.get('links', customer!.linkId)
        commission = await insertCommission(tx, access, clock, {
          affiliateId: affiliate!.id,
          workspaceId,
          known: { affiliate: affiliate!, campaign: campaign!, link: link?.affiliateId === affiliate!.id ? link : null },
          referredUser: customer!.email,
          amountMinor: outcome.commissionMinor,
          adminEarnedMinor: outcome.adminEarnedMinor,
          status: 'pending',
          commissionDate: paidAt,
          invoiceId: input.invoiceId,
          chargeId: input.chargeId ?? null,
          stripeSubscriptionId: input.subscriptionId ?? null,
        })
        await announce(tx, clock, 'commission.created', toCommission(commission))
      }
      if (customer) {
        customer = (await tx.update('customers', customer.id, { ...afterSale(customer, paidAt, commission !== null), updatedAt: now }))!
      }
      const answer: SaleResult = {
        customer: customer && toCustomer(customer),
        commission: commission && toCommission(commission),
        skipped: outcome.type === 'skipped' ? outcome.reason : null,
      }
      // Written last, with its answer: a repeat collides here (a skipped sale) or on the commission's invoiceId.
      const sale: SaleRecord = {
        id: newId(),
        workspaceId,
        invoiceId: input.invoiceId,
        chargeId: input.chargeId ?? null,
        customerId: customer?.id ?? null,
        commissionId: commission?.id ?? null,
        currency: input.currency,
        amountMinor,
        refundedMinor: 0,
        commissionMinor: commission?.amountMinor ?? 0,
        commissionRefundedMinor: 0,
        paidAt,
        answer: JSON.stringify(answer),
        createdAt: now,
        updatedAt: now,
      }
      await tx.insert('sales', sale)
      return withStatus(answer, commission ? 201 : 200)
    },

    /** Takes the commission's share of a refund of its sale back, and writes the refund with its answer. */
    async refundIn(tx: StorageTransaction, access: Access, input: ConversionRefundInput): Promise<SaleRefundResult> {
      const workspaceId = input.workspaceId.toLowerCase()
      const now = isoAt(clock)
      const [sale] = await tx.find('sales', {
        where: input.invoiceId !== undefined ? { workspaceId, invoiceId: input.invoiceId } : { workspaceId, chargeId: input.chargeId! },
        limit: 1,
      })
      if (sale && input.invoiceId !== undefined && input.chargeId !== undefined && sale.chargeId !== input.chargeId) {
        throw unprocessable('The chargeId is not the charge of that invoiceId', 'attribution_mismatch')
      }
      const current = sale?.commissionId ? await tx.get('commissions', sale.commissionId) : null
      if (!sale || !current) throw notFound('Commission for this sale')
      const left = sale.amountMinor - sale.refundedMinor
      const refundMinor = input.amount === undefined ? left : parseMoney(input.amount)!
      // Written before anything is checked: a repeat racing this one collides here and answers what this one answers.
      const refundRecord = { id: newId(), workspaceId, saleId: sale.id, refundId: input.refundId ?? null, amountMinor: refundMinor, commissionMinor: 0, answer: '', createdAt: now, updatedAt: now }
      await tx.insert('saleRefunds', refundRecord)
      if (left === 0) throw unprocessable('This sale is already refunded in full', 'refund_refused')
      if (refundMinor > left) throw unprocessable(`The refund amount is more than what is left of the sale (${left} minor units)`, 'refund_refused')
      // Its share, but never more than the commission still holds (the host may have refunded it by hand).
      const share = Math.min(refundShare(sale, refundMinor), current.status === 'refunded' ? 0 : refundableMinor(current))
      let commission = current
      let clawback: CommissionRecord | null = null
      if (share > 0) {
        commission = await refundCommission(tx, clock, current, share)
        await emitChange(tx, clock, 'commission.refunded', current, commission, toCommission(commission))
        if (current.status === 'paid') {
          const [made] = await tx.find('commissions', {
            where: { affiliateId: current.affiliateId, reversesCommissionId: current.id, amountMinor: -share, createdAt: now },
            limit: 1,
          })
          clawback = made ?? null
        }
      }
      await tx.update('sales', sale.id, {
        refundedMinor: sale.refundedMinor + refundMinor,
        commissionRefundedMinor: sale.commissionRefundedMinor + Math.max(share, 0),
        updatedAt: now,
      })
      const answer: SaleRefundResult = { commission: toCommission(commission), clawback: clawback && toCommission(clawback) }
      await tx.update('saleRefunds', refundRecord.id, { commissionMinor: Math.max(share, 0), answer: JSON.stringify(answer) })
      return answer
    },
  }
}

export function conversionOperations(deps: Deps) {
  const { storage } = deps
  const { leadIn, saleIn, refundIn } = conversionSteps(deps)
  const storedAnswer = async <T extends object>(read: (tx: StorageTransaction) => Promise<{ answer: string } | null>): Promise<T | null> => {
    const found = await storage.transaction(read, readOnly)
    return found ? withStatus(JSON.parse(found.answer) as T, 200) : null
  }
  const saleByInvoice = (workspaceId: string, invoiceId: string) =>
    storedAnswer<SaleResult>(async (tx) => (await tx.find('sales', { where: { workspaceId, invoiceId }, limit: 1 }))[0] ?? null)
  const refundById = (workspaceId: string, refundId: string) =>
    storedAnswer<SaleRefundResult>(async (tx) => (await tx.find('saleRefunds', { where: { workspaceId, refundId }, limit: 1 }))[0] ?? null)

  return {
    /**
     * A signup: makes the customer, bound to the affiliate the click, code or affiliate id names
     * (201), and counts it as a signup. An `externalId` already known answers that customer
     * unchanged (200): the first attribution wins.
     */
    async lead(access: Access, body: unknown, query: unknown = {}): Promise<Customer> {
      const input = parseLead(body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      // A click the redirect answered may still wait in its batch: the lead waits for it.
      if (input.clickId !== undefined) await deps.clickWritten?.(input.clickId.toLowerCase())
      const known = async () => {
        const customer = await storage.transaction((tx) => customerByExternalId(tx, workspaceId, input.externalId), readOnly)
        return customer && withStatus(toCustomer(customer), 200)
      }
      return orReplay(storage, ['customers_workspace_external'], (tx) => leadIn(tx, access, input), known)
    },

    /**
     * A paid sale: finds its customer (by `externalId`, else the e-mail) or makes one from the click
     * or referral code, applies the campaign's reward rules (`reward`), and makes the commission
     * (201) or says why none was made (200). A repeat of an `invoiceId` answers the first answer (200).
     */
    async sale(access: Access, body: unknown, query: unknown = {}): Promise<SaleResult> {
      const input = parseSale(body, query)
      const workspaceId = input.workspaceId.toLowerCase()
      requireWorkspace(access, workspaceId)
      if (input.clickId !== undefined) await deps.clickWritten?.(input.clickId.toLowerCase())
      // No read first: the sale's insert collides with a repeat (one already stored, or racing), and then it is answered.
      return orReplay(
        storage,
        // The sale's own insert, or before it its commission's (the same invoiceId) or its new customer's.
        ['sales_workspace_invoice', 'commissions_workspace_invoice', 'customers_workspace_external'],
        (tx) => saleIn(tx, access, input),
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
      const replay = async () => (input.refundId === undefined ? null : refundById(workspaceId, input.refundId))
      // Read first too (refunds are rare): a repeat answers the first answer even where this one would fail (an unknown invoice).
      const first = await replay()
      if (first) return first
      return orReplay(storage, ['sale_refunds_workspace_refund'], (tx) => refundIn(tx, access, input), replay)
    },
  }
}
