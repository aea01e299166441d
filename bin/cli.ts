#!/usr/bin/env node
// The `affiliate-service` command: `start` serves the API, `keys` manages API keys, `payouts run`
// makes the payouts due.
import { keysCommand } from './keys.js'
import { payoutsCommand } from './payouts.js'
import { startServer } from './server.js'

const USAGE = `Usage: affiliate-service <command>

  start   Serve the API. Environment: PORT, HOST, DATABASE_URL (PostgreSQL) with AFFILIATE_SCHEMA,
          or AFFILIATE_DB (the embedded database); REDIS_URL (shared rate limits);
          AFFILIATE_API_KEY with AFFILIATE_WORKSPACE_ID
  keys    Manage API keys: keys create | list | revoke (keys --help)
  payouts Pay what is due: payouts run [--workspace ID] [--campaign ID] [--as-of ISO] [--dry-run]
          (payouts --help)`

const [command, ...args] = process.argv.slice(2)

const run = async (): Promise<void> => {
  if (command === 'start') return startServer()
  if (command === 'keys') return keysCommand(args)
  if (command === 'payouts') return payoutsCommand(args)
  console.log(USAGE)
  if (command !== undefined && command !== '--help' && command !== '-h') process.exitCode = 1
}

run().catch((error: unknown) => {
  console.error('affiliate-service:', error instanceof Error ? error.message : error)
  process.exit(1)
})
