import { isoAt, type Clock } from '../clock.js'
import { managesKeys, type KeyStore } from '../keys/types.js'
import { keyedHash, randomToken } from '../site/secrets.js'
import type { SessionStore } from '../site/session.js'
import type { Storage, Where } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import type { AdminIdentity, ResolvedAdminOptions } from './options.js'

// Who may open the admin: the host's `authorize`, or a session of the token sign-in; and which
// workspaces they see.

const SECRET_SETTING = 'adminSecret'

/** The storage's admin secret: made on first use, kept in `settings`, shared by every instance. */
export async function storedAdminSecret(storage: Storage, clock: Clock): Promise<string> {
  const read = () => storage.transaction((tx) => tx.get('settings', SECRET_SETTING), { readOnly: true })
  const found = await read()
  if (found) return found.value
  try {
    await storage.transaction(async (tx) => {
      if (await tx.get('settings', SECRET_SETTING)) return
      const now = isoAt(clock)
      await tx.insert('settings', { id: SECRET_SETTING, value: randomToken(), createdAt: now, updatedAt: now })
    })
  } catch (error) {
    if (!(await read())) throw error
  }
  return (await read())!.value
}

/** The admin of every workspace that the token sign-in lets in. */
const TOKEN_ADMIN: AdminIdentity = { userId: 'admin', workspaceIds: '*' }

/** A session cookie's secret: 32 random bytes, base64url. */
const SESSION_SECRET = /^[A-Za-z0-9_-]{43}$/

/**
 * The token sign-in's sessions, in the storage (`adminSessions`): the cookie holds a random secret,
 * the record's id is its HMAC under the admin's secret with the token's hash, so a new token (or
 * secret) ends every session, and signing out (deleting the record) ends it for every copy of the
 * cookie. Each sign-in deletes the sessions that have ended.
 */
export function tokenSessions(
  storage: Storage,
  key: () => Promise<Uint8Array>,
  tokenHash: string,
  clock: Clock,
  sessionMs: number,
): SessionStore<AdminIdentity, []> {
  const idOf = async (secret: string) => keyedHash(await key(), `admin-session:${tokenHash}:${secret}`)
  return {
    async read(value) {
      if (!SESSION_SECRET.test(value)) return null
      const id = await idOf(value)
      const record = await storage.transaction((tx) => tx.get('adminSessions', id), { readOnly: true })
      return record !== null && record.expiresAt > isoAt(clock) ? TOKEN_ADMIN : null
    },
    async start() {
      const secret = randomToken()
      const id = await idOf(secret)
      await storage.transaction(async (tx) => {
        const now = isoAt(clock)
        await tx.deleteMany('adminSessions', { expiresAt: { lte: now } })
        await tx.insert('adminSessions', {
          id,
          userId: TOKEN_ADMIN.userId,
          expiresAt: new Date(clock.now() + sessionMs).toISOString(),
          createdAt: now,
          updatedAt: now,
        })
      })
      return secret
    },
    async end(value) {
      if (!SESSION_SECRET.test(value)) return
      const id = await idOf(value)
      await storage.transaction(async (tx) => void (await tx.delete('adminSessions', id)))
    },
  }
}

/** What `admin.authorize` answers for the request, checked (a wrong answer is the host's bug: a TypeError). */
export async function authorized(config: ResolvedAdminOptions, request: Request): Promise<AdminIdentity | null> {
  if (!config.authorize) return null
  const who = await config.authorize(request)
  if (who === null || who === undefined) return null
  if (
    typeof who.userId !== 'string' ||
    !(who.workspaceIds === '*' || (Array.isArray(who.workspaceIds) && who.workspaceIds.every(isUuid)))
  ) {
    throw new TypeError('admin.authorize must answer { userId: string, workspaceIds: UUID[] | "*" } or null')
  }
  return who
}

/** At most this many workspaces are listed for an admin of every workspace (one storage read each). */
const MAX_WORKSPACES = 500

/**
 * Each workspace that has campaigns, in order: one read per workspace, each the first campaign of a
 * workspace after the last one found (a skip scan of the campaigns' workspace index), so a workspace
 * with ten thousand campaigns costs what one with a single campaign does.
 */
async function workspacesWithCampaigns(storage: Storage): Promise<string[]> {
  return storage.transaction(
    async (tx) => {
      const found: string[] = []
      let after: string | null = null
      while (found.length < MAX_WORKSPACES) {
        const where: Where<'campaigns'> = after === null ? {} : { workspaceId: { gt: after } }
        const [next] = await tx.find('campaigns', { where, orderBy: { field: 'workspaceId', direction: 'ASC' }, limit: 1 })
        if (!next) break
        found.push(next.workspaceId)
        after = next.workspaceId
      }
      return found
    },
    { readOnly: true },
  )
}

/**
 * The workspaces an admin can open: those `authorize` grants, or for an admin of every workspace
 * each workspace with campaigns or with API keys (lowercase, sorted).
 */
export async function workspacesOf(who: AdminIdentity, keyStore: KeyStore, storage: Storage): Promise<string[]> {
  if (who.workspaceIds !== '*') return [...new Set(who.workspaceIds.map((id) => id.toLowerCase()))]
  const found = new Set(await workspacesWithCampaigns(storage))
  if (managesKeys(keyStore)) for (const key of await keyStore.list()) for (const id of key.workspaceIds) found.add(id.toLowerCase())
  return [...found].sort()
}
