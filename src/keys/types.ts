/** Who is calling: what an API key resolves to. */
export interface Principal {
  /** Identifies the key (never the key itself); rate limits and retries are counted per key id. */
  keyId: string
  /** Recorded as `userId` on the links this principal creates. */
  userId: string
  /** The workspaces this principal may read and write. */
  workspaceIds: readonly string[]
}

/** Resolves the `x-auth-service` header to a principal. */
export interface KeyStore {
  /** The principal for `key`, or null when the key is unknown or revoked. */
  resolve(key: string): Promise<Principal | null>
}
