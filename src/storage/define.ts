import { chunked, IDS_PER_READ } from './batch.js'
import { conditionHolds } from './types.js'
import type {
  DriverDeltas,
  DriverPatch,
  DriverQuery,
  DriverTransaction,
  DriverWhere,
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
const typedPicks = <M extends ModelName, F extends keyof RecordOf<M>>(records: StoredRecord[]) => records as Pick<RecordOf<M>, F | 'id'>[]

/** Refuses a batch naming one id twice: which change would win is not defined. */
function distinctIds(changes: readonly { id: string }[]): void {
  const seen = new Set<string>()
  for (const { id } of changes) {
    if (seen.has(id)) throw new TypeError(`A batch names the record ${id} twice`)
    seen.add(id)
  }
}

/**
 * The typed view of one driver transaction. A class, so that a transaction costs one small object
 * rather than ten closures: every request runs at least one.
 */
class TypedTransaction implements StorageTransaction {
  constructor(private readonly tx: DriverTransaction) {}
  async get<M extends ModelName>(model: M, id: string) {
    return typedOne<M>(await this.tx.get(model, id))
  }
  async find<M extends ModelName>(model: M, query: DriverQuery) {
    return typedAll<M>(await this.tx.find(model, query))
  }
  async select<M extends ModelName, F extends keyof RecordOf<M> & string>(model: M, fields: readonly F[], query: DriverQuery) {
    const { tx } = this
    const records = tx.select ? await tx.select(model, fields, query) : await tx.find(model, query)
    return typedPicks<M, F>(records)
  }
  count(model: ModelName, query: Pick<DriverQuery, 'where' | 'contains'>) {
    return this.tx.count(model, query)
  }
  async findPage<M extends ModelName>(model: M, query: DriverQuery): Promise<RecordPage<RecordOf<M>>> {
    const { tx } = this
    if (tx.findPage) {
      const { items, total } = await tx.findPage(model, query)
      return { items: typedAll<M>(items), total }
    }
    const items = await tx.find(model, query)
    return { items: typedAll<M>(items), total: await tx.count(model, { where: query.where, contains: query.contains }) }
  }
  insert(model: ModelName, record: StoredRecord) {
    return this.tx.insert(model, record)
  }
  async update<M extends ModelName>(model: M, id: string, patch: Record<string, unknown>) {
    return typedOne<M>(await this.tx.update(model, id, patch))
  }
  async increment<M extends ModelName>(model: M, id: string, deltas: Record<string, number | undefined>) {
    return typedOne<M>(await this.tx.increment(model, id, deltas))
  }
  async updateMany(model: ModelName, where: DriverWhere, patch: Record<string, unknown>) {
    const { tx } = this
    if (tx.updateMany) return tx.updateMany(model, where, patch)
    // Read and written in one transaction, which the contract makes serializable: the where still holds.
    const matching = await tx.find(model, { where })
    const done: StoredRecord[] = []
    try {
      for (const record of matching) {
        await tx.update(model, record.id, patch)
        done.push(record)
      }
    } catch (error) {
      // All or nothing, as one UPDATE statement would be: put back what the patch had changed.
      for (const record of done)
        await tx.update(model, record.id, Object.fromEntries(Object.keys(patch).map((field) => [field, record[field]])))
      throw error
    }
    return matching.length
  }
  async insertMany(model: ModelName, records: readonly StoredRecord[]) {
    const { tx } = this
    if (records.length === 0) return
    if (tx.insertMany) return tx.insertMany(model, records)
    const done: StoredRecord[] = []
    try {
      for (const record of records) {
        await tx.insert(model, record)
        done.push(record)
      }
    } catch (error) {
      // All or nothing, as one INSERT statement would be.
      for (const record of done) await tx.delete(model, record.id)
      throw error
    }
  }
  async updateEach(model: ModelName, changes: readonly DriverPatch[], where: DriverWhere = {}) {
    const { tx } = this
    distinctIds(changes)
    if (changes.length === 0) return 0
    if (tx.updateEach) return tx.updateEach(model, changes, where)
    // Read and written in one transaction, which the contract makes serializable: the where still holds.
    const idCondition = where.id
    const wanted = idCondition === undefined ? changes : changes.filter((change) => conditionHolds(change.id, idCondition))
    const matching = new Map<string, StoredRecord>()
    for (const chunk of chunked(wanted, IDS_PER_READ)) {
      const ids = chunk.map((change) => change.id)
      for (const record of await tx.find(model, { where: { ...where, id: { in: ids } } })) matching.set(record.id, record)
    }
    const done: [StoredRecord, Record<string, unknown>][] = []
    try {
      for (const change of wanted) {
        const record = matching.get(change.id)
        if (!record) continue
        await tx.update(model, record.id, change.patch)
        done.push([record, change.patch])
      }
    } catch (error) {
      // All or nothing: put back what each patch had changed.
      for (const [record, patch] of done)
        await tx.update(model, record.id, Object.fromEntries(Object.keys(patch).map((field) => [field, record[field]])))
      throw error
    }
    return done.length
  }
  async incrementEach(model: ModelName, changes: readonly DriverDeltas[]) {
    const { tx } = this
    distinctIds(changes)
    if (changes.length === 0) return 0
    if (tx.incrementEach) return tx.incrementEach(model, changes)
    let changed = 0
    for (const change of changes) if ((await tx.increment(model, change.id, change.deltas)) !== null) changed++
    return changed
  }
  async takeSequence(name: string, count: number, now: string) {
    const { tx } = this
    if (!Number.isSafeInteger(count) || count < 1)
      throw new RangeError(`takeSequence: count must be a whole number of at least 1, not ${count}`)
    if (tx.takeSequence) return tx.takeSequence(name, count)
    const counter = await tx.increment('sequences', name, { value: count })
    if (counter) return (counter.value as number) - count + 1
    await tx.insert('sequences', { id: name, value: count, createdAt: now, updatedAt: now })
    return 1
  }
  delete(model: ModelName, id: string) {
    return this.tx.delete(model, id)
  }
  deleteMany(model: ModelName, where: DriverWhere) {
    return this.tx.deleteMany(model, where)
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
    transaction: (work, options) => driver.transaction((tx) => work(new TypedTransaction(tx)), options),
  }
}
