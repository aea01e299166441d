// One server of the peer benchmark in a process of its own (`fork(child.ts, [name])`), so it has
// an event loop, and on this 2-core machine a core, apart from autocannon's. It tells the parent
// where it listens, then answers each message with a reading of itself: requests received and CPU
// time used so far.
import { SERVERS, type ServerName } from './common.js'
import { startServer } from './servers.js'
import { seed } from './store.js'
import type { Reading } from '../stats.js'

export type { Reading } from '../stats.js'

const name = process.argv[2] as ServerName
if (!SERVERS.includes(name)) throw new Error(`child.ts: no server named ${name}`)
const running = await startServer(name, await seed())
let requests = 0
running.server.on('request', () => requests++)
process.on('message', () => {
  const { user, system } = process.cpuUsage()
  process.send!({ cpu: user + system, requests, at: performance.now() } satisfies Reading)
})
process.send!({ origin: running.origin, fixture: running.fixture, note: running.note })
process.on('disconnect', () => process.exit(0))
