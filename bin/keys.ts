// `affiliate-service keys create|list|revoke`: manage the API keys kept in the database.
import { parseArgs } from 'node:util'
import { normalizeOrigin } from '../src/keys/origins.js'
import { isUuid, storageKeyStore } from '../src/index.js'
import { fail, openCommandStorage } from './env.js'

export const KEYS_USAGE = `Usage: affiliate-service keys <command> [options]

  create [--workspace <uuid>]... [--label <text>] [--user <uuid>]
         Makes a key and prints it once. Without --workspace, a new workspace id is made.
  create --publishable --workspace <uuid>... [--origin <origin>]... [--label <text>]
         Makes a publishable key (pk_live_…) for the tracking beacon in web pages: it can
         only record clicks and opens. --origin (e.g. https://shop.example.com, or *) says
         which sites' pages may call it (CORS); repeat it for several.
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
      publishable: { type: 'boolean' },
      origin: { type: 'string', multiple: true },
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
  const origins = values.origin ?? []
  if (origins.length && !values.publishable) fail('--origin is for publishable keys: add --publishable')
  if (values.publishable && command !== 'create') fail('--publishable goes with keys create')
  if (values.publishable && workspaces.length === 0) fail('a publishable key needs --workspace: the workspaces whose links it tracks')
  for (const origin of origins) {
    try {
      normalizeOrigin(origin)
    } catch (error) {
      fail((error as Error).message)
    }
  }

  const { storage, where } = await openCommandStorage(values.db, env)
  const keys = storageKeyStore(storage)
  try {
    if (command === 'create') {
      const workspaceIds = workspaces.length ? workspaces : [crypto.randomUUID()]
      const input = {
        workspaceIds,
        ...(values.label !== undefined ? { label: values.label } : {}),
        ...(values.user !== undefined ? { userId: values.user } : {}),
      }
      const { key, info } = values.publishable
        ? await keys.createPublishable({ ...input, allowedOrigins: origins })
        : await keys.create(input)
      console.log(`key id     ${info.id}`)
      console.log(`workspaces ${info.workspaceIds.join(', ')}`)
      if (values.publishable) console.log(`origins    ${info.allowedOrigins.join(', ') || '(none: calls from servers only)'}`)
      console.log(`key        ${key}`)
      console.log('The key is shown this once; only its hash is kept.')
    } else if (command === 'list') {
      const all = await keys.list()
      if (all.length === 0) console.log(`No keys in ${where}.`)
      for (const key of all) {
        const state = key.revokedAt ? `revoked ${key.revokedAt}` : 'active'
        const kind = key.kind === 'publishable' ? `publishable ${key.allowedOrigins.join(',') || '-'}` : 'secret'
        console.log([key.id, `${key.prefix}…`, key.workspaceIds.join(','), kind, state, key.createdAt, key.label].join('  ').trimEnd())
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
