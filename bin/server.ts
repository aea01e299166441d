// `npm start` and `affiliate-service start`: the API over node:http on the embedded database.
// Environment: PORT (default 3000, 0 picks a free port), AFFILIATE_DB (default
// ./data/affiliate.sqlite, `:memory:` for memory), AFFILIATE_API_KEY with AFFILIATE_WORKSPACE_ID
// (that key for that workspace), AFFILIATE_SHUTDOWN_TIMEOUT_MS (default 10000).
import { serve } from '../adapters/node.js'
import { createAffiliateService, isUuid, memoryKeyStore, storageKeyStore, type KeyStore, type StorageKeyStore } from '../src/index.js'
import { databaseFromEnv, envKeyUserId, fail } from './env.js'

/** The environment's key (kept in memory only: it is configuration, not data) before the stored ones. */
async function keysFromEnv(env: NodeJS.ProcessEnv, stored: StorageKeyStore): Promise<KeyStore> {
  const key = env.AFFILIATE_API_KEY
  const workspaceId = env.AFFILIATE_WORKSPACE_ID
  if (!key) {
    if (workspaceId) fail('AFFILIATE_WORKSPACE_ID needs AFFILIATE_API_KEY: the key that may use that workspace')
    if ((await stored.list()).length === 0) {
      const workspace = crypto.randomUUID()
      const { key: created, info } = await stored.create({ workspaceIds: [workspace], label: 'made by the first start' })
      console.log(`Made an API key for workspace ${workspace} (key id ${info.id}). It is shown once, here:`)
      console.log(`  ${created}`)
      console.log('Send it in the x-auth-service header. Manage keys with `npx affiliate-service keys`.')
    }
    return stored
  }
  if (!workspaceId) fail('AFFILIATE_API_KEY needs AFFILIATE_WORKSPACE_ID: the workspace that key may use')
  if (!isUuid(workspaceId)) fail(`AFFILIATE_WORKSPACE_ID must be a UUID, got ${workspaceId}`)
  const fromEnv = memoryKeyStore([{ key, userId: envKeyUserId(key), workspaceIds: [workspaceId] }])
  return { resolve: async (presented) => (await fromEnv.resolve(presented)) ?? stored.resolve(presented) }
}

export async function startServer(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const port = Number(env.PORT ?? 3000)
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`PORT must be a port number, got ${env.PORT}`)
  const shutdownTimeout = Number(env.AFFILIATE_SHUTDOWN_TIMEOUT_MS ?? 10_000)
  const { path, storage } = databaseFromEnv(env)
  try {
    await storage.ready()
  } catch (error) {
    fail(`cannot open the database ${path}: ${error instanceof Error ? error.message : String(error)}`)
  }
  const keyStore = await keysFromEnv(env, storageKeyStore(storage))
  const service = createAffiliateService({ storage, keyStore })
  const running = await serve(service, { port })
  console.log(`affiliate-service listening on ${running.url} (database: ${path})`)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    console.log(`affiliate-service: ${signal}, finishing requests in flight`)
    // A client that never finishes must not hold the shutdown (and the database lock) forever.
    const timer = setTimeout(() => running.server.closeAllConnections(), shutdownTimeout)
    timer.unref()
    let code = 0
    try {
      await running.close()
    } catch (error) {
      console.error('affiliate-service: closing the server failed', error)
      code = 1
    }
    try {
      await storage.close()
      console.log('affiliate-service: stopped, database flushed')
    } catch (error) {
      console.error('affiliate-service: flushing the database failed', error)
      code = 1
    }
    process.exit(code)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
}
