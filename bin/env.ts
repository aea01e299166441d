// What `npm start` and the command-line tool read from the environment.
import { nameUuid, sqlJsStorage, type SqlJsStorage } from '../src/index.js'

export const DEFAULT_DB = './data/affiliate.sqlite'

/** AFFILIATE_DB: a file path, or `:memory:` for a database that ends with the process. */
export function databaseFromEnv(env: NodeJS.ProcessEnv = process.env): { path: string; storage: SqlJsStorage } {
  const path = env.AFFILIATE_DB || DEFAULT_DB
  return { path, storage: sqlJsStorage(path === ':memory:' ? {} : { file: path }) }
}

/**
 * The namespace of the user ids given to environment keys (AFFILIATE_API_KEY). examples/postgres-redis
 * uses the same one, so a key gets the same user id whichever of them serves it.
 */
export const ENV_KEY_NAMESPACE = '73a74ff6-9c63-4a16-a1b0-ad25c284060c'

/** The user id of an environment key: derived from the key, so it is the same on every start and instance. */
export const envKeyUserId = (key: string): string => nameUuid(ENV_KEY_NAMESPACE, key)

/** Prints the message alone (no stack) and exits 1: for mistakes the user can fix. */
export function fail(message: string): never {
  console.error(`affiliate-service: ${message}`)
  process.exit(1)
}
