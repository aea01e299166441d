import { utf8ToBytes } from '@noble/hashes/utils'
import { DAY_MS } from '../domain/due.js'
import type { Runtime } from '../runtime.js'

// Who clicked, kept unrecognisable. A click record holds no address and no user agent, only
//   visitor = base64url(HMAC-SHA256(daySalt, event | linkId | address | userAgent))[0..16)
//   daySalt = HMAC-SHA256(secret, "affiliate-service click salt " + UTC day number)
// The secret is the `trackingSecret` option or, without it, 32 random bytes the service keeps in
// its storage (the `settings` record `clickSalt`, made on first use): never sent anywhere, so
// nobody outside can compute a salt, and one day's hashes cannot be linked to the next day's.
// 96 bits: two visitors of one link colliding within a dedupe window is not a concern.

const VISITOR_BYTES = 12

/** The UTC day (days since 1970-01-01) an epoch-ms instant falls in. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS)

/** Derives daily salts from one secret, keeping the last few days' in memory. */
export class VisitorHasher {
  private readonly salts = new Map<number, Uint8Array>()
  private readonly secret: Uint8Array

  constructor(secret: string) {
    this.secret = utf8ToBytes(secret)
  }

  /** The salt of a UTC day. */
  salt(runtime: Pick<Runtime, 'hmacSha256'>, day: number): Uint8Array {
    let salt = this.salts.get(day)
    if (!salt) {
      salt = runtime.hmacSha256(this.secret, `affiliate-service click salt ${day}`)
      if (this.salts.size >= 4) this.salts.delete(this.salts.keys().next().value!)
      this.salts.set(day, salt)
    }
    return salt
  }

  /**
   * The visitor hash of one event on one link by one address and user agent, under `day`'s salt,
   * with the hashes of the caller's runtime (the same bytes whichever).
   */
  visitor(runtime: Runtime, day: number, event: string, linkId: string, address: string, userAgent: string): string {
    const mac = runtime.hmacSha256(this.salt(runtime, day), `${event}\n${linkId}\n${address}\n${userAgent}`)
    return runtime.base64url(mac.subarray(0, VISITOR_BYTES))
  }
}
