import { LRUCache } from 'lru-cache'
import type { SqlJsDatabase, SqlJsStatement, SqlValue } from './sql-js-types.js'

/** Prepared statements kept per connection; lists build their SQL from the query, so the set is bounded. */
const MAX_CACHED_STATEMENTS = 200

/** One sql.js database with a statement cache: every query runs a prepared statement. */
export class Connection {
  /** Statements by SQL text; an evicted one is freed (sql.js statements hold wasm memory). */
  private readonly statements = new LRUCache<string, SqlJsStatement>({
    max: MAX_CACHED_STATEMENTS,
    dispose: (statement) => void statement.free(),
  })

  constructor(readonly db: SqlJsDatabase) {}

  private statement(sql: string): SqlJsStatement {
    let statement = this.statements.get(sql)
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)))
    return statement
  }

  /** Every row the query answers, as arrays in the order of its select list. */
  all(sql: string, params: readonly unknown[] = []): SqlValue[][] {
    const statement = this.statement(sql)
    try {
      // Values reach here from the sqlite dialect of the SQL builder, or `toSql`: SQLite values only.
      statement.bind(params as readonly SqlValue[])
      const rows: SqlValue[][] = []
      while (statement.step()) rows.push(statement.get())
      return rows
    } finally {
      statement.reset()
    }
  }

  /** Runs a write; answers how many rows it changed. */
  run(sql: string, params: readonly unknown[] = []): number {
    const statement = this.statement(sql)
    try {
      statement.bind(params as readonly SqlValue[])
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
    this.statements.clear()
    this.db.close()
  }
}
