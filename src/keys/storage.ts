import { isoAt, systemClock, type Clock } from '../clock.js'
import { constantTimeEqual, newId, randomString, sha256Hex } from '../crypto.js'
import type { ApiKeyKind, ApiKeyRecord } from '../domain/records.js'
import type { Storage } from '../storage/types.js'
import { normalizeOrigin, PUBLISHABLE_PREFIX } from './origins.js'
import type { KeyStore, Principal } from './types.js'

/** What generated keys start with: recognisable in logs and by secret scanners. */
export const API_KEY_PREFIX = 'aff_live_'
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** 32 characters of 62: about 190 bits from the cryptographic source. */
const RANDOM_CHARACTERS = 32
/** What generated publishable keys start with: `pk_` marks them tracking-only. */
export const PUBLISHABLE_KEY_PREFIX = `${PUBLISHABLE_PREFIX}live_`
/** The part of a key `list` shows: the prefix and four random characters. */
const SHOWN_CHARACTERS = API_KEY_PREFIX.length + 4
/** Longer strings are no key of ours: refused before hashing. */
const MAX_KEY_LENGTH = 256

/** A new key: `aff_live_` followed by 32 random characters of [A-Za-z0-9]. */
export const generateApiKey = (): string => API_KEY_PREFIX + randomString(ALPHABET, RANDOM_CHARACTERS)

/** A new publishable key: `pk_live_` followed by 32 random characters of [A-Za-z0-9]. */
export const generatePublishableKey = (): string => PUBLISHABLE_KEY_PREFIX + randomString(ALPHABET, RANDOM_CHARACTERS)

/** A stored key as people may see it: never the key, never its hash. */
export interface ApiKeyInfo {
  id: string
  /** The key's first characters, e.g. `aff_live_Q3xZ`. */
  prefix: string
  userId: string
  workspaceIds: string[]
  label: string
  createdAt: string
  /** When it was revoked, or null while it works. */
  revokedAt: string | null
  /** `secret` (the API) or `publishable` (`pk_…`, the tracking beacon only). */
  kind: ApiKeyKind
  /** Publishable keys: the origins the beacon answers CORS for; `[]` on secret keys. */
  allowedOrigins: string[]
}

export interface ApiKeyCreateInput {
  /** The workspaces the key may use (at least one). */
  workspaceIds: readonly string[]
  /** Recorded as `userId` on the links the key creates. @default a new UUID */
  userId?: string
  /** A note for people, e.g. `billing backend`. @default '' */
  label?: string
}

export interface PublishableKeyCreateInput extends ApiKeyCreateInput {
  /**
   * The browser origins the tracking beacon answers CORS for, e.g. `['https://shop.example.com']`
   * (`['*']`: any). Calls without an `Origin` (from a server) are accepted whatever it holds.
   * @default []
   */
  allowedOrigins?: readonly string[]
}

/** A key store kept in the service's own storage, with the operations to manage it. */
export interface StorageKeyStore extends KeyStore {
  /** Makes a key. The answer holds the key itself: show it once, it cannot be read back. */
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
  /** Every key, revoked ones too, oldest first. */
  list(): Promise<ApiKeyInfo[]>
  /** Revokes a key by id: it resolves to nothing from the next request on. False when no such key is active. */
  revoke(id: string): Promise<boolean>
}

export interface StorageKeyStoreOptions {
  /** Where `createdAt` and `revokedAt` come from. @default the system clock */
  clock?: Clock
}

const info = (record: ApiKeyRecord): ApiKeyInfo => ({
  id: record.id,
  prefix: record.prefix,
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
      createdAt: now,
      updatedAt: now,
    }
    await storage.transaction((tx) => tx.insert('apiKeys', record))
    return info(record)
  }

  return {
    async resolve(key) {
      if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) return null
      const hash = sha256Hex(key)
      const candidates = await storage.transaction((tx) => tx.find('apiKeys', { where: { lookup: hash.slice(0, 16) } }), {
        readOnly: true,
      })
      let found: Principal | null = null
      for (const candidate of candidates) {
        // Compare every candidate fully, whatever matched before: the time never depends on the stored hashes.
        if (constantTimeEqual(candidate.hash, hash) && candidate.revokedAt === null) {
          found = { keyId: candidate.id, userId: candidate.userId, workspaceIds: candidate.workspaceIds }
          if (candidate.kind === 'publishable') found.publishable = { allowedOrigins: candidate.allowedOrigins }
        }
      }
      return found
    },
    async create(input) {
      const key = generateApiKey()
      return { key, info: await add(key, input) }
    },
    async createPublishable(input) {
      const key = generatePublishableKey()
      return { key, info: await add(key, input) }
    },
    add,
    async list() {
      const records = await storage.transaction(
        (tx) => tx.find('apiKeys', { orderBy: { field: 'createdAt', direction: 'ASC' } }),
        { readOnly: true },
      )
      return records.map(info)
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
