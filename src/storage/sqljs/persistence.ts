// What `sqlJsStorage({ persist })` takes: a place that keeps the database between runs. The core
// only knows this contract; the file-system one (`fileJournal` from `affiliate-service/node`)
// lives with the Node adapter, so nothing in the core imports `node:*`.

/**
 * An open, locked database store: a snapshot plus a journal of the transactions committed after
 * it. Holds its lock from `SqlJsPersistence.open` until `close`.
 */
export interface SqlJsJournal {
  /** The last snapshot (a SQLite database file), or null when there is none yet. */
  readonly snapshot: Uint8Array | null
  /** Journal records written after that snapshot, oldest first, a torn tail already dropped. */
  readonly records: readonly Uint8Array[]
  /** Bytes appended since the last snapshot (what replay would read on the next open). */
  readonly journalBytes: number
  /** Size of the last snapshot written or read, in bytes. */
  readonly snapshotBytes: number
  /**
   * A still copy read from a store another process may hold (no lock taken): the storage answers
   * reads, refuses every write and never checkpoints. @default false
   */
  readonly readOnly?: boolean
  /**
   * Appends one record and resolves once it is durable. Records become durable in call order, so
   * a record that survives a crash has every earlier one before it. Appends made while an earlier
   * one is being synced may share its successor's sync (group commit); each still resolves only
   * once its own record is durable. Once an append fails, the appends waiting with it and every
   * later append and checkpoint fail too: the store no longer matches memory.
   */
  append(record: Uint8Array): Promise<void>
  /**
   * Makes `snapshot` the stored database. Records appended before this call are folded into it;
   * the ones appended after survive the swap. A crash leaves either the old snapshot with its
   * whole journal or the new one.
   */
  checkpoint(snapshot: Uint8Array): Promise<void>
  /** Waits for pending appends, closes the journal and releases the lock. */
  close(): Promise<void>
}

/**
 * Where a sql.js database is kept: opened once, when the storage opens.
 * @example sqlJsStorage({ persist: fileJournal('./data/affiliate.sqlite') })
 */
export interface SqlJsPersistence {
  open(): Promise<SqlJsJournal>
}
