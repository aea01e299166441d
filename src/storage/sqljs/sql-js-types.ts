// The slice of sql.js this storage uses, typed here so the package's types never depend on
// `@types/sql.js` (which users would then have to install) and so the core stays runtime-neutral.

/** A value SQLite hands back or takes as a parameter. */
export type SqlValue = string | number | null | Uint8Array

export interface SqlJsStatement {
  bind(values?: readonly SqlValue[]): boolean
  step(): boolean
  get(): SqlValue[]
  reset(): boolean
  free(): boolean
}

export interface SqlJsDatabase {
  run(sql: string, params?: readonly SqlValue[]): SqlJsDatabase
  exec(sql: string): { columns: string[]; values: SqlValue[][] }[]
  prepare(sql: string): SqlJsStatement
  getRowsModified(): number
  /** A copy of the database file. Throws inside an open write transaction. */
  export(): Uint8Array
  close(): void
}

export interface SqlJsStatic {
  Database: new (data?: Uint8Array | null) => SqlJsDatabase
}

/** What `initSqlJs` accepts: where the wasm file is, or its bytes. */
export interface SqlJsConfig {
  locateFile?: (file: string, prefix: string) => string
  wasmBinary?: ArrayBuffer | Uint8Array
}

export type InitSqlJs = (config?: SqlJsConfig) => Promise<SqlJsStatic>
