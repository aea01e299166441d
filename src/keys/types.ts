import type { Runtime } from '../runtime.js'

/** Who is calling: what an API key resolves to. */
export interface Principal {
  /** Identifies the key (never the key itself); rate limits and retries are counted per key id. */
  keyId: string
  /** Recorded as `userId` on the links this principal creates. */
  userId: string
  /** The workspaces this principal may read and write. */
  workspaceIds: readonly string[]
  /**
   * Set on a publishable key (`pk_…`): it may only record clicks and opens through the tracking
   * beacon (`POST /track`, header `x-publishable-key`), answered with CORS for `allowedOrigins`.
   * Every keyed route refuses it like a wrong key. Absent on secret keys.
   */
  publishable?: { allowedOrigins: readonly string[] }
}

/** Resolves the `x-auth-service` (or, for the beacon, `x-publishable-key`) header to a principal. */
export interface KeyStore {
  /**
   * The principal for `key`, or null when the key is unknown or revoked. `runtime` is the caller's
   * (see `Runtime`): a store that hashes keys may hash with its `sha256Hex`, which gives the same
   * hex as any SHA-256; a store may ignore it.
   */
  resolve(key: string, runtime?: Pick<Runtime, 'sha256Hex'>): Promise<Principal | null>
}

/** `secret` keys use the API; `publishable` ones (`pk_…`) only the tracking beacon. */
export type KeyKind = 'secret' | 'publishable'

/** A key as people may see it: never the key, never its hash. */
export interface KeyInfo {
  keyId: string
  /** A note for people, e.g. `billing backend`. */
  label: string
  /** The key's first 8 characters. */
  prefix: string
  kind: KeyKind
  /** The workspaces the key may use. */
  workspaceIds: string[]
  /** Publishable keys: the origins the beacon answers CORS for; `[]` on secret keys. */
  allowedOrigins: string[]
  createdAt: string
  /** When a request last used the key (kept to the minute), or null. */
  lastUsedAt: string | null
  /** When it was revoked, or null while it works. */
  revokedAt: string | null
}

export interface KeyCreateInput {
  /** The workspaces the key may use (at least one). */
  workspaceIds: readonly string[]
  /** @default '' */
  label?: string
  /** @default 'secret' */
  kind?: KeyKind
  /** Publishable keys only: the browser origins the beacon answers CORS for. @default [] */
  allowedOrigins?: readonly string[]
  /** Recorded as `userId` on the links the key creates. @default a new UUID */
  userId?: string
}

/**
 * A key store that also manages its keys (the admin's Settings → Integrations uses these). Every
 * key store of the package has them; a host's own store may leave them out, and the admin then
 * says keys are managed elsewhere.
 */
export interface KeyManagement {
  /** Makes a key. The answer holds the key itself: show it once, it cannot be read back. */
  create(input: KeyCreateInput): Promise<{ key: string; info: KeyInfo }>
  /** Every key (revoked ones too), oldest first; with `workspaceId`, the keys that may use it. */
  list(filter?: { workspaceId?: string }): Promise<KeyInfo[]>
  /** Revokes a key: it resolves to nothing from the next request on, on every instance. False when no such key is active. */
  revoke(keyId: string): Promise<boolean>
  /** When the key was last used, or null (never, or no such key). */
  lastUsedAt(keyId: string): Promise<string | null>
}

/** Whether a key store manages its keys (`create`, `list`, `revoke`, `lastUsedAt`). */
export function managesKeys(store: KeyStore): store is KeyStore & KeyManagement {
  const maybe: KeyStore & Partial<KeyManagement> = store
  return [maybe.create, maybe.list, maybe.revoke, maybe.lastUsedAt].every((method) => typeof method === 'function')
}
