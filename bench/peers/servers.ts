import type { Fixture, Running, ServerName } from './common.js'
import { startBare } from './bare.js'
import { startExpress } from './express.js'
import { startHono } from './hono.js'
import { startOurs } from './ours.js'
import { openStore, type Seed, type Store } from './store.js'

/** Starts one of the compared servers on a free port of 127.0.0.1, on its own copy of the seed's records. */
export async function startServer(name: ServerName, seed: Seed): Promise<Running & { fixture: Fixture; store: Store }> {
  const store = await openStore(seed)
  const fixture: Fixture = { campaignId: seed.campaignId, referralCode: seed.referralCode }
  const running =
    name === 'ours'
      ? await startOurs(store)
      : name === 'hono'
        ? await startHono(store)
        : name === 'express'
          ? await startExpress(store)
          : await startBare(store, fixture)
  return { ...running, fixture, store }
}
