// The storages a load benchmark runs on, each opened fresh per size and disposed after it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { fileJournal } from '../adapters/node/file-journal.js'
import { postgresStorage } from '../adapters/postgres.js'
import { sqlJsStorage, type Storage } from '../src/index.js'

export interface Target {
  name: string
  /** A fresh, empty storage; `loaded` runs after the load (e.g. ANALYZE), `dispose` removes it. */
  open(label: string): Promise<{ storage: Storage; loaded?(): Promise<void>; dispose(): Promise<void> }>
}

/** sql.js kept in a file journal in a temporary folder, named `<prefix>-<label>.sqlite`. */
export const sqlJsFileTarget = (prefix: string): Target => ({
  name: 'sql.js file',
  async open(label) {
    const dir = mkdtempSync(join(tmpdir(), `affiliate-${prefix}-bench-`))
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, `${prefix}-${label}.sqlite`)) })
    return {
      storage,
      async dispose() {
        await storage.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  },
})

/**
 * PostgreSQL in a schema of its own, dropped after. `analyze` names the tables to ANALYZE once
 * loaded: what autovacuum does within a minute of a load this size, so queries meet statistics.
 */
export const postgresTarget = (url: string, prefix: string, analyze: readonly string[]): Target => ({
  name: 'PostgreSQL',
  async open(label) {
    const pool = new pg.Pool({ connectionString: url })
    const schema = `aff_bench_${prefix}_${process.pid}_${label}`
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    return {
      storage: postgresStorage({ pool, schema }),
      loaded: async () => void (await pool.query(`ANALYZE ${analyze.map((table) => `"${schema}"."${table}"`).join(', ')}`)),
      async dispose() {
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        await pool.end()
      },
    }
  },
})
