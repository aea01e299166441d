import { constantTimeEqual, newId, sha256Hex } from '../crypto.js'
import { isUuid } from '../uuid.js'
import { portableRuntime } from '../runtime.js'
import { isPublishableKey, normalizeOrigin } from './origins.js'
import { isoAt, systemClock, type Clock } from '../clock.js'
import { generateApiKey, generatePublishableKey, KEY_PREFIX_LENGTH } from './storage.js'
import type { KeyInfo, KeyManagement, KeyStore, Principal } from './types.js'

export interface MemoryKeyEntry {
  /** The plaintext key callers send in `x-auth-service`. Only its SHA-256 hash is kept. */
  key: string
  userId: string
  /** UUIDs of the workspaces the key may touch. */
  workspaceIds: readonly string[]
  /** @default the first 12 hex digits of the key's hash */
  keyId?: string
  /**
   * For a publishable key (one starting with `pk_`): the browser origins the tracking beacon
   * answers CORS for, e.g. `['https://shop.example.com']`, or `['*']`. Only `pk_` keys take it.
   * @default []
   */
  allowedOrigins?: readonly string[]
}

/** Throws a TypeError naming what is wrong with entry `index`: a mistake shows at start, not as a 500 later. */
function checkEntry(entry: MemoryKeyEntry, index: number): void {
  const at = `memoryKeyStore: entry ${index}`
  if (typeof entry !== 'object' || entry === null) throw new TypeError(`${at} must be an object`)
  if (typeof entry.key !== 'string' || entry.key === '')
    throw new TypeError(`${at}: key must be a non-empty string (is an environment variable unset?)`)
  if (typeof entry.userId !== 'string' || entry.userId === '') throw new TypeError(`${at}: userId must be a non-empty string`)
  if (!Array.isArray(entry.workspaceIds)) throw new TypeError(`${at}: workspaceIds must be an array of UUIDs`)
  for (const id of entry.workspaceIds as unknown[]) {
    if (!isUuid(id)) throw new TypeError(`${at}: workspaceIds holds ${JSON.stringify(id)}, which is not a UUID`)
  }
  if (entry.keyId !== undefined && (typeof entry.keyId !== 'string' || entry.keyId === '')) {
    throw new TypeError(`${at}: keyId must be a non-empty string when given`)
  }
  if (entry.allowedOrigins !== undefined) {
    if (!isPublishableKey(entry.key)) throw new TypeError(`${at}: allowedOrigins is for publishable keys (pk_…) only`)
    if (!Array.isArray(entry.allowedOrigins)) throw new TypeError(`${at}: allowedOrigins must be an array of origins`)
    entry.allowedOrigins.forEach(normalizeOrigin)
  }
}

/**
 * Keys held in memory as SHA-256 hashes: the plaintext is dropped once hashed. A key starting
 * with `pk_` is publishable: tracking only, safe in a web page (see `Principal.publishable`). The entries are
 * checked when it is called: a key that is not a non-empty string or a workspace id that is not a
 * UUID throws a TypeError naming it.
 *
 * A presented key is hashed; the first 16 hex digits of the hash pick the candidates and the
 * whole hash is then compared in constant time. Timing can at most tell an attacker about the
 * hash of their own guess, never about a stored key.
 *
 * @example
 * memoryKeyStore([{ key: process.env.AFFILIATE_API_KEY!, userId, workspaceIds: [workspaceId] }])
 */
export interface MemoryKeyStoreOptions {
  /** Where `createdAt`, `lastUsedAt` and `revokedAt` come from. @default the system clock */
  clock?: Clock
}

export function memoryKeyStore(entries: readonly MemoryKeyEntry[], options: MemoryKeyStoreOptions = {}): KeyStore & KeyManagement {
  if (!Array.isArray(entries)) throw new TypeError('memoryKeyStore takes an array of { key, userId, workspaceIds }')
  entries.forEach(checkEntry)
  const clock = options.clock ?? systemClock
  const byPrefix = new Map<string, { hash: string; principal: Principal }[]>()
  const infos = new Map<string, KeyInfo>()

  function add(key: string, entry: Omit<MemoryKeyEntry, 'key'>, label: string): KeyInfo {
    const hash = sha256Hex(key)
    const publishable = isPublishableKey(key)
    const principal: Principal = Object.freeze({
      keyId: entry.keyId ?? hash.slice(0, 12),
      userId: entry.userId,
      workspaceIds: Object.freeze(entry.workspaceIds.map((id: string) => id.toLowerCase())),
      ...(publishable
        ? { publishable: Object.freeze({ allowedOrigins: Object.freeze((entry.allowedOrigins ?? []).map(normalizeOrigin)) }) }
        : {}),
    })
    const prefix = hash.slice(0, 16)
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), { hash, principal }])
    const info: KeyInfo = {
      keyId: principal.keyId,
      label,
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      kind: publishable ? 'publishable' : 'secret',
      workspaceIds: [...principal.workspaceIds],
      allowedOrigins: [...(principal.publishable?.allowedOrigins ?? [])],
      createdAt: isoAt(clock),
      lastUsedAt: null,
      revokedAt: null,
    }
    infos.set(info.keyId, info)
    return info
  }
  for (const entry of entries) add(entry.key, entry, '')

  return {
    async resolve(key, runtime) {
      const hash = (runtime ?? portableRuntime).sha256Hex(key)
      let found: Principal | null = null
      for (const entry of byPrefix.get(hash.slice(0, 16)) ?? []) {
        if (constantTimeEqual(entry.hash, hash)) found = entry.principal
      }
      const info = found && infos.get(found.keyId)
      if (!info || info.revokedAt !== null) return null
      info.lastUsedAt = isoAt(clock)
      return found
    },
    async create(input) {
      if (!Array.isArray(input.workspaceIds) || input.workspaceIds.length === 0) throw new TypeError('A key needs at least one workspace')
      const kind = input.kind ?? 'secret'
      if (kind === 'secret' && input.allowedOrigins !== undefined) throw new TypeError('allowedOrigins is for publishable keys (pk_…) only')
      const key = kind === 'publishable' ? generatePublishableKey() : generateApiKey()
      const entry = {
        userId: input.userId ?? newId(),
        workspaceIds: input.workspaceIds,
        keyId: newId(),
        ...(input.allowedOrigins ? { allowedOrigins: input.allowedOrigins } : {}),
      }
      checkEntry({ key, ...entry }, infos.size)
      return { key, info: { ...add(key, entry, input.label ?? '') } }
    },
    async list(filter = {}) {
      const workspaceId = filter.workspaceId?.toLowerCase()
      return [...infos.values()]
        .filter((info) => workspaceId === undefined || info.workspaceIds.includes(workspaceId))
        .map((info) => ({ ...info }))
    },
    async revoke(keyId) {
      const info = infos.get(keyId)
      if (!info || info.revokedAt !== null) return false
      info.revokedAt = isoAt(clock)
      return true
    },
    async lastUsedAt(keyId) {
      return infos.get(keyId)?.lastUsedAt ?? null
    },
  }
}
