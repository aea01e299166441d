import { customersFromAddress, type DisposableDomains } from './fraud-checks.js'
import type { Infer } from 'superstruct'
import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import { toCustomer, type Customer } from '../domain/customer.js'
import { customers } from '../domain/descriptions/customers.js'
import type { CommissionRecord, CustomerRecord } from '../domain/records.js'
import { unprocessable } from '../errors.js'
import { announce, type EventTransaction } from '../events/outbox.js'
import { customerId, customerList, customerUpdate } from '../schemas/customers.js'
import { storedField } from '../schemas/model-schemas.js'
import { parse } from '../schemas/validate.js'
import type { StorageTransaction } from '../storage/types.js'
import { visible, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { eraseTraces } from './erasure.js'
import { claimSales } from './sale-earnings.js'
import { inTransaction, listPage, listWhere, readOnly, requireChanges, type Deps, type Page } from './shared.js'
import { signupDelta, signupHolders } from './signups.js'

export type CustomerUpdateInput = Infer<typeof customerUpdate.struct>
export type CustomerListQuery = Infer<typeof customerList.struct>

export const findCustomer = async (tx: StorageTransaction, access: Access, id: string): Promise<CustomerRecord> =>
  visible(access, await tx.get('customers', id.toLowerCase()), 'Customer')

/** The customer a Stripe customer is bound to in the workspace, if any (one at most: a unique index). */
export async function customerByStripeId(
  tx: StorageTransaction,
  workspaceId: string,
  stripeCustomerId: string,
): Promise<CustomerRecord | null> {
  const [found] = await tx.find('customers', { where: { workspaceId, stripeCustomerId }, limit: 1 })
  return found ?? null
}

/** The customer the host knows by `externalId` in the workspace, if any. */
export async function customerByExternalId(
  tx: StorageTransaction,
  workspaceId: string,
  externalId: string,
): Promise<CustomerRecord | null> {
  const [found] = await tx.find('customers', { where: { workspaceId, externalId }, limit: 1 })
  return found ?? null
}

/** Moves the signups of the customer's affiliate and link for a customer (its e-mail) that arrived (+1) or left (-1). */
async function countCustomer(tx: StorageTransaction, customer: CustomerRecord, direction: 1 | -1): Promise<void> {
  if (customer.emailKey === '') return
  const affiliate = signupDelta(
    customer.emailKey,
    direction,
    await signupHolders(tx, 'affiliateId', customer.affiliateId, customer.emailKey),
  )
  if (affiliate !== 0) await tx.increment('affiliates', customer.affiliateId, { totalSignups: affiliate })
  if (customer.linkId === null) return
  const link = signupDelta(customer.emailKey, direction, await signupHolders(tx, 'linkId', customer.linkId, customer.emailKey))
  if (link !== 0) await tx.increment('links', customer.linkId, { totalSignups: link })
}

export type NewCustomer = Pick<
  CustomerRecord,
  | 'workspaceId'
  | 'campaignId'
  | 'affiliateId'
  | 'linkId'
  | 'clickId'
  | 'attributedAt'
  | 'externalId'
  | 'email'
  | 'name'
  | 'stripeCustomerId'
> &
  Partial<Pick<CustomerRecord, 'clickAddress' | 'clickDevice' | 'clickPaidAd' | 'clickAddressCount'>>

/**
 * Stores a new customer, counts its signup, and writes `customer.created`: in the caller's
 * transaction. Its `clickAddressCount` is counted now unless the caller counted it.
 */
export async function insertCustomer(tx: EventTransaction, clock: Clock, input: NewCustomer): Promise<CustomerRecord> {
  const now = isoAt(clock)
  const record: CustomerRecord = {
    id: newId(),
    ...input,
    clickAddress: input.clickAddress ?? '',
    clickDevice: input.clickDevice ?? '',
    clickPaidAd: input.clickPaidAd ?? false,
    clickAddressCount: input.clickAddressCount ?? (await customersFromAddress(tx, input.affiliateId, input.clickAddress ?? '', now)),
    emailKey: input.email.toLowerCase(),
    firstSaleAt: null,
    salesCount: 0,
    commissionCount: 0,
    createdAt: now,
    updatedAt: now,
  }
  await tx.insert('customers', record)
  await countCustomer(tx, record, 1)
  await announce(tx, clock, 'customer.created', toCustomer(record))
  return record
}

/** A change of who a customer is bound to, or of its e-mail: moves the signups it counts in. */
async function moveCustomer(tx: StorageTransaction, before: CustomerRecord, after: CustomerRecord): Promise<void> {
  if (before.affiliateId === after.affiliateId && before.linkId === after.linkId && before.emailKey === after.emailKey) return
  await countCustomer(tx, before, -1)
  await countCustomer(tx, after, 1)
}

/**
 * Binds `current` to a Stripe customer (it has none; another customer holding it is a unique
 * violation), writes `customer.updated`, and attributes that Stripe customer's sales recorded
 * before (`claimSales`). Answers the customer as now stored and the commissions the sales made.
 */
export async function bindStripeCustomer(
  tx: EventTransaction,
  access: Access,
  clock: Clock,
  current: CustomerRecord,
  stripeCustomerId: string,
  disposableDomains: DisposableDomains,
): Promise<{ customer: CustomerRecord; commissions: CommissionRecord[] }> {
  const bound = (await tx.update('customers', current.id, { stripeCustomerId, updatedAt: isoAt(clock) }))!
  await announce(tx, clock, 'customer.updated', toCustomer(bound))
  const commissions = await claimSales(tx, access, clock, bound, disposableDomains)
  return { customer: (await tx.get('customers', bound.id))!, commissions }
}

export function customerOperations({ storage, clock, disposableDomains }: Deps) {
  return {
    async get(access: Access, query: unknown): Promise<Customer> {
      const { customerId: id } = parse([customerId, query]).query
      return inTransaction(storage, async (tx) => toCustomer(await findCustomer(tx, access, id)), readOnly)
    },

    list(access: Access, query: unknown): Promise<Page<Customer>> {
      const q = parse([customerList, query]).query
      const where = listWhere(access, q)
      return inTransaction(
        storage,
        (tx) => listPage(tx, 'customers', { ...q, where, orderField: storedField(customers, q.orderType ?? 'createdAt') }, toCustomer),
        readOnly,
      )
    },

    /**
     * Moves it to another affiliate (its future sales only: commissions made stay), changes its
     * e-mail or name, or binds it to a Stripe customer (whose sales recorded before, not yet
     * attributed, are then attributed to it; one held by another customer is 422) or unbinds it (null).
     */
    async update(access: Access, query: unknown, body: unknown): Promise<Customer> {
      const { query: q, body: input } = parse([customerId, query], [customerUpdate, body])
      requireChanges(input)
      return inTransaction(storage, async (tx) => {
        const current = await findCustomer(tx, access, q.customerId)
        const patch: Partial<CustomerRecord> = {}
        if (input.affiliateId !== undefined && input.affiliateId.toLowerCase() !== current.affiliateId) {
          const affiliate = await findAffiliate(tx, access, input.affiliateId)
          if (affiliate.workspaceId !== current.workspaceId)
            throw unprocessable("The affiliate is not in the customer's workspace", 'workspace_mismatch')
          // The link and click it came through were the previous affiliate's.
          Object.assign(patch, {
            affiliateId: affiliate.id,
            campaignId: affiliate.campaignId,
            linkId: null,
            clickId: null,
            clickAddress: '',
            clickDevice: '',
            clickPaidAd: false,
            clickAddressCount: 0,
          })
        }
        if (input.email !== undefined && input.email !== current.email)
          Object.assign(patch, { email: input.email, emailKey: input.email.toLowerCase() })
        if (input.name !== undefined && input.name !== current.name) patch.name = input.name
        const stripeCustomerId =
          input.stripeCustomerId === undefined || input.stripeCustomerId === current.stripeCustomerId ? undefined : input.stripeCustomerId
        if (stripeCustomerId !== undefined) patch.stripeCustomerId = stripeCustomerId
        if (Object.keys(patch).length === 0) return toCustomer(current)
        const updated = (await tx.update('customers', current.id, { ...patch, updatedAt: isoAt(clock) }))!
        await moveCustomer(tx, current, updated)
        await announce(tx, clock, 'customer.updated', toCustomer(updated))
        if (!stripeCustomerId) return toCustomer(updated)
        await claimSales(tx, access, clock, updated, disposableDomains)
        return toCustomer((await tx.get('customers', updated.id))!)
      })
    },

    /**
     * Forgets the person: erases `email` and `name` and sets `externalId` to the customer's own id,
     * here and wherever the API could answer them again (`eraseTraces`: its sales' commissions
     * name `<customerId>@erased.invalid`, stored answers and events are rewritten). Every
     * commission of its sales stays (money history is kept).
     */
    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { customerId: id } = parse([customerId, query]).query
      return inTransaction(storage, async (tx) => {
        const current = await findCustomer(tx, access, id)
        const forgotten = (await tx.update('customers', current.id, {
          email: '',
          emailKey: '',
          name: null,
          externalId: current.id,
          clickAddress: '',
          clickDevice: '',
          updatedAt: isoAt(clock),
        }))!
        await countCustomer(tx, current, -1)
        await eraseTraces(tx, clock, forgotten)
        await announce(tx, clock, 'customer.deleted', toCustomer(forgotten))
        return { id: current.id }
      })
    },
  }
}
