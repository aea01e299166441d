import type { ModelRecords } from '../domain/records.js'

/** The collections the service keeps. */
export type ModelName = keyof ModelRecords
export type RecordOf<M extends ModelName> = ModelRecords[M]
/** Fields of a model's records whose values are numbers: the ones `increment` may move. */
export type NumericField<M extends ModelName> = {
  [K in keyof RecordOf<M>]: RecordOf<M>[K] extends number ? K : never
}[keyof RecordOf<M>] &
  string

/** A value a `where` may compare: strings, numbers, booleans and null, compared with `===`. */
export type Scalar = string | number | boolean | null

/**
 * Conditions that all must hold. A plain value means equality (`null` matches null);
 * `{ in: [...] }` means the field equals one of the values (an empty list matches nothing);
 * `{ gt, gte, lt, lte }` (any of them, all must hold) compares the field with each bound as
 * JavaScript's `<` does for strings (code units) and numbers. A null field is in no range.
 */
export type Where<M extends ModelName> = {
  [K in keyof RecordOf<M>]?: Condition
} & { id?: Condition }

/** One field's condition in a `where`: a value (equality), `{ in: [...] }` or a range. */
export type Condition = Scalar | { in: readonly Scalar[] } | RangeCondition

/** Bounds a field's value must keep (`{ gte: a, lt: b }`: a ≤ value < b); at least one is given. */
export interface RangeCondition {
  gt?: string | number
  gte?: string | number
  lt?: string | number
  lte?: string | number
}

/** The bounds of a range condition, in the order they are checked. */
export const RANGE_OPERATORS = ['gt', 'gte', 'lt', 'lte'] as const

/** Whether a condition is a range (rather than a value or an `in` list). */
export const isRange = (condition: Condition): condition is RangeCondition =>
  condition !== null && typeof condition === 'object' && !('in' in condition)

/**
 * Whether a stored `value` meets `condition`, by the contract's rules (equality with `===`, `in`,
 * ranges compared as JavaScript's `<`, null in no range): for drivers that filter in JavaScript.
 */
export function conditionHolds(value: unknown, condition: Condition): boolean {
  if (condition === null || typeof condition !== 'object') return value === condition
  if (!isRange(condition)) return condition.in.includes(value as Scalar)
  if (value === null || value === undefined) return false
  const v = value as string | number
  return (
    (condition.gt === undefined || v > condition.gt) &&
    (condition.gte === undefined || v >= condition.gte) &&
    (condition.lt === undefined || v < condition.lt) &&
    (condition.lte === undefined || v <= condition.lte)
  )
}

export interface FindQuery<M extends ModelName> {
  where?: Where<M>
  /**
   * Case-insensitive substring that at least one of the model's `search` fields
   * (see `models`) must contain.
   */
  contains?: string
  /** Default `createdAt` descending. Ties are broken by `id` in the same direction. */
  orderBy?: { field: keyof RecordOf<M> & string; direction: 'ASC' | 'DESC' }
  offset?: number
  limit?: number
}

/**
 * The operations a transaction offers. Every method may be called only while the
 * transaction's work is running. Records returned are copies: changing them changes nothing stored.
 */
export interface StorageTransaction {
  get<M extends ModelName>(model: M, id: string): Promise<RecordOf<M> | null>
  /** Records matching the query, in its order, `offset` skipped and at most `limit` returned. */
  find<M extends ModelName>(model: M, query: FindQuery<M>): Promise<RecordOf<M>[]>
  /**
   * `find`, answering of each record only `fields` and its `id`: a storage may read just those
   * (a storage may also answer more). For reads of many records that need few of their fields.
   */
  select<M extends ModelName, F extends keyof RecordOf<M> & string>(
    model: M,
    fields: readonly F[],
    query: FindQuery<M>,
  ): Promise<Pick<RecordOf<M>, F | 'id'>[]>
  /** How many records match `where` and `contains`. */
  count<M extends ModelName>(model: M, query: Pick<FindQuery<M>, 'where' | 'contains'>): Promise<number>
  /**
   * One page of a list and the exact total it is part of: `find(model, query)` and
   * `count(model, query)` in one call, which a storage may answer with one walk.
   */
  findPage<M extends ModelName>(model: M, query: FindQuery<M>): Promise<RecordPage<RecordOf<M>>>
  /**
   * Stores a new record. Throws {@link UniqueViolationError} naming the constraint when the
   * record collides with one of the model's `unique` constraints (a constraint holding a `null`
   * field never collides), and stores nothing then.
   */
  insert<M extends ModelName>(model: M, record: RecordOf<M>): Promise<void>
  /**
   * Sets the given fields of one record and answers the record as now stored, or null when there is
   * no record with that id. Throws {@link UniqueViolationError} like `insert`.
   */
  update<M extends ModelName>(model: M, id: string, patch: Partial<RecordOf<M>>): Promise<RecordOf<M> | null>
  /**
   * Adds each delta to its numeric field atomically (`SET f = f + delta` in SQL) and answers the
   * record as now stored, or null when there is no record with that id.
   */
  increment<M extends ModelName>(model: M, id: string, deltas: Partial<Record<NumericField<M>, number>>): Promise<RecordOf<M> | null>
  /**
   * Sets the given fields on every record matching `where` and answers how many it changed. The
   * `where` is checked by the write itself, so it guards the change: `updateMany('commissions',
   * { id: { in: ids }, payoutId: null }, { payoutId })` claims only the records still unclaimed,
   * and answers fewer than `ids.length` when another transaction got some first. Throws
   * {@link UniqueViolationError} like `update`, and changes nothing then. The patch may not
   * change a field `contains` searches (see `models`).
   */
  updateMany<M extends ModelName>(model: M, where: Where<M>, patch: Partial<RecordOf<M>>): Promise<number>
  /**
   * Stores new records, all or none: like `insert` for each, but a storage may write them in one
   * statement. Throws {@link UniqueViolationError} like `insert` (a collision among the records
   * themselves included) and stores none of them then.
   */
  insertMany<M extends ModelName>(model: M, records: readonly RecordOf<M>[]): Promise<void>
  /**
   * Sets each change's fields on the record with its id, but only on the records that still match
   * `where` (checked by the write itself, as in `updateMany`), and answers how many it changed.
   * Ids missing, or whose record no longer matches, are left alone and not counted. Each id may
   * appear once. Throws {@link UniqueViolationError} like `update`, and changes nothing then. A
   * patch may not change a field `contains` searches (see `models`).
   */
  updateEach<M extends ModelName>(model: M, changes: readonly RecordPatch<M>[], where?: Where<M>): Promise<number>
  /**
   * Adds each change's deltas to the numeric fields of the record with its id (`increment` for
   * each), and answers how many records it changed: ids with no record are left out. Each id may
   * appear once.
   */
  incrementEach<M extends ModelName>(model: M, changes: readonly RecordDeltas<M>[]): Promise<number>
  /**
   * Takes `count` consecutive numbers of the sequence `name` and answers the first. The numbers
   * follow commit order: a transaction's numbers are larger than those of every transaction that
   * took numbers and committed before it, and smaller than those of every one that commits after
   * it (so a reader that has seen number n will never see a smaller one commit later). Numbers
   * taken by a transaction that rolls back may be skipped. A storage without its own way keeps the
   * sequence in the `sequences` record `name` (made at `now`, an ISO timestamp), moved with
   * `increment`: on a storage that runs transactions one at a time that is commit order.
   */
  takeSequence(name: string, count: number, now: string): Promise<number>
  /** Removes one record; true when it existed. */
  delete<M extends ModelName>(model: M, id: string): Promise<boolean>
  /** Removes every record matching `where`; answers how many. */
  deleteMany<M extends ModelName>(model: M, where: Where<M>): Promise<number>
}

/** One record's own patch in an `updateEach`. */
export interface RecordPatch<M extends ModelName> {
  id: string
  patch: Partial<RecordOf<M>>
}

/** One record's own deltas in an `incrementEach`. */
export interface RecordDeltas<M extends ModelName> {
  id: string
  deltas: Partial<Record<NumericField<M>, number>>
}

/** A page of records and how many match in all. */
export interface RecordPage<R> {
  items: R[]
  total: number
}

export interface TransactionOptions {
  /** The work only reads; a storage may run it without write locks. @default false */
  readOnly?: boolean
}

/**
 * Where the service keeps its records, typed per model. To put the service on your own database,
 * write a {@link StorageDriver} (records in, records out, no model types) and wrap it with
 * `defineStorage` from `affiliate-service/storage`; `affiliate-service/testing` has a conformance
 * kit that checks it.
 *
 * The contract:
 * - **Atomic.** `transaction(work)` commits every write of `work` when it resolves and none of
 *   them when it rejects (the rejection is passed on).
 * - **Serializable.** Concurrent transactions end as if they had run one at a time. A storage may
 *   run them one at a time (the memory and sql.js storages do) or use serializable isolation
 *   and run `work` again after a serialization failure: so `work` must only touch storage
 *   through `tx` and must be safe to run more than once.
 * - **Durable** once `transaction` resolves, to the degree the storage promises (memory: none).
 * - **Unique constraints** of `models` are enforced by the storage itself, never by a
 *   read-then-write in the caller.
 */
/** What `Storage.health` answers: whether the storage can serve now, and if not, why. */
export interface StorageHealth {
  ok: boolean
  /** Why not, in a sentence (`GET /health` answers it with a 503). */
  reason?: string
}

export interface Storage {
  transaction<T>(work: (tx: StorageTransaction) => Promise<T>, options?: TransactionOptions): Promise<T>
  /**
   * Whether the storage can serve now, answered at once (no waiting on a database): `GET /health`
   * answers 503 with the reason when not. It may start opening the storage. Without it the storage
   * is taken as able.
   */
  health?(): StorageHealth
  /** Flushes and releases what the storage holds. The service never calls it; the host does. */
  close?(): Promise<void>
  /**
   * True when no other process writes to this storage (the memory storage, a sql.js file held by
   * its lock): what the service wrote is all there is, so the click tracker can tell a new visitor
   * from memory without a read. Leave it out (as PostgreSQL does) when several instances may write.
   */
  readonly exclusive?: boolean
  /**
   * Where the storage reports failures of its own background work, which no caller awaits (a
   * sql.js checkpoint that failed, say). The service calls it once built, with its `onError`
   * (`source: 'storage'`); a storage with no such work leaves it out.
   */
  reportErrorsTo?(report: (error: unknown) => void): void
}

/** Thrown by `insert` and `update` when a record would break a unique constraint. */
export class UniqueViolationError extends Error {
  override readonly name = 'UniqueViolationError'
  constructor(readonly constraint: string) {
    super(`Unique constraint ${constraint} violated`)
  }
}

// The implementer's tier: the same operations with plain records. `defineStorage` wraps a driver
// once into the typed `Storage` above, so a storage's own code needs no casts.

/** A stored record as a driver sees it: field name to value, with its `id`. */
export type StoredRecord = { id: string } & Record<string, unknown>

/** `where` as a driver sees it: field name to condition. */
export type DriverWhere = Record<string, Condition | undefined>

/** One record's patch in a driver's `updateEach`. */
export interface DriverPatch {
  id: string
  patch: Record<string, unknown>
}

/** One record's deltas in a driver's `incrementEach`. */
export interface DriverDeltas {
  id: string
  deltas: Record<string, number | undefined>
}

export interface DriverQuery {
  where?: DriverWhere | undefined
  /** See {@link FindQuery.contains}. */
  contains?: string | undefined
  /** Default `createdAt` descending; ties broken by `id` in the same direction. */
  orderBy?: { field: string; direction: 'ASC' | 'DESC' } | undefined
  offset?: number | undefined
  limit?: number | undefined
}

/**
 * The operations of a driver's transaction: {@link StorageTransaction} with plain records, and
 * the same contract. `findPage`, `select`, `updateMany` and the batch operations (`insertMany`, `updateEach`,
 * `incrementEach`) may be left out: the typed storage then answers them with the single-record ones.
 */
export interface DriverTransaction {
  get(model: ModelName, id: string): Promise<StoredRecord | null>
  find(model: ModelName, query: DriverQuery): Promise<StoredRecord[]>
  /** See {@link StorageTransaction.select}. May be left out: the typed storage then answers `find`. */
  select?(model: ModelName, fields: readonly string[], query: DriverQuery): Promise<StoredRecord[]>
  count(model: ModelName, query: Pick<DriverQuery, 'where' | 'contains'>): Promise<number>
  findPage?(model: ModelName, query: DriverQuery): Promise<RecordPage<StoredRecord>>
  insert(model: ModelName, record: StoredRecord): Promise<void>
  update(model: ModelName, id: string, patch: Record<string, unknown>): Promise<StoredRecord | null>
  increment(model: ModelName, id: string, deltas: Record<string, number | undefined>): Promise<StoredRecord | null>
  /** See {@link StorageTransaction.updateMany}. May be left out: the typed storage then finds the records and updates each. */
  updateMany?(model: ModelName, where: DriverWhere, patch: Record<string, unknown>): Promise<number>
  /** See {@link StorageTransaction.insertMany}. May be left out: the typed storage then inserts each (and deletes them again on a failure). */
  insertMany?(model: ModelName, records: readonly StoredRecord[]): Promise<void>
  /**
   * See {@link StorageTransaction.updateEach}; the ids are distinct (the typed storage checks).
   * May be left out: the typed storage then finds the records still matching and updates each.
   */
  updateEach?(model: ModelName, changes: readonly DriverPatch[], where: DriverWhere): Promise<number>
  /** See {@link StorageTransaction.incrementEach}; the ids are distinct. May be left out: the typed storage then increments each. */
  incrementEach?(model: ModelName, changes: readonly DriverDeltas[]): Promise<number>
  /**
   * See {@link StorageTransaction.takeSequence}. May be left out: the typed storage then moves the
   * `sequences` record, which follows commit order only when transactions run one at a time (or, as
   * with serializable isolation, when two that move it never both commit).
   */
  takeSequence?(name: string, count: number): Promise<number>
  delete(model: ModelName, id: string): Promise<boolean>
  deleteMany(model: ModelName, where: DriverWhere): Promise<number>
}

/**
 * What a storage implementer writes: transactions over plain records, with the contract of
 * {@link Storage}. Other members (`ready`, `pool`, ...) are kept by `defineStorage` as they are.
 */
export interface StorageDriver {
  transaction<T>(work: (tx: DriverTransaction) => Promise<T>, options?: TransactionOptions): Promise<T>
  close?(): Promise<void>
}
