import { constantTimeEqual, sha256Hex, shortSha256Hex } from '../crypto.js'
import type { KeyStore, Principal } from './types.js'

export interface MemoryKeyEntry {
  /** The plaintext key callers send in `x-auth-service`. Only its SHA-256 hash is kept. */
  key: string
  userId: string
  workspaceIds: readonly string[]
  /** @default the first 12 hex digits of the key's hash */
  keyId?: string
}

/**
 * Keys held in memory as SHA-256 hashes: the plaintext is dropped once hashed.
 *
 * A presented key is hashed; the first 16 hex digits of the hash pick the candidates and the
 * whole hash is then compared in constant time. Timing can at most tell an attacker about the
 * hash of their own guess, never about a stored key.
 *
 * @example
 * memoryKeyStore([{ key: process.env.AFFILIATE_API_KEY!, userId, workspaceIds: [workspaceId] }])
 */
export function memoryKeyStore(entries: readonly MemoryKeyEntry[]): KeyStore {
  const pending = Promise.all(
    entries.map(async (entry) => {
      const hash = await sha256Hex(entry.key)
      const principal: Principal = Object.freeze({
        keyId: entry.keyId ?? hash.slice(0, 12),
        userId: entry.userId,
        workspaceIds: Object.freeze(entry.workspaceIds.map((id) => id.toLowerCase())),
      })
      return { hash, principal }
    }),
  ).then((stored) => {
    const byPrefix = new Map<string, (typeof stored)[number][]>()
    for (const entry of stored) {
      const prefix = entry.hash.slice(0, 16)
      byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), entry])
    }
    return byPrefix
  })
  // Once hashed, the table is read directly: no promise to wait for on every request. (A failure
  // to hash is left for `resolve` to answer.)
  let ready: Awaited<typeof pending> | undefined
  void pending.then((byPrefix) => (ready = byPrefix), () => undefined)
  return {
    async resolve(key) {
      const byPrefix = ready ?? (await pending)
      const hash = shortSha256Hex(key) ?? (await sha256Hex(key))
      let found: Principal | null = null
      for (const entry of byPrefix.get(hash.slice(0, 16)) ?? []) {
        if (constantTimeEqual(entry.hash, hash)) found = entry.principal
      }
      return found
    },
  }
}
