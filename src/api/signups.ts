import type { StorageTransaction } from '../storage/types.js'

// An affiliate's (and a link's) `totalSignups` counts its distinct e-mails over its referred users
// (commission records) and its customers: an e-mail counts once it has one record of either kind.

/**
 * How many commission records and customers of this affiliate (or link) hold this e-mail
 * (lower-cased), counted up to 2: all `signupDelta` needs to tell 0, 1 and more apart. Reading at
 * most two rows keeps a write for a customer with thousands of sales as cheap as for a new one.
 */
export async function signupHolders(tx: StorageTransaction, by: 'affiliateId' | 'linkId', id: string, emailKey: string): Promise<number> {
  const records = await tx.select('commissions', ['id'], { where: { referredUserKey: emailKey, [by]: id }, limit: 2 })
  if (records.length >= 2) return 2
  const customers = await tx.select('customers', ['id'], { where: { emailKey, [by]: id }, limit: 2 - records.length })
  return records.length + customers.length
}

/**
 * The signup delta of a record holding `emailKey` that arrived (+1) or left (-1), from the holders
 * counted after the change: 1 left after an arrival or 0 after a departure mean the e-mail is new or gone.
 */
export const signupDelta = (emailKey: string, direction: 1 | -1, remaining: number): number =>
  emailKey === '' ? 0 : direction === 1 ? (remaining === 1 ? 1 : 0) : remaining === 0 ? -1 : 0
