import { isoAt, type Clock } from '../clock.js'
import type { PortalTokenRecord } from '../domain/records.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import { keyedHash, randomToken } from '../site/secrets.js'

/** A sign-in link works once, for this long. */
export const SIGN_IN_LINK_MS = 15 * 60_000

/**
 * Sign-in links and sessions in the service's storage. Each secret goes to the browser (or the
 * e-mail) only; the record's id is its HMAC under the portal's secret, so neither a copy of the
 * storage nor a guess of ids signs anyone in. A link is deleted when used (in the transaction
 * that reads it, so two uses at once cannot both pass); a session when its owner signs out.
 */
export function portalTokens(storage: Storage, clock: Clock, key: Uint8Array, sessionMs: number) {
  const idOf = (token: string) => keyedHash(key, token)
  const later = (ms: number) => new Date(clock.now() + ms).toISOString()
  const live = (record: PortalTokenRecord | null, kind: PortalTokenRecord['kind']) =>
    record !== null && record.kind === kind && record.expiresAt > isoAt(clock) ? record : null

  /** Forgets this e-mail's links and sessions that have ended, so records do not pile up. */
  async function sweep(tx: StorageTransaction, email: string): Promise<void> {
    const now = isoAt(clock)
    for (const record of await tx.find('portalTokens', { where: { email } })) {
      if (record.expiresAt <= now) await tx.delete('portalTokens', record.id)
    }
  }

  async function issue(kind: PortalTokenRecord['kind'], email: string, affiliateId: string | null, ms: number): Promise<string> {
    const token = randomToken()
    await storage.transaction(async (tx) => {
      await sweep(tx, email)
      const now = isoAt(clock)
      await tx.insert('portalTokens', { id: idOf(token), kind, email, affiliateId, expiresAt: later(ms), createdAt: now, updatedAt: now })
    })
    return token
  }

  return {
    /** A new single-use sign-in link's token for `email` (lowercase). */
    issueLink: (email: string) => issue('signIn', email, null, SIGN_IN_LINK_MS),

    /** Whether the link still works (not used, not expired); uses nothing. */
    async linkWorks(token: string): Promise<boolean> {
      return storage.transaction(async (tx) => live(await tx.get('portalTokens', idOf(token)), 'signIn') !== null, { readOnly: true })
    },

    /** Uses the link: its e-mail when it still worked, else null. Either way it never works again. */
    async useLink(token: string): Promise<string | null> {
      return storage.transaction(async (tx) => {
        const record = await tx.get('portalTokens', idOf(token))
        if (record === null || record.kind !== 'signIn') return null
        await tx.delete('portalTokens', record.id)
        return live(record, 'signIn')?.email ?? null
      })
    },

    /** A new session's token for `email`, on `affiliateId` (null: the affiliate is still to be chosen). */
    startSession: (email: string, affiliateId: string | null) => issue('session', email, affiliateId, sessionMs),

    /** The session of this cookie value, while it lasts. */
    async session(token: string): Promise<PortalTokenRecord | null> {
      return storage.transaction(async (tx) => live(await tx.get('portalTokens', idOf(token)), 'session'), { readOnly: true })
    },

    /** Points the session at one of its e-mail's affiliates. */
    async choose(session: PortalTokenRecord, affiliateId: string): Promise<void> {
      await storage.transaction(async (tx) => void (await tx.update('portalTokens', session.id, { affiliateId, updatedAt: isoAt(clock) })))
    },

    /** Ends the session of this cookie value (signing out). */
    async endSession(token: string): Promise<void> {
      await storage.transaction(async (tx) => void (await tx.delete('portalTokens', idOf(token))))
    },
  }
}

export type PortalTokens = ReturnType<typeof portalTokens>
