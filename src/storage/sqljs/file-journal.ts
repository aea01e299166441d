// The contract between the sql.js storage (web-standard core) and the Node module that keeps its
// file (`src/node/file-journal.ts`). Only types live here, so the core never touches `node:*`.

/**
 * An open database file: a snapshot plus a journal of the transactions committed after it.
 * Holds the file's lock from `openFileJournal` until `close`.
 */
export interface FileJournal {
  /** The last snapshot (a SQLite database file), or null when the file does not exist yet. */
  readonly snapshot: Uint8Array | null
  /** Journal records written after that snapshot, oldest first, a torn tail already dropped. */
  readonly records: readonly Uint8Array[]
  /** Bytes appended since the last snapshot (what replay would read on the next open). */
  readonly journalBytes: number
  /** Size of the last snapshot written or read, in bytes. */
  readonly snapshotBytes: number
  /**
   * Appends one record and resolves once it is on disk (written and fsynced). Records reach the
   * disk in call order, so a record that survives a crash has every earlier one before it.
   * Once an append fails every later one fails too: the file no longer matches memory.
   */
  append(record: Uint8Array): Promise<void>
  /**
   * Makes `snapshot` the file. Records appended before this call are folded into it; the ones
   * appended after go to a fresh journal segment that survives the swap. Written to a temporary
   * file, fsynced, renamed over the file, and the directory fsynced, so a crash leaves either the
   * old snapshot with its whole journal or the new one.
   */
  checkpoint(snapshot: Uint8Array): Promise<void>
  /** Waits for pending appends, closes the journal and releases the lock. */
  close(): Promise<void>
}

/** What the Node module exports. */
export interface FileJournalModule {
  openFileJournal(path: string): Promise<FileJournal>
}
