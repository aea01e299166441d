// `affiliate-service keys create|list|revoke`: manage the API keys kept in the database.
import { parseArgs } from 'node:util'
import { isUuid, storageKeyStore } from '../src/index.js'
import { fail, openCommandStorage } from './env.js'

export const KEYS_USAGE = `Usage: affiliate-service keys <command> [options]

  create [--workspace <uuid>]... [--label <text>] [--user <uuid>]
         Makes a key and prints it once. Without --workspace, a new workspace id is made.
  list   Prints every key's id, prefix, workspaces, label and state (never the keys).
  revoke <key id>
         Refuses the key from the next request on.

  --db <path>   the embedded database file (default: AFFILIATE_DB, else ./data/affiliate.sqlite)

With DATABASE_URL set, the keys are those in PostgreSQL (schema AFFILIATE_SCHEMA, default
affiliate_service), managed while the servers run: a revoked key is refused by every instance.
With the file database the server holds a lock: stop it before managing keys.`

export async function keysCommand(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      db: { type: 'string' },
      workspace: { type: 'string', multiple: true },
      label: { type: 'string' },
      user: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const [command, ...rest] = positionals
  if (values.help || !command) {
    console.log(KEYS_USAGE)
    return
  }
  if (!['create', 'list', 'revoke'].includes(command)) fail(`unknown keys command ${command}\n\n${KEYS_USAGE}`)
  const workspaces = values.workspace ?? []
  for (const id of [...workspaces, ...(values.user ? [values.user] : [])]) if (!isUuid(id)) fail(`${id} is not a UUID`)
  if (command === 'revoke' && rest.length !== 1) fail('keys revoke takes one key id (see `keys list`)')

  const { storage, where } = await openCommandStorage(values.db, env)
  const keys = storageKeyStore(storage)
  try {
    if (command === 'create') {
      const workspaceIds = workspaces.length ? workspaces : [crypto.randomUUID()]
      const { key, info } = await keys.create({
        workspaceIds,
        ...(values.label !== undefined ? { label: values.label } : {}),
        ...(values.user !== undefined ? { userId: values.user } : {}),
      })
      console.log(`key id     ${info.id}`)
      console.log(`workspaces ${info.workspaceIds.join(', ')}`)
      console.log(`key        ${key}`)
      console.log('The key is shown this once; only its hash is kept.')
    } else if (command === 'list') {
      const all = await keys.list()
      if (all.length === 0) console.log(`No keys in ${where}.`)
      for (const key of all) {
        const state = key.revokedAt ? `revoked ${key.revokedAt}` : 'active'
        console.log([key.id, `${key.prefix}…`, key.workspaceIds.join(','), state, key.createdAt, key.label].join('  ').trimEnd())
      }
    } else {
      const id = rest[0]!
      if (await keys.revoke(id)) console.log(`Revoked ${id}.`)
      else {
        console.error(`affiliate-service: no active key with id ${id}`)
        process.exitCode = 1
      }
    }
  } finally {
    await storage.close()
  }
}
