import type { Visit } from './visit.js'

/**
 * Where a site's sessions live: in the storage, for the portal (`portalTokens`) and the admin's
 * token sign-in (`adminSessions`). The cookie holds a random secret and the record's id is its
 * keyed hash, so ending the record ends the session for every copy of the cookie.
 */
export interface SessionStore<S, A extends unknown[]> {
  /** The session this cookie value names, while it lasts; null otherwise. */
  read(value: string): Promise<S | null> | S | null
  /** A new session: the cookie's value. */
  start(...args: A): Promise<string> | string
  /** Ends the session of this cookie value: no copy of the cookie opens it again. */
  end(value: string): Promise<void> | void
}

/** A site's session cookie over its store: read, started (ending the one before) and ended through a visit. */
export function sessionCookie<S, A extends unknown[]>(name: string, lifetimeMs: number, store: SessionStore<S, A>) {
  return {
    /** The visit's session; a cookie naming none that lasts is removed. */
    async get(v: Visit): Promise<S | null> {
      const value = v.cookies.get(name)
      if (!value) return null
      const session = await store.read(value)
      if (!session) v.cookie(name, '', 0)
      return session
    },
    /** Starts a session on this browser (signing in), ending the one it had, with a new CSRF seed. */
    async start(v: Visit, ...args: A): Promise<void> {
      const previous = v.cookies.get(name)
      if (previous) await store.end(previous)
      v.cookie(name, await store.start(...args), Math.floor(lifetimeMs / 1000))
      v.renewCsrf()
    },
    /** Ends the visit's session and removes its cookie (signing out). */
    async end(v: Visit): Promise<void> {
      const value = v.cookies.get(name)
      if (value) await store.end(value)
      v.cookie(name, '', 0)
    },
  }
}
