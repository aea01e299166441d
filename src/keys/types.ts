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
  /** The principal for `key`, or null when the key is unknown or revoked. */
  resolve(key: string): Promise<Principal | null>
}
