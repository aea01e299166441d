// What `npm start` and the command-line tool read from the environment.
import { fileJournal } from '../adapters/node/file-journal.js'
import { sqlJsStorage, type SqlJsStorage } from '../src/index.js'

export const DEFAULT_DB = './data/affiliate.sqlite'

/** AFFILIATE_DB: a file path, or `:memory:` for a database that ends with the process. */
export function databaseFromEnv(env: NodeJS.ProcessEnv = process.env): { path: string; storage: SqlJsStorage } {
  const path = env.AFFILIATE_DB || DEFAULT_DB
  return { path, storage: sqlJsStorage(path === ':memory:' ? {} : { persist: fileJournal(path) }) }
}

/** A UUID derived from text, so the same key gets the same user id on every start. */
export async function stableUuid(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  digest[6] = (digest[6]! & 0x0f) | 0x40
  digest[8] = (digest[8]! & 0x3f) | 0x80
  const hex = [...digest.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** Prints the message alone (no stack) and exits 1: for mistakes the user can fix. */
export function fail(message: string): never {
  console.error(`affiliate-service: ${message}`)
  process.exit(1)
}
