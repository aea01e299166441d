// UUIDs: the one pattern every check uses, and ids derived from names. Time-ordered ids (clicks')
// are tracking/click-ids.ts'.
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils'

/** A UUID in its text form, any version, either case: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `value` is a string holding a UUID (see `UUID_PATTERN`). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value)

/**
 * The UUID named `name` within `namespace` (itself a UUID): the same pair always gives the same id,
 * different pairs different ids. RFC 9562 version 8, name-based with SHA-256 (its appendix B.2):
 * the first 128 bits of SHA-256(namespace bytes ‖ UTF-8 name), version nibble 8, variant bits 10.
 * Use it where an id must follow from a name, e.g. the same user id for a key on every start.
 *
 * @example nameUuid('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')
 */
export function nameUuid(namespace: string, name: string): string {
  if (!isUuid(namespace)) throw new TypeError(`nameUuid: the namespace must be a UUID, got ${JSON.stringify(namespace)}`)
  const bytes = sha256(concatBytes(hexToBytes(namespace.replaceAll('-', '').toLowerCase()), utf8ToBytes(name))).subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x80
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytesToHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
