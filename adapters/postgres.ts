// `affiliate-service/postgres`: the Storage contract on PostgreSQL, through `pg` (an optional peer).
export { DEFAULT_MAX_ATTEMPTS, DEFAULT_SCHEMA, postgresStorage } from './postgres/storage.js'
export type { PostgresStorage, PostgresStorageOptions } from './postgres/storage.js'
export { migrations, SCHEMA_VERSION } from './postgres/migrations.js'
export type { MigrateResult, PostgresMigration } from './postgres/migrations.js'
