// The click peer: what a performance-minded team would write for the redirect on its own. Hono on
// @hono/node-server, better-sqlite3 in WAL mode with synchronous=NORMAL (a commit is not fsynced;
// a power cut may lose the last ones), and per request the same work as ours: look the link up
// by its code, dedupe the visitor (a hash of link, address and user agent, its latest click within
// the hour), insert the click and bump the link's and the affiliate's counters in one
// transaction, then 302 to the link's url with the clickId added.
import { createHash, randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import { createAdaptorServer } from '@hono/node-server'
import Database from 'better-sqlite3'
import { Hono } from 'hono'

const DEDUPE_MS = 3_600_000

export interface PeerLink {
  code: string
  url: string
}

/** A new database file at `file` holding one campaign's link, and the Hono server answering its redirect. */
export function honoClickPeer(file: string, link: PeerLink): Server {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(`
    CREATE TABLE affiliates (id TEXT PRIMARY KEY, total_clicks INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE links (id TEXT PRIMARY KEY, code TEXT NOT NULL UNIQUE, url TEXT NOT NULL, affiliate_id TEXT NOT NULL, total_clicks INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE clicks (id TEXT PRIMARY KEY, link_id TEXT NOT NULL, visitor TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE INDEX clicks_visitor ON clicks (visitor, created_at);
  `)
  const affiliateId = randomUUID()
  db.prepare('INSERT INTO affiliates (id) VALUES (?)').run(affiliateId)
  db.prepare('INSERT INTO links (id, code, url, affiliate_id) VALUES (?, ?, ?, ?)').run(randomUUID(), link.code, link.url, affiliateId)

  const findLink = db.prepare<[string], { id: string; url: string; affiliate_id: string }>(
    'SELECT id, url, affiliate_id FROM links WHERE code = ?',
  )
  const latest = db.prepare<[string, number], { id: string }>(
    'SELECT id FROM clicks WHERE visitor = ? AND created_at > ? ORDER BY created_at DESC LIMIT 1',
  )
  const insertClick = db.prepare('INSERT INTO clicks (id, link_id, visitor, created_at) VALUES (?, ?, ?, ?)')
  const bumpLink = db.prepare('UPDATE links SET total_clicks = total_clicks + 1 WHERE id = ?')
  const bumpAffiliate = db.prepare('UPDATE affiliates SET total_clicks = total_clicks + 1 WHERE id = ?')
  const record = db.transaction((linkId: string, affiliate: string, visitor: string, now: number): string => {
    const seen = latest.get(visitor, now - DEDUPE_MS)
    if (seen) return seen.id
    const id = randomUUID()
    insertClick.run(id, linkId, visitor, now)
    bumpLink.run(linkId)
    bumpAffiliate.run(affiliate)
    return id
  })

  const app = new Hono<{ Bindings: { incoming: { socket: { remoteAddress?: string } } } }>()
  app.get('/api/v1/r/:code', (c) => {
    const found = findLink.get(c.req.param('code'))
    if (!found) return c.json({ status: 404, message: 'Link not found' }, 404)
    const address = c.env.incoming.socket.remoteAddress ?? ''
    const visitor = createHash('sha256')
      .update(`${found.id}\n${address}\n${c.req.header('user-agent') ?? ''}`)
      .digest('base64url')
      .slice(0, 16)
    const clickId = record(found.id, found.affiliate_id, visitor, Date.now())
    const location = new URL(found.url)
    location.searchParams.set('clickId', clickId)
    return c.body(null, 302, { location: location.toString(), 'cache-control': 'no-store' })
  })
  const server = createAdaptorServer({ fetch: app.fetch }) as Server
  server.once('close', () => db.close())
  return server
}
