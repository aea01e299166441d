import { isoAt, systemClock, type Clock } from '../clock.js'
import { constantTimeEqual, newId, randomString, sha256Hex } from '../crypto.js'
import { portableRuntime } from '../runtime.js'
import type { ApiKeyKind, ApiKeyRecord } from '../domain/records.js'
import type { Storage } from '../storage/types.js'
import { normalizeOrigin, PUBLISHABLE_PREFIX } from './origins.js'
import type { KeyCreateInput, KeyInfo, KeyManagement, KeyStore, Principal } from './types.js'

/** What generated keys start with: recognisable in logs and by secret scanners. */
export const API_KEY_PREFIX = 'aff_live_'
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** 32 characters of 62: about 190 bits from the cryptographic source. */
const RANDOM_CHARACTERS = 32
/** What generated publishable keys start with: `pk_` marks them tracking-only. */
export const PUBLISHABLE_KEY_PREFIX = `${PUBLISHABLE_PREFIX}live_`
/** The part of a key `list` shows: the prefix and four random characters. */
const SHOWN_CHARACTERS = API_KEY_PREFIX.length + 4
/** `lastUsedAt` is written when it is older than this: at most one write per key a minute. */
const LAST_USED_STEP_MS = 60_000
/** What `KeyInfo.prefix` shows of a key. */
export const KEY_PREFIX_LENGTH = 8
/** Longer strings are no key of ours: refused before hashing. */
const MAX_KEY_LENGTH = 256

/** A new key: `aff_live_` followed by 32 random characters of [A-Za-z0-9]. */
export const generateApiKey = (): string => API_KEY_PREFIX + randomString(ALPHABET, RANDOM_CHARACTERS)

/** A new publishable key: `pk_live_` followed by 32 random characters of [A-Za-z0-9]. */
export const generatePublishableKey = (): string => PUBLISHABLE_KEY_PREFIX + randomString(ALPHABET, RANDOM_CHARACTERS)

/** A stored key as people may see it: never the key, never its hash. */
export interface ApiKeyInfo extends KeyInfo {
  /** The same as `keyId`. */
  id: string
  userId: string
  /** `secret` (the API) or `publishable` (`pk_…`, the tracking beacon only). */
  kind: ApiKeyKind
}

export type ApiKeyCreateInput = KeyCreateInput

export interface PublishableKeyCreateInput extends ApiKeyCreateInput {
  /**
   * The browser origins the tracking beacon answers CORS for, e.g. `['https://shop.example.com']`
   * (`['*']`: any). Calls without an `Origin` (from a server) are accepted whatever it holds.
   * @default []
   */
  allowedOrigins?: readonly string[]
}

/** A key store kept in the service's own storage, with the operations to manage it. */
export interface StorageKeyStore extends KeyStore, KeyManagement {
  /** Makes a key (`kind: 'publishable'`: as `createPublishable`). The answer holds the key itself: show it once, it cannot be read back. */
  create(input: ApiKeyCreateInput): Promise<{ key: string; info: ApiKeyInfo }>
  /**
   * Makes a publishable key (`pk_live_…`): tracking only, for client-side code. Like `create`,
   * the answer holds the key; unlike a secret key it is no secret, only its hash is kept anyway.
   */
  createPublishable(input: PublishableKeyCreateInput): Promise<{ key: string; info: ApiKeyInfo }>
  /**
   * Stores a key the caller already has (e.g. from the environment); its hash only. A key
   * starting with `pk_` is stored as publishable, with `allowedOrigins`.
   */
  add(key: string, input: PublishableKeyCreateInput): Promise<ApiKeyInfo>
  /** Every key, revoked ones too, oldest first; with `workspaceId`, the keys that may use it. */
  list(filter?: { workspaceId?: string }): Promise<ApiKeyInfo[]>
  /** Revokes a key by id: it resolves to nothing from the next request on. False when no such key is active. */
  revoke(id: string): Promise<boolean>
}

export interface StorageKeyStoreOptions {
  /** Where `createdAt` and `revokedAt` come from. @default the system clock */
  clock?: Clock
}

const info = (record: ApiKeyRecord): ApiKeyInfo => ({
  id: record.id,
  keyId: record.id,
  prefix: record.prefix.slice(0, KEY_PREFIX_LENGTH),
  lastUsedAt: record.lastUsedAt ?? null,
  userId: record.userId,
  workspaceIds: record.workspaceIds,
  label: record.label,
  createdAt: record.createdAt,
  revokedAt: record.revokedAt,
  kind: record.kind,
  allowedOrigins: record.allowedOrigins,
})

/**
 * API keys kept in the storage (the `apiKeys` model) as SHA-256 hashes. A presented key is
 * hashed; the hash's first 16 hex digits find the candidates through an index and the whole
 * hash is compared in constant time. Nothing is cached: every request reads the storage, so a
 * revoked key is refused from the next request on, in this process and in every other process
 * sharing the database.
 *
 * @example
 * const keyStore = storageKeyStore(storage)
 * const { key } = await keyStore.create({ workspaceIds: [workspaceId], label: 'checkout' })
 * const service = createAffiliateService({ storage, keyStore })
 */
export function storageKeyStore(storage: Storage, options: StorageKeyStoreOptions = {}): StorageKeyStore {
  const clock = options.clock ?? systemClock

  async function add(key: string, input: PublishableKeyCreateInput): Promise<ApiKeyInfo> {
    if (input.workspaceIds.length === 0) throw new Error('A key needs at least one workspace')
    const kind: ApiKeyKind = key.startsWith(PUBLISHABLE_PREFIX) ? 'publishable' : 'secret'
    if (kind === 'secret' && input.allowedOrigins !== undefined) throw new TypeError('allowedOrigins is for publishable keys (pk_…) only')
    const allowedOrigins = [...new Set((input.allowedOrigins ?? []).map(normalizeOrigin))]
    const hash = sha256Hex(key)
    const now = isoAt(clock)
    const record: ApiKeyRecord = {
      id: newId(),
      hash,
      lookup: hash.slice(0, 16),
      prefix: key.slice(0, SHOWN_CHARACTERS),
      userId: input.userId ?? newId(),
      workspaceIds: input.workspaceIds.map((id) => id.toLowerCase()),
      label: input.label ?? '',
      revokedAt: null,
      kind,
      allowedOrigins,
      lastUsedAt: null,
      createdAt: now,
      updatedAt: now,
    }
    await storage.transaction((tx) => tx.insert('apiKeys', record))
    return info(record)
  }

  return {
    async resolve(key, runtime) {
      if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) return null
      const hash = (runtime ?? portableRuntime).sha256Hex(key)
      const candidates = await storage.transaction((tx) => tx.find('apiKeys', { where: { lookup: hash.slice(0, 16) } }), {
        readOnly: true,
      })
      let found: Principal | null = null
      let used: ApiKeyRecord | null = null
      for (const candidate of candidates) {
        // Compare every candidate fully, whatever matched before: the time never depends on the stored hashes.
        if (constantTimeEqual(candidate.hash, hash) && candidate.revokedAt === null) {
          found = { keyId: candidate.id, userId: candidate.userId, workspaceIds: candidate.workspaceIds }
          if (candidate.kind === 'publishable') found.publishable = { allowedOrigins: candidate.allowedOrigins }
          used = candidate
        }
      }
      if (used && (used.lastUsedAt == null || Date.parse(used.lastUsedAt) <= clock.now() - LAST_USED_STEP_MS)) {
        const at = isoAt(clock)
        await storage.transaction(async (tx) => void (await tx.update('apiKeys', used.id, { lastUsedAt: at })))
      }
      return found
    },
    async create(input) {
      const key = input.kind === 'publishable' ? generatePublishableKey() : generateApiKey()
      return { key, info: await add(key, input) }
    },
    async createPublishable(input) {
      const key = generatePublishableKey()
      return { key, info: await add(key, input) }
    },
    add,
    async list(filter = {}) {
      const records = await storage.transaction((tx) => tx.find('apiKeys', { orderBy: { field: 'createdAt', direction: 'ASC' } }), {
        readOnly: true,
      })
      const workspaceId = filter.workspaceId?.toLowerCase()
      return records.filter((record) => workspaceId === undefined || record.workspaceIds.includes(workspaceId)).map(info)
    },
    async lastUsedAt(keyId) {
      const record = await storage.transaction((tx) => tx.get('apiKeys', keyId), { readOnly: true })
      return record?.lastUsedAt ?? null
    },
    async revoke(id) {
      return storage.transaction(async (tx) => {
        const record = await tx.get('apiKeys', id)
        if (!record || record.revokedAt !== null) return false
        const now = isoAt(clock)
        await tx.update('apiKeys', id, { revokedAt: now, updatedAt: now })
        return true
      })
    },
  }
}
