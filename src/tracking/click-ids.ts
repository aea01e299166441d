// Click ids: time-ordered UUIDs (version 7), so click records' primary key is in time order and
// pruning walks it. With the tracker, this loads on the first tracked event (the uuid package is
// twenty modules: importing the package does not load it).
import { bytesToHex } from '@noble/hashes/utils'
import { v7 as uuidV7 } from 'uuid'
import { sha256Bytes } from '../crypto.js'

/**
 * A new time-ordered UUID (RFC 9562 version 7, from the `uuid` package) for the instant `ms`:
 * 48 bits of milliseconds, then random bits, so as lower-case text ids made later sort after.
 * Click records use them, so their primary key is in time order and pruning walks it.
 */
export const timeUuid = (ms: number): string => uuidV7({ msecs: ms })

/**
 * The lowest version-7 UUID text of the instant `ms`: every `timeUuid` made at or after `ms` sorts
 * at or above it, every one made before, below.
 */
export function timeUuidFloor(ms: number): string {
  const hex = Math.min(Math.max(0, Math.floor(ms)), 2 ** 48 - 1)
    .toString(16)
    .padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`
}

/**
 * The time-ordered UUID (version 7 layout) that `key` names at the instant `ms`: the same pair
 * always gives the same id. Its 48 bits of milliseconds are `ms`; the other 74 bits come from
 * SHA-256 of the key. Click records deduplicated by a key use it, so every instance that counts the
 * same visit answers the same clickId before writing it, and the primary key is the dedupe key.
 * `sha256Of` is the runtime's SHA-256 (see `Runtime`); the same bytes whichever.
 */
export function keyedTimeUuid(ms: number, key: string, sha256Of: (text: string) => Uint8Array = sha256Bytes): string {
  const bytes = sha256Of(key).subarray(0, 16)
  const time = Math.min(Math.max(0, Math.floor(ms)), 2 ** 48 - 1)
  for (let i = 5, t = time; i >= 0; i--, t = Math.floor(t / 256)) bytes[i] = t % 256
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytesToHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
