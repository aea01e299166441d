import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import type { IntegrationRecord, ProviderEventRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import { invalidSignature, paymentOf, planStripeEvent, verifyStripeEvent, type Referral, type StripeEvent, type StripePlan } from '../integrations/stripe.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { trusted } from './access.js'
import { conversionSteps, parseLead } from './conversions.js'
import { bindStripeCustomer, customerByExternalId, customerByStripeId } from './customers.js'
import { findLinkByCode } from './links.js'
import { linkSale, saleOfPayment, settlePayment } from './provider-payments.js'
import { duplicateOf, readOnly, type Deps } from './shared.js'

// The events endpoint of an integration (SPEC wave 3, "Payment provider integrations (Stripe)";
// wave 4, "Stripe as it sends events today"): each event is recorded once per integration in the
// same transaction as its effects, with the ids of the payment it concerns, so the events of one
// payment may come in any order (src/api/provider-payments.ts).

type Outcome = Pick<ProviderEventRecord, 'status' | 'reason' | 'commissionId'>
type Facts = ReturnType<typeof paymentOf>

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

/** The campaign of the link a click or code names in the workspace; null when there is none. */
async function referredCampaign(tx: StorageTransaction, workspaceId: string, referral: Referral): Promise<string | null> {
  let link
  if ('clickId' in referral.by) {
    const click = await tx.get('clicks', referral.by.clickId.toLowerCase())
    link = click && (await tx.get('links', click.linkId))
  } else {
    link = await findLinkByCode(tx, trusted, referral.by.referralCode)
  }
  return link && link.workspaceId === workspaceId ? link.campaignId : null
}

/**
 * A checkout or customer event: binds the Stripe customer to the known customer it names (by
 * `externalId`), else makes the lead of the click or code it names. A Stripe customer already bound
 * stays bound (the first attribution wins); either way its sales recorded before are attributed now.
 */
async function attributeIn(tx: StorageTransaction, { deps, steps, integration }: Context, plan: Extract<StripePlan, { kind: 'attribute' }>): Promise<Outcome> {
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
  const referral = plan.referral
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

/** Carries out `plan` in `tx` through the conversions' own steps: what the event log records. */
async function effectsIn(tx: StorageTransaction, context: Context, plan: StripePlan): Promise<Outcome> {
  const { deps, steps, integration } = context
  const { workspaceId } = integration
  const { clock } = deps
  switch (plan.kind) {
    case 'ignore':
      return ignored(plan.reason)
    case 'attribute':
      return attributeIn(tx, context, plan)
    case 'sale': {
      // The invoice again, in another event: recorded, pointing at what the first made, and no second sale.
      const [first] = await tx.find('sales', { where: { workspaceId, invoiceId: plan.sale.invoiceId }, limit: 1 })
      if (first) {
        await settlePayment(tx, clock, await linkSale(tx, clock, first, plan.sale), null)
        return ignored('duplicate_invoice', first.commissionId)
      }
      // A Stripe customer bound to no customer yet: the sale is kept, and attributed when one is bound to it.
      const customer = plan.stripeCustomerId === null ? null : await customerByStripeId(tx, workspaceId, plan.stripeCustomerId)
      const { sale, answer } = await steps.recordSaleIn(tx, trusted, {
        workspaceId,
        customer,
        stripeCustomerId: plan.stripeCustomerId,
        ...plan.sale,
        paidAt: plan.sale.paidAt ?? undefined,
      })
      await settlePayment(tx, clock, sale, answer.skipped)
      return answer.commission ? processed(answer.commission.commissionId) : ignored(answer.skipped ?? 'not_attributed')
    }
    case 'payment': {
      const [sale] = await tx.find('sales', { where: { workspaceId, invoiceId: plan.invoiceId }, limit: 1 })
      if (!sale) return waiting()
      const settled = await settlePayment(tx, clock, await linkSale(tx, clock, sale, plan), null)
      return processed(settled.commissionId)
    }
    case 'refund': {
      const sale = await saleOfPayment(tx, workspaceId, plan)
      if (!sale) {
        // Its sale may still come when a customer is bound to the Stripe customer; else no commission ever will.
        const bound = plan.stripeCustomerId !== null && (await customerByStripeId(tx, workspaceId, plan.stripeCustomerId)) !== null
        return bound ? waiting() : ignored('no_commission')
      }
      const settled = await settlePayment(tx, clock, await linkSale(tx, clock, sale, plan), null)
      if (settled.commissionId === null) return ignored('no_commission')
      return settled.refundedMinor > sale.refundedMinor ? processed(settled.commissionId) : ignored('nothing_refunded', settled.commissionId)
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
async function recordOnce(deps: Deps, integration: IntegrationRecord, event: StripeEvent, facts: Facts, effects: (tx: StorageTransaction) => Promise<Outcome>): Promise<number> {
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
            id, workspaceId: integration.workspaceId, integrationId: integration.id, eventId, type: typeof event.type === 'string' ? event.type : '',
            ...unfinished(), ...facts, receivedAt: now, createdAt: now, updatedAt: now,
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
 * Receives one Stripe event for an integration: verifies it, then records it once with its effects
 * (see `recordOnce`). Answers the HTTP status to send: 200, and 500 only for a failure of ours (the
 * storage), so Stripe delivers it again.
 */
export async function receiveStripeEvent(deps: Deps, integrationId: string, rawBody: string, signature: string | null): Promise<number> {
  const { storage, clock } = deps
  const integration = isUuid(integrationId)
    ? await storage.transaction((tx) => tx.get('integrations', integrationId.toLowerCase()), readOnly)
    : null
  if (!integration) {
    // The same work as a known one, so the answer says nothing about whether the id exists.
    await verifyStripeEvent(rawBody, signature, 'whsec_unknown', clock.now()).catch(() => undefined)
    throw invalidSignature()
  }
  const event = await verifyStripeEvent(rawBody, signature, integration.signingSecret, clock.now())
  const plan = planStripeEvent(event, integration.livemode)
  // A click the redirect answered may still wait in its batch: the lead waits for it, outside the transaction.
  const referral = plan.kind === 'attribute' ? plan.referral : null
  if (referral && 'clickId' in referral.by) await deps.clickWritten?.(referral.by.clickId.toLowerCase())
  const context: Context = { deps, steps: conversionSteps(deps), integration }
  try {
    return await recordOnce(deps, integration, event, paymentOf(plan), (tx) => effectsIn(tx, context, plan))
  } catch (error) {
    // A refusal of ours (a click outside its window, an unknown code) would be refused again on each
    // of Stripe's retries: its work is rolled back, and the event recorded ignored with the refusal's
    // code (and no payment facts, so no later event applies what was refused).
    if (error instanceof AffiliateError && error.status < 500) {
      return recordOnce(deps, integration, event, paymentOf({ kind: 'ignore', reason: error.code }), async () => ignored(error.code))
    }
    throw error
  }
}
