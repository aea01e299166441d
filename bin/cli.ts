#!/usr/bin/env node
// The `affiliate-service` command: `start` serves the API, `keys` manages API keys, `payouts run`
// makes the payouts due, `export`, `import` and `migrate` move every record between databases.
import { keysCommand } from './keys.js'
import { payoutsCommand } from './payouts.js'
import { recordsCommand } from './records.js'
import { startServer } from './server.js'

const USAGE = `Usage: affiliate-service <command>

  start   Serve the API. Environment: PORT, HOST, DATABASE_URL (PostgreSQL) with AFFILIATE_SCHEMA,
          or AFFILIATE_DB (the embedded database); REDIS_URL (shared rate limits);
          AFFILIATE_API_KEY with AFFILIATE_WORKSPACE_ID
  keys    Manage API keys: keys create | list | revoke (keys --help)
  payouts Pay what is due: payouts run [--workspace ID] [--campaign ID] [--as-of ISO] [--dry-run]
          (payouts --help)
  export  Every record as NDJSON on standard output, also while the server runs:
          export [--db FILE|URL] > backup.ndjson (export --help)
  import  Such a file into an empty database, checked: import [--db FILE|URL] < backup.ndjson
  migrate Every record from one database to another, checked: migrate --from FILE|URL --to FILE|URL`

const [command, ...args] = process.argv.slice(2)

const run = async (): Promise<void> => {
  if (command === 'start') return startServer()
  if (command === 'keys') return keysCommand(args)
  if (command === 'payouts') return payoutsCommand(args)
  if (command === 'export' || command === 'import' || command === 'migrate') return recordsCommand(command, args)
  console.log(USAGE)
  if (command !== undefined && command !== '--help' && command !== '-h') process.exitCode = 1
}

run().catch((error: unknown) => {
  console.error('affiliate-service:', error instanceof Error ? error.message : error)
  process.exit(1)
})
