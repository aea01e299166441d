// What each entry point of the package exports, against a list written out here: an internal that
// leaks out (a helper exported for a test, a module re-exported whole) fails, as does a type a host
// needs going missing. Tests reach internals through their src/ paths, never through an entry.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import config from '../../tsup.config.js'

const root = join(import.meta.dirname, '..', '..')

/** The value (runtime) exports of each tsup entry, sorted. */
const VALUES: Record<string, string[]> = {
  index: [
    'API_KEY_PREFIX',
    'AffiliateError',
    'NOTIFICATION_KINDS',
    'PUBLISHABLE_KEY_PREFIX',
    'RECORDS_FORMAT',
    'RECORDS_SCHEMA_VERSION',
    'RECORDS_VERSION',
    'RecordsImportError',
    'UUID_PATTERN',
    'consumeToken',
    'createAffiliateService',
    'developmentMailbox',
    'exportRecords',
    'generateApiKey',
    'generatePublishableKey',
    'importRecords',
    'isUuid',
    'managesKeys',
    'memoryKeyStore',
    'memoryLimiterStore',
    'memoryStorage',
    'nameUuid',
    'sqlJsStorage',
    'storageKeyStore',
    'surfaceOf',
  ],
  'adapters/node': ['createNodeWebhookSender', 'fileJournal', 'nodeRuntime', 'serve', 'toNodeListener'],
  'adapters/express': ['expressAdapter', 'expressErrorHandler'],
  'adapters/bun': ['serve'],
  'adapters/deno': ['serve'],
  'adapters/postgres': ['DEFAULT_MAX_ATTEMPTS', 'DEFAULT_SCHEMA', 'SCHEMA_VERSION', 'migrations', 'postgresStorage'],
  'adapters/redis': ['DEFAULT_LEASE_MS', 'DEFAULT_PREFIX', 'limiterPrefix', 'redisLimiterStore'],
  'storage/index': [
    'RANGE_OPERATORS',
    'UniqueViolationError',
    'conditionHolds',
    'defineStorage',
    'isRange',
    'modelNames',
    'models',
    'sampleRecords',
    'schema',
  ],
  'client/index': ['AffiliateError', 'createAffiliateClient'],
  'testing/index': ['describeStorageConformance', 'sampleRecords'],
  'webhooks/index': ['EVENT_TYPES', 'WebhookVerificationError', 'verifyWebhook'],
}

/** Types a host embedding the service names in its own code: each must come from the main entry. */
const HOST_TYPES = [
  'NotifyOptions',
  'NotificationMessage',
  'NotificationData',
  'NotificationKind',
  'BackgroundJob',
  'AffiliateEvent',
  'EventType',
  'Webhook',
  'WebhookDelivery',
  'WebhookOptions',
  'ServiceEvents',
  'TrackingLimitOptions',
  'StartOptions',
  'AffiliateServiceOptions',
  'PortalOptions',
  'WebhookSender',
  'WebhookRequest',
  'DeliveryResult',
]

const entries = (config as { entry: Record<string, string> }).entry
const libraryEntries = Object.entries(entries).filter(([name]) => !name.startsWith('bin/'))

describe('the public exports', () => {
  it('lists every entry of the build, and the build every entry of package.json "exports"', () => {
    expect(libraryEntries.map(([name]) => name).sort()).toEqual(Object.keys(VALUES).sort())
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { import: { default: string } }>
    }
    const built = Object.entries(pkg.exports)
      .filter(([path]) => path !== './package.json')
      .map(([, target]) => (typeof target === 'string' ? target : target.import.default).replace(/^\.\/dist\//, '').replace(/\.js$/, ''))
    expect(built.sort()).toEqual(Object.keys(VALUES).sort())
  })

  it.each(libraryEntries)('%s exports exactly the values listed', async (name, source) => {
    const module = (await import(join(root, source))) as Record<string, unknown>
    expect(Object.keys(module).sort()).toEqual(VALUES[name])
  })

  it('exports the types a host needs from the main entry', () => {
    // src/index.ts only re-exports (`export { .. } from`, `export type { .. } from`): its names are read from its text.
    const path = join(root, 'src/index.ts')
    const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022)
    const exported = file.statements.flatMap((statement) =>
      ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)
        ? statement.exportClause.elements.map((element) => element.name.text)
        : [],
    )
    expect(HOST_TYPES.filter((name) => !exported.includes(name))).toEqual([])
  })
})
