import { isoAt, type Clock } from '../clock.js'
import { constantTimeEqual } from '../crypto.js'
import type { AffiliateApi } from '../http/typed-api.js'
import type { KeyStore } from '../keys/types.js'
import { keyedHash, randomToken } from '../site/secrets.js'
import type { SessionStore } from '../site/session.js'
import type { Storage } from '../storage/types.js'
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

/**
 * The token sign-in's sessions, nothing stored: the cookie holds `<expiry ms>.<HMAC of the expiry
 * and the token's hash>`, so a new token (or secret) ends every session.
 */
export function tokenSessions(key: () => Promise<Uint8Array>, tokenHash: string, clock: Clock, sessionMs: number): SessionStore<AdminIdentity, []> {
  const valueOf = async (expires: number) => `${expires}.${keyedHash(await key(), `admin-session:${expires}:${tokenHash}`)}`
  return {
    async read(value) {
      const expires = Number(value.split('.')[0])
      return Number.isSafeInteger(expires) && expires > clock.now() && constantTimeEqual(value, await valueOf(expires)) ? TOKEN_ADMIN : null
    },
    start: () => valueOf(clock.now() + sessionMs),
    end: () => undefined,
  }
}

/** What `admin.authorize` answers for the request, checked (a wrong answer is the host's bug: a TypeError). */
export async function authorized(config: ResolvedAdminOptions, request: Request): Promise<AdminIdentity | null> {
  if (!config.authorize) return null
  const who = await config.authorize(request)
  if (who === null || who === undefined) return null
  if (typeof who.userId !== 'string' || !(who.workspaceIds === '*' || (Array.isArray(who.workspaceIds) && who.workspaceIds.every(isUuid)))) {
    throw new TypeError('admin.authorize must answer { userId: string, workspaceIds: UUID[] | "*" } or null')
  }
  return who
}

/** The workspaces an admin can open: their own, or for an admin of every workspace those of the keys and of the campaigns. */
export async function workspacesOf(who: AdminIdentity, keyStore: KeyStore, api: AffiliateApi): Promise<string[]> {
  if (who.workspaceIds !== '*') return who.workspaceIds.map((id) => id.toLowerCase())
  const found = new Set<string>()
  const manage = keyStore as KeyStore & { list?: () => Promise<{ workspaceIds: string[] }[]> }
  if (typeof manage.list === 'function') for (const key of await manage.list()) for (const id of key.workspaceIds) found.add(id)
  for (const campaign of (await api.campaigns.list({ limit: 100 })).items) found.add(campaign.workspaceId)
  return [...found].sort()
}
