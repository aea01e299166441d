import type {
  DriverQuery,
  DriverTransaction,
  ModelName,
  RecordOf,
  RecordPage,
  Storage,
  StorageDriver,
  StorageTransaction,
  StoredRecord,
} from './types.js'

// The one place where plain records become typed ones. A driver stores what it is given and hands
// it back field for field (the conformance kit checks that), so a record read from `model` is a
// `RecordOf<model>`: that is the whole of the claim made here.
const typedOne = <M extends ModelName>(record: StoredRecord | null): RecordOf<M> | null => record as RecordOf<M> | null
const typedAll = <M extends ModelName>(records: StoredRecord[]): RecordOf<M>[] => records as RecordOf<M>[]

/** The typed view of one driver transaction. */
function typedTransaction(tx: DriverTransaction): StorageTransaction {
  const page = tx.findPage
    ? (model: ModelName, query: DriverQuery) => tx.findPage!(model, query)
    : async (model: ModelName, query: DriverQuery): Promise<RecordPage<StoredRecord>> => {
        const items = await tx.find(model, query)
        return { items, total: await tx.count(model, { where: query.where, contains: query.contains }) }
      }
  return {
    get: async (model, id) => typedOne(await tx.get(model, id)),
    find: async (model, query) => typedAll(await tx.find(model, query)),
    count: (model, query) => tx.count(model, query),
    findPage: async (model, query) => {
      const { items, total } = await page(model, query)
      return { items: typedAll(items), total }
    },
    insert: (model, record) => tx.insert(model, record),
    update: async (model, id, patch) => typedOne(await tx.update(model, id, patch)),
    increment: async (model, id, deltas) => typedOne(await tx.increment(model, id, deltas)),
    delete: (model, id) => tx.delete(model, id),
    deleteMany: (model, where) => tx.deleteMany(model, where),
  }
}

/**
 * Wraps a {@link StorageDriver} (plain records in and out) into the typed {@link Storage} the
 * service takes. Every other member of the driver (`ready`, `close`, a pool, ...) is kept as is.
 *
 * @example
 * export const myStorage = (db: Db) =>
 *   defineStorage({
 *     transaction: (work, options) => db.transaction((conn) => work(myTransaction(conn)), options),
 *     close: () => db.end(),
 *   })
 */
export function defineStorage<D extends StorageDriver>(driver: D): Omit<D, 'transaction'> & Storage {
  return {
    ...driver,
    transaction: (work, options) => driver.transaction((tx) => work(typedTransaction(tx)), options),
  }
}
