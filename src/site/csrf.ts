import { constantTimeEqual } from '../crypto.js'
import { keyedHash, randomToken } from './secrets.js'

const SEED = /^[A-Za-z0-9_-]{43}$/

/**
 * CSRF tokens as a double submit: the browser holds a random seed in a cookie of the site, and
 * every form carries the HMAC of that seed under the site's key. A form is taken only when its
 * seed came with the request and its token is the one made from it.
 */
export function csrfTokens(key: Uint8Array) {
  const tokenOf = (seed: string) => keyedHash(key, `csrf:${seed}`)
  return {
    /** The seed the browser sent, or a new one (`fresh`: to set in its cookie) when it sent none that could be one. */
    seedOf(sent: string | undefined): { seed: string; fresh: boolean } {
      return sent !== undefined && SEED.test(sent) ? { seed: sent, fresh: false } : { seed: randomToken(), fresh: true }
    },
    tokenOf,
    /** Whether a form's `token` belongs to the seed the browser `sent` (compared in constant time). */
    check(sent: string | undefined, token: string): boolean {
      return sent !== undefined && SEED.test(sent) && constantTimeEqual(token, tokenOf(sent))
    },
  }
}

export type CsrfTokens = ReturnType<typeof csrfTokens>
