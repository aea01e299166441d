// `npm start` and `affiliate-service start`: the API over node:http. Environment:
//   PORT (default 3000, 0 picks a free port), HOST (default 127.0.0.1; 0.0.0.0 or :: for every interface)
//   DATABASE_URL (PostgreSQL; AFFILIATE_SCHEMA its schema) or AFFILIATE_DB (default
//     ./data/affiliate.sqlite, `:memory:` for memory)
//   REDIS_URL (rate limits shared by every instance in Redis)
//   AFFILIATE_API_KEY with AFFILIATE_WORKSPACE_ID (that key for that workspace)
//   AFFILIATE_SHUTDOWN_TIMEOUT_MS (default 10000)
//   AFFILIATE_RATE_LIMIT (off), AFFILIATE_RATE_LIMIT_CAPACITY, _REFILL, _IN_FLIGHT (the per-key limit)
//   SMTP_URL with AFFILIATE_MAIL_FROM (mail through nodemailer; unset: the development mailbox),
//   AFFILIATE_NOTIFY_OWNERS, AFFILIATE_PROGRAM_NAME (notifications)
//   AFFILIATE_PORTAL_SECRET with AFFILIATE_PUBLIC_URL (the portal)
//   AFFILIATE_WEBHOOKS_ALLOW_HTTP, AFFILIATE_WEBHOOKS_ALLOW_PRIVATE (webhooks' development mode)
//   AFFILIATE_TRUST_PROXY (the number of proxies in front: client address and https from their X-Forwarded- headers)
//   AFFILIATE_ADMIN_TOKEN (32+ characters: signs in to the admin at /admin; unset: made, printed once, kept as a hash)
// docs/configuration.md has the table.
import { serve } from '../adapters/node.js'
import {
  createAffiliateService,
  isUuid,
  memoryKeyStore,
  storageKeyStore,
  type KeyManagement,
  type KeyStore,
  type StorageKeyStore,
} from '../src/index.js'
import {
  adminTokenFromEnv,
  envKeyUserId,
  fail,
  limiterFromEnv,
  mailFromEnv,
  notifyFromEnv,
  portalFromEnv,
  rateLimitFromEnv,
  reachableUrl,
  reason,
  storageFromEnv,
  trustProxyFromEnv,
  webhooksFromEnv,
} from './env.js'

/** The environment's key (kept in memory only: it is configuration, not data) before the stored ones. */
async function keysFromEnv(env: NodeJS.ProcessEnv, stored: StorageKeyStore): Promise<KeyStore & KeyManagement> {
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
  // The stored keys stay manageable (the admin's Settings → Integrations); the environment's key is not listed.
  return {
    resolve: async (presented) => (await fromEnv.resolve(presented)) ?? stored.resolve(presented),
    create: (input) => stored.create(input),
    list: (filter) => stored.list(filter),
    revoke: (keyId) => stored.revoke(keyId),
    lastUsedAt: (keyId) => stored.lastUsedAt(keyId),
  } satisfies KeyStore & KeyManagement
}

export async function startServer(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Read first: a bad value stops the start before anything opens.
  const trustProxy = trustProxyFromEnv(env)
  const port = Number(env.PORT || 3000)
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`PORT must be a port number, got ${env.PORT}`)
  const hostname = env.HOST || '127.0.0.1'
  const shutdownTimeout = Number(env.AFFILIATE_SHUTDOWN_TIMEOUT_MS ?? 10_000)
  // Settings are checked before anything opens: a mistake stops the start with its reason.
  const rateLimit = rateLimitFromEnv(env)
  const webhooks = webhooksFromEnv(env)
  const mail = await mailFromEnv(env)
  const portal = portalFromEnv(env, mail)
  const notify = notifyFromEnv(env, mail)
  const { storage, where } = await storageFromEnv(env)
  const limiter = await limiterFromEnv(env)
  // Both checked before serving: a database or Redis that does not answer stops the start, plainly.
  const [opened, counted] = await Promise.allSettled([storage.ready(), limiter?.store.ready()])
  if (opened.status === 'rejected' || counted.status === 'rejected') {
    await Promise.allSettled([storage.close(), limiter?.store.close()])
    if (opened.status === 'rejected') fail(`cannot open the database ${where}: ${reason(opened.reason)}`)
    fail(`cannot reach ${limiter!.where}: ${reason((counted as PromiseRejectedResult).reason)}`)
  }
  const keyStore = await keysFromEnv(env, storageKeyStore(storage))
  const admin = await adminTokenFromEnv(env, storage)
  const { off, ...rule } = rateLimit
  const service = createAffiliateService({
    storage,
    keyStore,
    rateLimit: off ? false : { ...rule, ...(limiter ? { store: limiter.store } : {}) },
    webhooks,
    admin: { tokenHash: admin.tokenHash },
    ...(portal
      ? {
          portal: {
            secret: portal.secret,
            publicUrl: portal.publicUrl,
            sendSignInLink: portal.sendSignInLink,
            sendNotice: portal.sendNotice,
          },
        }
      : {}),
    notify,
  })
  let running: Awaited<ReturnType<typeof serve>>
  try {
    running = await serve(service, { port, hostname, trustProxy })
  } catch (error) {
    await Promise.allSettled([storage.close(), limiter?.store.close()])
    fail(`cannot listen on ${hostname}:${port}: ${reason(error)}`)
  }
  const shown = reachableUrl(running.url)
  const every = new URL(shown).hostname === new URL(running.url).hostname ? '' : `; bound to every interface, HOST=${hostname}`
  // Printed before the ready line, so whoever waits for that line has read these too.
  if (portal) console.log(`affiliate-service: portal at ${portal.publicUrl}${service.portalPath}`)
  console.log(`affiliate-service: e-mail to ${mail.where}`)
  if (webhooks.allowHttp || webhooks.allowPrivateAddresses)
    console.log('affiliate-service: webhooks in development mode (http or private addresses allowed): not for production')
  console.log(
    `affiliate-service listening on ${shown} (database: ${where}; rate limits: ${off ? 'off' : (limiter?.where ?? 'in memory')}${every})`,
  )
  if (admin.madeToken) {
    console.log('Made an admin token. It is shown once, here (only its hash is kept):')
    console.log(`  ${admin.madeToken}`)
    console.log(`Sign in at ${new URL('/admin/sign-in', shown).href} (set AFFILIATE_ADMIN_TOKEN to choose your own).`)
  } else {
    console.log(`Admin dashboard: ${new URL('/admin', shown).href}`)
  }

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
    mail.close()
    try {
      await limiter?.store.close()
    } catch (error) {
      console.error('affiliate-service: closing Redis failed', reason(error))
      code = 1
    }
    process.exit(code)
  }
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
}
