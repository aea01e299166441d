import { SearchIndex } from './search-index.js'
import type { SqlJsDatabase, SqlJsStatement, SqlValue } from './sql-js-types.js'

/** Prepared statements kept per connection; lists build their SQL from the query, so the set is bounded. */
const MAX_CACHED_STATEMENTS = 200

/** One sql.js database with a statement cache: every query runs a prepared statement. */
export class Connection {
  private readonly statements = new Map<string, SqlJsStatement>()
  /** Moves on every write, so a remembered count is known to be stale. */
  version = 0
  /** The total a filtered page found, for the `count` a list page asks for next. */
  lastTotal: { key: string; version: number; total: number } | null = null
  /** Committed search texts, for `contains` (see SearchIndex). */
  readonly search = new SearchIndex(this)

  constructor(readonly db: SqlJsDatabase) {}

  private statement(sql: string): SqlJsStatement {
    let statement = this.statements.get(sql)
    if (statement) {
      // Re-inserting keeps the map in least-recently-used order for eviction.
      this.statements.delete(sql)
    } else {
      statement = this.db.prepare(sql)
      if (this.statements.size >= MAX_CACHED_STATEMENTS) {
        const [oldest, evicted] = this.statements.entries().next().value!
        this.statements.delete(oldest)
        evicted.free()
      }
    }
    this.statements.set(sql, statement)
    return statement
  }

  /** Every row the query answers, as arrays in the order of its select list. */
  all(sql: string, params: readonly SqlValue[] = []): SqlValue[][] {
    const statement = this.statement(sql)
    try {
      statement.bind(params)
      const rows: SqlValue[][] = []
      while (statement.step()) rows.push(statement.get())
      return rows
    } finally {
      statement.reset()
    }
  }

  /** Runs a write; answers how many rows it changed. */
  run(sql: string, params: readonly SqlValue[] = []): number {
    const statement = this.statement(sql)
    try {
      statement.bind(params)
      statement.step()
      return this.db.getRowsModified()
    } finally {
      statement.reset()
    }
  }

  /** Runs several statements without parameters (schema changes, BEGIN/COMMIT). */
  exec(sql: string): void {
    this.db.exec(sql)
  }

  close(): void {
    for (const statement of this.statements.values()) statement.free()
    this.statements.clear()
    this.db.close()
  }
}
