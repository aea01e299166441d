import type { EventTransaction } from '../events/outbox.js'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import type { IntegrationRecord, LinkRecord, ProviderEventRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import {
  invalidSignature,
  paymentOf,
  type Buyer,
  type PaymentFacts,
  type ProviderPlan,
  type Referral,
  type SaleFacts,
  type VerifiedEvent,
} from '../integrations/contract.js'
import { PROVIDERS } from '../integrations/index.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { trusted } from './access.js'
import { conversionSteps, parseLead } from './conversions.js'
import { bindStripeCustomer, customerByExternalId, customerByStripeId } from './customers.js'
import { findLinkByCode } from './links.js'
import { promoCodeByCode, promoCodeByStripeId } from './promo-codes.js'
import { linkSale, saleOfPayment, settlePayment } from './provider-payments.js'
import { refundSaleIn } from './sale-refunds.js'
import { duplicateOf, readOnly, type Deps } from './shared.js'

// The events endpoint of an integration, one for every provider (SPEC wave 3, "Payment provider
// integrations (Stripe)"; wave 4, "Stripe as it sends events today" and "Payment providers beyond
// Stripe: one contract"): the provider's module (src/integrations) verifies the event and reads it
// into a plan; here each event is recorded once per integration in the same transaction as its
// effects, with the ids of the payment it concerns, so the events of one payment may come in any
// order (src/api/provider-payments.ts).

type Outcome = Pick<ProviderEventRecord, 'status' | 'reason' | 'commissionId'>

const ignored = (reason: string, commissionId: string | null = null): Outcome => ({ status: 'ignored', reason, commissionId })
const processed = (commissionId: string | null = null): Outcome => ({ status: 'processed', reason: null, commissionId })
/** A refund (or an invoice's payment) whose sale is not known yet: applied when the sale arrives (`settlePayment`). */
const waiting = (): Outcome => ({ status: 'waiting', reason: null, commissionId: null })
/** Written before the effects, replaced by their outcome in the same transaction: seen only on a record from before wave 4. */
const unfinished = (): Outcome => ({ status: 'failed', reason: 'unfinished', commissionId: null })

/**
 * How many times an event's transaction is tried when it breaks a unique constraint: the same
 * event at another instance, or its invoice, customer or payment in another event, committed first.
 * The next try finds that record or sale.
 */
const ATTEMPTS = 5

type Steps = ReturnType<typeof conversionSteps>

interface Context {
  deps: Deps
  steps: Steps
  integration: IntegrationRecord
}

/** The campaign of the link a click or code names, or of the promo code, in the workspace; null when there is none. */
async function referredCampaign(tx: StorageTransaction, workspaceId: string, referral: Referral): Promise<string | null> {
  if ('promoCode' in referral.by) return (await promoCodeByCode(tx, workspaceId, referral.by.promoCode))?.campaignId ?? null
  let link: LinkRecord | null | undefined
  if ('clickId' in referral.by) {
    const click = await tx.get('clicks', referral.by.clickId.toLowerCase())
    link = click && (await tx.get('links', click.linkId))
  } else {
    link = await findLinkByCode(tx, trusted, referral.by.referralCode)
  }
  return link && link.workspaceId === workspaceId ? link.campaignId : null
}

/** The first of the Stripe promotion codes (`promo_…`) that is one of the workspace's promo codes, as the referral its code makes; null when none is. */
async function promotionReferral(tx: StorageTransaction, workspaceId: string, promotionCodes: readonly string[]): Promise<Referral | null> {
  for (const id of promotionCodes) {
    const found = await promoCodeByStripeId(tx, workspaceId, id)
    if (found) return { by: { promoCode: found.code }, from: 'discount' }
  }
  return null
}

/**
 * A checkout or customer event: binds the Stripe customer to the known customer it names (by
 * `externalId`), else makes the lead of the click or code it names. A Stripe customer already bound
 * stays bound (the first attribution wins); either way its sales recorded before are attributed now.
 */
async function attributeIn(
  tx: EventTransaction,
  { deps, steps, integration }: Context,
  plan: Extract<ProviderPlan, { kind: 'attribute' }>,
): Promise<Outcome> {
  const { workspaceId, campaignId: onlyCampaign } = integration
  const stripeCustomerId = plan.stripeCustomerId
  if (stripeCustomerId === null) return ignored(plan.knownAs.length > 0 || plan.referral ? 'no_stripe_customer' : 'not_attributed')
  if (await customerByStripeId(tx, workspaceId, stripeCustomerId)) return ignored('already_attributed')
  for (const externalId of [...plan.knownAs, stripeCustomerId]) {
    const known = await customerByExternalId(tx, workspaceId, externalId)
    if (!known) continue
    if (known.stripeCustomerId !== null) return ignored('already_attributed')
    if (onlyCampaign !== null && known.campaignId !== onlyCampaign) return ignored('campaign_mismatch')
    await bindStripeCustomer(tx, trusted, deps.clock, known, stripeCustomerId, deps.disposableDomains)
    return processed()
  }
  // The metadata's click or code first, then a promo code the checkout's or customer's discount names, then `client_reference_id`.
  const referral =
    plan.referral?.from === 'metadata' ? plan.referral : ((await promotionReferral(tx, workspaceId, plan.promotionCodes)) ?? plan.referral)
  if (!referral) return ignored('not_attributed')
  const campaignId = await referredCampaign(tx, workspaceId, referral)
  // `client_reference_id` is often the host's own id of a user no one referred: no click or code is no refusal there.
  if (campaignId === null && referral.from === 'client_reference_id') return ignored('not_attributed')
  if (onlyCampaign !== null && campaignId !== null && campaignId !== onlyCampaign) return ignored('campaign_mismatch')
  if (!plan.email) return ignored('missing_email')
  const lead = parseLead({ workspaceId, externalId: plan.externalId, email: plan.email, stripeCustomerId, ...referral.by })
  await steps.leadIn(tx, trusted, lead, { at: plan.at ?? undefined })
  return processed()
}

/** The known customer among `knownAs` (the host's id first, then the provider's customer id); null when none is. */
async function knownCustomer(tx: StorageTransaction, workspaceId: string, knownAs: readonly string[]) {
  for (const externalId of knownAs) {
    const known = await customerByExternalId(tx, workspaceId, externalId)
    if (known) return known
  }
  return null
}

/**
 * A lead from a provider's customer and its custom data (Paddle's `customer.created|updated`): a
 * customer known by the ids it names stays as it is (the first attribution wins); else the click
 * or code its custom data names makes the lead.
 */
async function leadIn(
  tx: EventTransaction,
  { steps, integration }: Context,
  plan: Extract<ProviderPlan, { kind: 'lead' }>,
): Promise<Outcome> {
  const { workspaceId, campaignId: onlyCampaign } = integration
  if (await knownCustomer(tx, workspaceId, plan.knownAs)) return ignored('already_attributed')
  const referral = plan.referral
  if (!referral) return ignored('not_attributed')
  const campaignId = await referredCampaign(tx, workspaceId, referral)
  if (onlyCampaign !== null && campaignId !== null && campaignId !== onlyCampaign) return ignored('campaign_mismatch')
  if (!plan.email) return ignored('missing_email')
  const lead = parseLead({ workspaceId, externalId: plan.externalId, email: plan.email, ...referral.by })
  await steps.leadIn(tx, trusted, lead, { at: plan.at ?? undefined })
  return processed()
}

/**
 * Who a sale is of, in the words of the sales step: a Stripe customer's bound customer (else the
 * lead a promo code of the invoice's discounts makes; else none yet: the sale is kept, and
 * attributed when one is bound to it); or the known customer the
 * provider's ids name, else the click or code its custom data names (a new customer), else no one.
 * Null: the integration's campaign is not the customer's or the code's (`campaign_mismatch`).
 */
async function buyerOf(tx: EventTransaction, { steps, integration }: Context, buyer: Buyer, paidAt: string | null) {
  const { workspaceId, campaignId: onlyCampaign } = integration
  if (buyer.by === 'stripe_customer') {
    const { stripeCustomerId } = buyer
    const customer = stripeCustomerId === null ? null : await customerByStripeId(tx, workspaceId, stripeCustomerId)
    if (customer || stripeCustomerId === null || buyer.email === null) return { customer, stripeCustomerId }
    // An unbound Stripe customer whose invoice used one of the workspace's promo codes: the lead of that code, attributed when it paid.
    const referral = await promotionReferral(tx, workspaceId, buyer.promotionCodes)
    if (!referral || (await customerByExternalId(tx, workspaceId, stripeCustomerId))) return { customer, stripeCustomerId }
    const campaignId = await referredCampaign(tx, workspaceId, referral)
    if (onlyCampaign !== null && campaignId !== onlyCampaign) return null
    const lead = parseLead({ workspaceId, externalId: stripeCustomerId, email: buyer.email, stripeCustomerId, ...referral.by })
    await steps.leadIn(tx, trusted, lead, { at: paidAt ?? undefined })
    return { customer: await customerByStripeId(tx, workspaceId, stripeCustomerId), stripeCustomerId }
  }
  const known = await knownCustomer(tx, workspaceId, buyer.knownAs)
  if (known) return onlyCampaign !== null && known.campaignId !== onlyCampaign ? null : { customer: known }
  if (!buyer.referral) return { customer: null }
  const campaignId = await referredCampaign(tx, workspaceId, buyer.referral)
  if (onlyCampaign !== null && campaignId !== null && campaignId !== onlyCampaign) return null
  return { externalId: buyer.externalId, ...(buyer.email === null ? {} : { email: buyer.email }), ...buyer.referral.by }
}

/** A sale, straight into the sales step in minor units (no decimal string between). */
async function saleIn(tx: EventTransaction, context: Context, buyer: Buyer, facts: SaleFacts): Promise<Outcome> {
  const { deps, steps, integration } = context
  const { workspaceId } = integration
  const { clock } = deps
  // The invoice again, in another event: recorded, pointing at what the first made, and no second sale.
  const [first] = await tx.find('sales', { where: { workspaceId, invoiceId: facts.invoiceId }, limit: 1 })
  if (first) {
    await settlePayment(tx, clock, await linkSale(tx, clock, first, facts), null)
    return ignored('duplicate_invoice', first.commissionId)
  }
  const who = await buyerOf(tx, context, buyer, facts.paidAt)
  if (who === null) return ignored('campaign_mismatch')
  const { sale, answer } = await steps.recordSaleIn(tx, trusted, { workspaceId, ...who, ...facts, paidAt: facts.paidAt ?? undefined })
  await settlePayment(tx, clock, sale, answer.skipped)
  return answer.commission ? processed(answer.commission.commissionId) : ignored(answer.skipped ?? 'not_attributed')
}

/** Carries out `plan` in `tx` through the conversions' own steps: what the event log records. */
async function effectsIn(tx: EventTransaction, context: Context, plan: ProviderPlan): Promise<Outcome> {
  const { deps, integration } = context
  const { workspaceId } = integration
  const { clock } = deps
  switch (plan.kind) {
    case 'ignore':
      return ignored(plan.reason)
    case 'attribute':
      return attributeIn(tx, context, plan)
    case 'lead':
      return leadIn(tx, context, plan)
    case 'sale':
      return saleIn(tx, context, plan.buyer, plan.sale)
    case 'payment': {
      const [sale] = await tx.find('sales', { where: { workspaceId, invoiceId: plan.invoiceId }, limit: 1 })
      if (!sale) return waiting()
      const settled = await settlePayment(tx, clock, await linkSale(tx, clock, sale, plan), null)
      return processed(settled.commissionId)
    }
    case 'refund': {
      const sale = await saleOfPayment(tx, workspaceId, plan)
      if (!sale) {
        // Its sale may still come: every paid order makes one, and a Stripe customer's when a customer is bound to it; else no commission ever will.
        const comes =
          plan.waitsFor === 'sale' ||
          (plan.stripeCustomerId !== null && (await customerByStripeId(tx, workspaceId, plan.stripeCustomerId)) !== null)
        return comes ? waiting() : ignored('no_commission')
      }
      const settled = await settlePayment(tx, clock, await linkSale(tx, clock, sale, plan), null)
      if (settled.commissionId === null) return ignored('no_commission')
      return settled.refundedMinor > sale.refundedMinor
        ? processed(settled.commissionId)
        : ignored('nothing_refunded', settled.commissionId)
    }
    case 'refund_part': {
      const [sale] = await tx.find('sales', { where: { workspaceId, invoiceId: plan.invoiceId }, limit: 1 })
      const commission = sale?.commissionId ? await tx.get('commissions', sale.commissionId) : null
      if (!sale || !commission) return ignored('no_commission')
      const [seen] = await tx.find('saleRefunds', { where: { workspaceId, refundId: plan.refundId }, limit: 1 })
      if (seen) return ignored('already_refunded', commission.id)
      const left = sale.amountMinor - sale.refundedMinor
      if (left <= 0) return ignored('nothing_refunded', commission.id)
      await refundSaleIn(tx, clock, sale, commission, Math.min(plan.amountMinor, left), plan.refundId)
      return processed(commission.id)
    }
  }
}

/**
 * Runs `effects` and records the event with what they answer, in one transaction: an event already
 * recorded (and not `failed`) answers 200 and changes nothing. The record is written first, with
 * the payment `facts` the event names, so the effects of this event and of later ones find it. A
 * collision rolls it all back and it is tried again, up to `ATTEMPTS` times; then it is the
 * operations' 422 (`duplicate`).
 */
async function recordOnce(
  deps: Deps,
  integration: IntegrationRecord,
  event: VerifiedEvent,
  facts: PaymentFacts,
  effects: (tx: EventTransaction) => Promise<Outcome>,
): Promise<number> {
  const { storage, clock } = deps
  const eventId = typeof event.id === 'string' ? event.id : ''
  for (let attempt = 1; ; attempt++) {
    try {
      return await storage.transaction(async (tx) => {
        const [seen] = await tx.find('providerEvents', { where: { integrationId: integration.id, eventId }, limit: 1 })
        if (seen && seen.status !== 'failed') return 200
        const now = isoAt(clock)
        const id = seen?.id ?? newId()
        // Written before the effects (its outcome after them): another instance given this event collides here.
        if (seen) await tx.update('providerEvents', id, facts)
        else {
          await tx.insert('providerEvents', {
            id,
            workspaceId: integration.workspaceId,
            integrationId: integration.id,
            eventId,
            type: typeof event.type === 'string' ? event.type : '',
            ...unfinished(),
            ...facts,
            receivedAt: now,
            createdAt: now,
            updatedAt: now,
          })
        }
        const outcome = await effects(tx)
        await tx.update('providerEvents', id, { ...outcome, updatedAt: now })
        return 200
      })
    } catch (error) {
      if (!(error instanceof UniqueViolationError)) throw error
      if (attempt >= ATTEMPTS) throw duplicateOf(error)
    }
  }
}

/**
 * Receives one event for an integration: its provider verifies it, then it is recorded once with
 * its effects (see `recordOnce`). Answers the HTTP status to send: 200, and 500 only for a failure
 * of ours (the storage), so the provider delivers it again.
 */
export async function receiveProviderEvent(deps: Deps, integrationId: string, rawBody: string, headers: Headers): Promise<number> {
  const { storage, clock } = deps
  const integration = isUuid(integrationId)
    ? await storage.transaction((tx) => tx.get('integrations', integrationId.toLowerCase()), readOnly)
    : null
  if (!integration) {
    // The same work as a known one of the provider whose header came, so the answer says nothing about whether the id exists.
    const provider = Object.values(PROVIDERS).find((p) => headers.has(p.signatureHeader)) ?? PROVIDERS.stripe
    await provider.open(rawBody, headers, 'whsec_unknown', clock.now()).catch(() => undefined)
    throw invalidSignature()
  }
  const { event, plan: planOf } = await PROVIDERS[integration.provider].open(rawBody, headers, integration.signingSecret, clock.now())
  const plan = planOf(integration)
  // A click the redirect answered may still wait in its batch: the lead waits for it, outside the transaction.
  const referral =
    plan.kind === 'attribute' || plan.kind === 'lead'
      ? plan.referral
      : plan.kind === 'sale' && plan.buyer.by === 'custom_data'
        ? plan.buyer.referral
        : null
  if (referral && 'clickId' in referral.by) await deps.clickWritten?.(referral.by.clickId.toLowerCase())
  const context: Context = { deps, steps: conversionSteps(deps), integration }
  try {
    return await recordOnce(deps, integration, event, paymentOf(plan), (tx) => effectsIn(tx, context, plan))
  } catch (error) {
    // A refusal of ours (a click outside its window, an unknown code) would be refused again on each
    // of the provider's retries: its work is rolled back, and the event recorded ignored with the
    // refusal's code (and no payment facts, so no later event applies what was refused).
    if (error instanceof AffiliateError && error.status < 500) {
      return recordOnce(deps, integration, event, paymentOf({ kind: 'ignore', reason: error.code }), async () => ignored(error.code))
    }
    throw error
  }
}
