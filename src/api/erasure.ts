import type { Clock } from '../clock.js'
import { toCommission } from '../domain/commission.js'
import type { CustomerRecord } from '../domain/records.js'
import { announce, type EventTransaction } from '../events/outbox.js'
import { renameReferredUser } from './commission-records.js'

// Forgetting a customer (SPEC wave 4, "Customers: erasure forgets the person everywhere"): besides
// the customer itself (src/api/customers.ts), every commission made from its sales, and every
// stored answer or event that holds it: the answers a repeated `invoiceId` or `refundId` is given
// again, the answers kept for `Idempotency-Key` replays, and the outbox's events (`GET /events`, and
// webhooks not yet delivered, which are sent from them). Money is kept.

/** The referred user a forgotten customer's commissions name instead of its e-mail. */
export const erasedAddress = (customerId: string): string => `${customerId}@erased.invalid`

/** How many stored answers or events are read at a time while looking for the person. */
const PAGE = 500

/**
 * Erases the person from a stored answer or event, in place: every customer object of
 * `customerId` (its e-mail, name and externalId, as `DELETE /customers` leaves the customer) and
 * every commission object of `commissionIds` (its referred user and name). Answers whether it changed anything.
 */
export function eraseFrom(value: unknown, customerId: string, commissionIds: ReadonlySet<string>): boolean {
  if (value === null || typeof value !== 'object') return false
  let changed = false
  if (Array.isArray(value)) {
    for (const item of value) changed = eraseFrom(item, customerId, commissionIds) || changed
    return changed
  }
  const object = value as Record<string, unknown>
  const set = (field: string, to: unknown) => {
    if (field in object && object[field] !== to) {
      object[field] = to
      changed = true
    }
  }
  if (object.customerId === customerId && 'externalId' in object) {
    set('email', '')
    set('name', null)
    set('externalId', customerId)
  }
  if (typeof object.commissionId === 'string' && commissionIds.has(object.commissionId) && 'referredUser' in object) {
    set('referredUser', erasedAddress(customerId))
    set('name', null)
  }
  for (const inner of Object.values(object)) changed = eraseFrom(inner, customerId, commissionIds) || changed
  return changed
}

/** `text` (JSON) with the person erased (see `eraseFrom`), or null when it does not hold them. */
function erasedText(text: string, customerId: string, commissionIds: ReadonlySet<string>): string | null {
  if (!text.includes(customerId) && ![...commissionIds].some((id) => text.includes(id))) return null
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  return eraseFrom(value, customerId, commissionIds) ? JSON.stringify(value) : null
}

/**
 * Rewrites every record a page of `read` answers that holds the person (`write` with the erased
 * JSON), a page at a time until a page is short. Pages are in `createdAt` order, which the rewrite does not move.
 */
async function eraseInPages(
  read: (offset: number) => Promise<{ id: string; text: string }[]>,
  write: (id: string, text: string) => Promise<unknown>,
  customerId: string,
  commissionIds: ReadonlySet<string>,
): Promise<void> {
  for (let offset = 0; ; offset += PAGE) {
    const page = await read(offset)
    for (const record of page) {
      const erased = erasedText(record.text, customerId, commissionIds)
      if (erased !== null) await write(record.id, erased)
    }
    if (page.length < PAGE) return
  }
}

/**
 * Erases the forgotten `customer` from every commission of its sales (`referredUser` becomes
 * `erasedAddress`, with the signups that moves, and `commission.updated` for each), from its sales'
 * and their refunds' stored answers, from the `Idempotency-Key` answers and from the workspace's
 * events, in `tx`.
 */
export async function eraseTraces(tx: EventTransaction, clock: Clock, customer: CustomerRecord): Promise<void> {
  const commissions = await tx.find('commissions', { where: { customerId: customer.id } })
  const commissionIds = new Set(commissions.map((commission) => commission.id))
  for (const commission of commissions) {
    if (commission.referredUser === erasedAddress(customer.id) && commission.name === null) continue
    const renamed = await renameReferredUser(tx, clock, commission, erasedAddress(customer.id))
    await announce(tx, clock, 'commission.updated', toCommission(renamed))
  }
  for (const sale of await tx.find('sales', { where: { customerId: customer.id } })) {
    const answer = erasedText(sale.answer, customer.id, commissionIds)
    if (answer !== null) await tx.update('sales', sale.id, { answer })
    for (const refund of await tx.find('saleRefunds', { where: { saleId: sale.id } })) {
      const refundAnswer = erasedText(refund.answer, customer.id, commissionIds)
      if (refundAnswer !== null) await tx.update('saleRefunds', refund.id, { answer: refundAnswer })
    }
  }
  const inOrder = { field: 'createdAt', direction: 'ASC' } as const
  await eraseInPages(
    async (offset) =>
      (await tx.select('idempotency', ['body'], { orderBy: inOrder, offset, limit: PAGE })).map((r) => ({ id: r.id, text: r.body })),
    (id, body) => tx.update('idempotency', id, { body }),
    customer.id,
    commissionIds,
  )
  await eraseInPages(
    async (offset) =>
      (await tx.select('events', ['data'], { where: { workspaceId: customer.workspaceId }, orderBy: inOrder, offset, limit: PAGE })).map(
        (r) => ({ id: r.id, text: r.data }),
      ),
    (id, data) => tx.update('events', id, { data }),
    customer.id,
    commissionIds,
  )
}
