import type { ModelName } from '../storage/types.js'

/**
 * Why an import stopped:
 * - `not_empty`: the storage already held records; nothing was written.
 * - `invalid_records`: the lines are not a whole records file of this version (`line` says where).
 * - `verification_failed`: what the storage holds once written differs from the file's trailer.
 * - `storage_failed`: the storage refused a write (the cause is kept as `cause`).
 */
export type RecordsImportErrorCode = 'not_empty' | 'invalid_records' | 'verification_failed' | 'storage_failed'

export interface RecordsImportErrorDetails {
  /** The line (1-based) the import stopped at, when a line is to blame. */
  line?: number
  /** Records this import had written when it stopped, per model (committed, before any clean-up). */
  written?: Partial<Record<ModelName, number>>
  /**
   * What of this import the storage still holds, per model (the records written), when emptying
   * it again failed too: drop those before importing again. Empty when nothing of it is left.
   */
  remaining?: Partial<Record<ModelName, number>>
  cause?: unknown
}

/**
 * The error `importRecords` throws. Its message says what failed and what became of the storage:
 * left as it was (`not_empty`), emptied again, or, when even that failed, exactly which records
 * remain to be dropped (`remaining`, and the message names them).
 */
export class RecordsImportError extends Error {
  override readonly name = 'RecordsImportError'
  readonly line?: number
  readonly written: Partial<Record<ModelName, number>>
  readonly remaining: Partial<Record<ModelName, number>>

  constructor(
    readonly code: RecordsImportErrorCode,
    message: string,
    details: RecordsImportErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    if (details.line !== undefined) this.line = details.line
    this.written = details.written ?? {}
    this.remaining = details.remaining ?? {}
  }
}
