import { models } from './models.js'
import { SortedList, walk, type Ordered } from './sorted-list.js'
import { defineStorage } from './define.js'
import {
  UniqueViolationError,
  type DriverQuery,
  type DriverTransaction,
  type DriverWhere,
  isRange,
  type ModelName,
  type RangeCondition,
  type RecordPage,
  type Scalar,
  type Storage,
  type StoredRecord,
} from './types.js'

type Row = Ordered & StoredRecord
/** A field and the values it may equal, or (values null) the range it must lie in. */
type Condition = [field: string, values: readonly Scalar[] | null, range: RangeCondition | null]

/** One look-up: rows by the values of its fields (one field: the value itself; several: their JSON). */
interface Index {
  fields: readonly string[]
  lists: Map<unknown, SortedList<Row>>
}

/** Combinations of `in` values an index look-up may expand to before a walk is cheaper. */
const MAX_INDEX_KEYS = 64

/** A copy of a record or patch handed in, sharing no array with it (stored rows copy with `Table#copy`). */
const copy = <T extends Record<string, unknown>>(row: T): T => {
  const out = { ...row }
  for (const key in out) if (Array.isArray(out[key])) (out as Record<string, unknown>)[key] = [...(out[key] as unknown[])]
  return out
}

function conditions(where: DriverWhere | undefined): Condition[] {
  const out: Condition[] = []
  for (const field in where) {
    const value = where[field]
    if (value === undefined) continue
    if (value !== null && isRange(value)) {
      if (value.gt === undefined && value.gte === undefined && value.lt === undefined && value.lte === undefined) {
        throw new TypeError(`the range on ${field} has no bound`)
      }
      out.push([field, null, value])
    } else out.push([field, value !== null && typeof value === 'object' ? value.in : [value], null])
  }
  return out
}

/** Whether `value` lies in `range`, compared as JavaScript's `<` does; null and undefined lie in none. */
function inRange(value: unknown, range: RangeCondition): boolean {
  if (value === null || value === undefined) return false
  const v = value as string | number
  if (range.gt !== undefined && !(v > range.gt)) return false
  if (range.gte !== undefined && !(v >= range.gte)) return false
  if (range.lt !== undefined && !(v < range.lt)) return false
  if (range.lte !== undefined && !(v <= range.lte)) return false
  return true
}

/** One collection: rows by id, every list sorted by (createdAt, id), indexes, unique keys, search text. */
class Table {
  readonly rows = new Map<string, Row>()
  readonly all = new SortedList<Row>()
  readonly indexes: Index[]
  readonly uniques = new Map<string, Map<string, string>>()
  /** Fields whose change moves the row in a list, an index, a constraint or the search text. */
  private readonly structural: ReadonlySet<string>
  /**
   * Fields that have held an array in any row: a row's copy copies just these, rather than
   * testing every field of every row read.
   */
  private readonly arrayFields: string[] = []
  /**
   * Each row's lower-cased search text. Kept beside the rows rather than on them: a row with a
   * property of its own that is not enumerable (as such text would need, so copies never carry it)
   * is copied on V8's slow path, several times slower on every read. A search walks this map
   * (100k texts in about 5 ms) rather than looking each candidate row up in it.
   */
  private readonly texts = new Map<Row, string>()

  constructor(readonly model: ModelName) {
    const definition = models[model]
    this.indexes = definition.indexes.map((fields) => ({ fields, lists: new Map() }))
    for (const constraint of definition.unique) this.uniques.set(constraint.name, new Map())
    this.structural = new Set<string>([
      'createdAt',
      'id',
      ...definition.indexes.flat(),
      ...definition.search,
      ...definition.unique.flatMap((constraint) => constraint.fields),
    ])
  }

  /** Notes the array fields of values about to be stored (a row, or a patch of one). */
  noteArrays(values: Record<string, unknown>): void {
    for (const field in values) if (Array.isArray(values[field]) && !this.arrayFields.includes(field)) this.arrayFields.push(field)
  }

  /** A copy of a stored row that shares nothing with it. */
  copy(row: Row): Row {
    const out = { ...row }
    for (const field of this.arrayFields) if (Array.isArray(out[field])) out[field] = [...(out[field] as unknown[])]
    return out
  }

  private uniqueKey(fields: readonly string[], row: Record<string, unknown>): string | null {
    const values = fields.map((field) => row[field])
    return values.some((value) => value === null || value === undefined) ? null : JSON.stringify(values)
  }

  /** Throws when `row` would collide with a record other than itself. */
  checkUnique(row: Record<string, unknown>): void {
    for (const constraint of models[this.model].unique) {
      const key = this.uniqueKey(constraint.fields, row)
      const holder = key === null ? undefined : this.uniques.get(constraint.name)!.get(key)
      if (holder !== undefined && holder !== row.id) throw new UniqueViolationError(constraint.name)
    }
  }

  private text(row: Row): string {
    return models[this.model].search.map((field) => String(row[field] ?? '').toLowerCase()).join('\u0000')
  }

  /** Adds `row` to every structure. The caller has checked uniqueness. */
  link(row: Row): void {
    this.rows.set(row.id, row)
    this.all.add(row)
    for (const index of this.indexes) {
      const key = indexKey(index.fields, row)
      let list = index.lists.get(key)
      if (!list) index.lists.set(key, (list = new SortedList()))
      list.add(row)
    }
    for (const constraint of models[this.model].unique) {
      const key = this.uniqueKey(constraint.fields, row)
      if (key !== null) this.uniques.get(constraint.name)!.set(key, row.id)
    }
    if (models[this.model].search.length) this.texts.set(row, this.text(row))
  }

  /** Removes `row` from every structure, using its values as they were when it was linked. */
  unlink(row: Row): void {
    this.rows.delete(row.id)
    this.all.remove(row)
    for (const index of this.indexes) {
      const key = indexKey(index.fields, row)
      const list = index.lists.get(key)
      list?.remove(row)
      if (list?.size === 0) index.lists.delete(key)
    }
    for (const constraint of models[this.model].unique) {
      const key = this.uniqueKey(constraint.fields, row)
      if (key !== null) this.uniques.get(constraint.name)!.delete(key)
    }
    this.texts.delete(row)
  }

  /**
   * The rows matching `conds` whose search text contains `term`, found through the texts rather
   * than the lists: or null when more than `MAX_SEARCH_HITS` texts contain the term (the lists
   * are then the cheaper walk).
   */
  searched(conds: Condition[], term: string): Row[] | null {
    const hits: Row[] = []
    let found = 0
    for (const [row, text] of this.texts) {
      if (!text.includes(term)) continue
      if (++found > MAX_SEARCH_HITS) return null
      if (this.matches(row, conds, null)) hits.push(row)
    }
    return hits
  }

  /** Whether changing these fields moves the row in any list, index, constraint or search text. */
  isStructural(fields: string[]): boolean {
    return fields.some((field) => this.structural.has(field))
  }

  matches(row: Row, conds: Condition[], term: string | null): boolean {
    for (const [field, values, range] of conds) {
      if (values !== null ? !values.includes(row[field] as Scalar) : !inRange(row[field], range!)) return false
    }
    return term === null || (this.texts.get(row) ?? '').includes(term)
  }

  /**
   * The smallest set of sorted lists that holds every match, the conditions its rows still have to
   * be checked against, and whether every row in it matches (nothing left to check).
   */
  candidates(conds: Condition[], term: string | null): { lists: SortedList<Row>[]; rest: Condition[]; exact: boolean } {
    // Records named by id are found in the id map, whatever else the query says (a range of ids is checked row by row).
    const byId = conds.find(([field, values]) => field === 'id' && values !== null)
    if (byId) {
      const list = new SortedList<Row>()
      for (const id of new Set(byId[1])) {
        const row = this.rows.get(id as string)
        if (row) list.add(row)
      }
      const rest = conds.filter((cond) => cond !== byId)
      return { lists: [list], rest, exact: rest.length === 0 && term === null }
    }
    let best: SortedList<Row>[] | null = null
    let bestSize = 0
    let bestCovered: Condition[] = []
    for (const index of this.indexes) {
      // Only equality and `in` conditions pick index keys; ranges are checked row by row.
      const covered = index.fields.map((field) => conds.find(([name, values]) => name === field && values !== null))
      if (covered.some((cond) => cond === undefined)) continue
      const keys = indexKeys(covered.map((cond) => cond![1]!))
      if (keys === null) continue
      const lists: SortedList<Row>[] = []
      let size = 0
      for (const key of keys) {
        const list = index.lists.get(key)
        if (!list) continue
        lists.push(list)
        size += list.size
      }
      if (best === null || size < bestSize || (size === bestSize && covered.length > bestCovered.length)) {
        best = lists
        bestSize = size
        bestCovered = covered as Condition[]
      }
    }
    const rest = best === null ? conds : conds.filter((cond) => !bestCovered.includes(cond))
    return { lists: best ?? [this.all], rest, exact: rest.length === 0 && term === null }
  }
}

/** A row's key in an index over `fields`. */
const indexKey = (fields: readonly string[], row: Record<string, unknown>): unknown =>
  fields.length === 1 ? row[fields[0]!] : JSON.stringify(fields.map((field) => row[field] ?? null))

/** The index keys matching these value lists (one per field), or null when there are too many. */
function indexKeys(values: (readonly Scalar[])[]): unknown[] | null {
  if (values.length === 1) return values[0]!.length === 1 ? [values[0]![0]] : [...new Set(values[0])]
  let combos: Scalar[][] = [[]]
  for (const list of values) {
    const distinct = [...new Set(list)]
    if (combos.length * distinct.length > MAX_INDEX_KEYS) return null
    combos = combos.flatMap((combo) => distinct.map((value) => [...combo, value]))
  }
  return combos.map((combo) => JSON.stringify(combo))
}

/** A search matching more rows than this walks the sorted lists instead of sorting its hits. */
const MAX_SEARCH_HITS = 1_000

const compareValues = (a: unknown, b: unknown): number => {
  if (a === b) return 0
  if (a === null || a === undefined) return -1
  if (b === null || b === undefined) return 1
  return (a as string | number) < (b as string | number) ? -1 : 1
}

class MemoryTransaction implements DriverTransaction {
  private readonly undo: (() => void)[] = []
  open = true

  constructor(private readonly tables: Map<ModelName, Table>) {}

  private table(model: ModelName): Table {
    if (!this.open) throw new Error('This transaction has already finished')
    const table = this.tables.get(model)
    if (!table) throw new Error(`Unknown model ${model}`)
    return table
  }

  rollback(mark = 0): void {
    for (let i = this.undo.length - 1; i >= mark; i--) this.undo[i]!()
    this.undo.length = mark
  }

  async get(model: ModelName, id: string) {
    const table = this.table(model)
    const row = table.rows.get(id)
    return row ? table.copy(row) : null
  }

  async find(model: ModelName, query: DriverQuery) {
    return this.page(model, query, false).items
  }

  async findPage(model: ModelName, query: DriverQuery) {
    return this.page(model, query, true)
  }

  /** The page `query` asks for, and when `counted` the total of its matches (else the total is -1). */
  private page(model: ModelName, query: DriverQuery, counted: boolean): RecordPage<StoredRecord> {
    const table = this.table(model)
    const conds = conditions(query.where)
    const term = query.contains ? query.contains.toLowerCase() : null
    const { lists, rest, exact } = table.candidates(conds, term)
    const field = query.orderBy?.field ?? 'createdAt'
    const descending = (query.orderBy?.direction ?? 'DESC') === 'DESC'
    const offset = Math.max(0, query.offset ?? 0)
    const limit = query.limit ?? Number.POSITIVE_INFINITY
    const sign = descending ? -1 : 1
    // The contract breaks ties by id alone, as `ORDER BY field, id` does in SQL.
    const order = (a: Row, b: Row) => sign * (compareValues(a[field], b[field]) || compareValues(a.id, b.id))
    const hits = term === null ? null : table.searched(conds, term)
    if (hits !== null) {
      return {
        items: hits
          .sort(order)
          .slice(offset, offset + limit)
          .map((row) => table.copy(row)),
        total: hits.length,
      }
    }
    const out: Row[] = []
    if (field === 'createdAt' && exact) {
      const total = lists.reduce((sum, list) => sum + list.size, 0)
      if (lists.length === 1) {
        // One list, nothing to check: the page is a slice of it.
        const items = lists[0]!.items
        const end = Math.min(items.length, offset + limit)
        for (let i = offset; i < end; i++) out.push(table.copy(items[descending ? items.length - 1 - i : i]!))
      } else {
        let skipped = 0
        for (const row of walk(lists, descending)) {
          if (out.length >= limit) break
          if (skipped < offset) skipped++
          else out.push(table.copy(row))
        }
      }
      return { items: out, total }
    }
    if (field === 'createdAt') {
      // A filtered page walks its candidates in order; a counted one walks them all to count.
      let total = 0
      for (const row of walk(lists, descending)) {
        if (!table.matches(row, rest, term)) continue
        if (total >= offset && out.length < limit) out.push(table.copy(row))
        else if (!counted && out.length >= limit) break
        total++
      }
      return { items: out, total: counted ? total : -1 }
    }
    const matching: Row[] = []
    for (const list of lists) for (const row of list.items) if (table.matches(row, rest, term)) matching.push(row)
    matching.sort(order)
    return { items: matching.slice(offset, offset + limit).map((row) => table.copy(row)), total: matching.length }
  }

  async count(model: ModelName, query: Pick<DriverQuery, 'where' | 'contains'>) {
    const table = this.table(model)
    const conds = conditions(query.where)
    const term = query.contains ? query.contains.toLowerCase() : null
    const { lists, rest, exact } = table.candidates(conds, term)
    if (exact) return lists.reduce((sum, list) => sum + list.size, 0)
    const hits = term === null ? null : table.searched(conds, term)
    if (hits !== null) return hits.length
    let total = 0
    for (const list of lists) for (const row of list.items) if (table.matches(row, rest, term)) total++
    return total
  }

  async insert(model: ModelName, record: StoredRecord) {
    const table = this.table(model)
    const row = copy(record as Row)
    if (table.rows.has(row.id)) throw new Error(`A ${model} record with id ${row.id} already exists`)
    table.noteArrays(row)
    table.checkUnique(row)
    table.link(row)
    this.undo.push(() => table.unlink(row))
  }

  async update(model: ModelName, id: string, patch: Record<string, unknown>) {
    const table = this.table(model)
    const row = table.rows.get(id)
    if (!row) return null
    const changes = copy(patch)
    // Undoing puts back the fields this changes, as they were: the others stay as they are.
    const before: Record<string, unknown> = {}
    for (const field in changes) before[field] = Array.isArray(row[field]) ? [...(row[field] as unknown[])] : row[field]
    this.apply(table, row, changes)
    this.undo.push(() => this.apply(table, row, before))
    return table.copy(row)
  }

  private apply(table: Table, row: Row, patch: Record<string, unknown>): void {
    table.noteArrays(patch)
    const fields = Object.keys(patch).filter((field) => patch[field] !== undefined)
    if (!table.isStructural(fields)) {
      for (const field of fields) row[field] = patch[field]
      return
    }
    const next = { ...row }
    for (const field of fields) next[field] = patch[field]
    table.checkUnique(next)
    table.unlink(row)
    for (const field of fields) row[field] = patch[field]
    table.link(row)
  }

  async increment(model: ModelName, id: string, deltas: Record<string, number | undefined>) {
    const table = this.table(model)
    const row = table.rows.get(id)
    if (!row) return null
    const patch: Record<string, number> = {}
    for (const field in deltas) {
      const delta = deltas[field]
      if (delta !== undefined) patch[field] = (row[field] as number) + delta
    }
    return this.update(model, id, patch)
  }

  async delete(model: ModelName, id: string) {
    const table = this.table(model)
    const row = table.rows.get(id)
    if (!row) return false
    table.unlink(row)
    this.undo.push(() => table.link(row))
    return true
  }

  async updateMany(model: ModelName, where: DriverWhere, patch: Record<string, unknown>) {
    const matching = this.page(model, { where }, false).items
    // All or nothing: a unique violation part way undoes the records already changed.
    const mark = this.undo.length
    try {
      for (const row of matching) await this.update(model, row.id, patch)
    } catch (error) {
      this.rollback(mark)
      throw error
    }
    return matching.length
  }

  async deleteMany(model: ModelName, where: DriverWhere) {
    const doomed = await this.find(model, { where })
    for (const row of doomed) await this.delete(model, row.id)
    return doomed.length
  }
}

/** Runs `work` in a transaction of its own: all of its writes, or none of them when it throws. */
async function runTransaction<T>(tables: Map<ModelName, Table>, work: (tx: DriverTransaction) => Promise<T>): Promise<T> {
  const tx = new MemoryTransaction(tables)
  try {
    return await work(tx)
  } catch (error) {
    tx.rollback()
    throw error
  } finally {
    tx.open = false
  }
}

/**
 * Keeps everything in this process's memory: fast, and gone when the process ends. Meant for
 * tests (yours and ours) and for trying the service out. Transactions run one at a time and
 * roll back in full on error. By-id reads are a map look-up; lists walk an index kept in
 * `createdAt` order, so a page costs what it returns rather than the size of the collection.
 *
 * @example
 * const service = createAffiliateService({ storage: memoryStorage(), keyStore })
 */
export function memoryStorage(): Storage {
  const tables = new Map<ModelName, Table>(Object.keys(models).map((model) => [model as ModelName, new Table(model as ModelName)]))
  let tail: Promise<unknown> = Promise.resolve()
  return defineStorage({
    exclusive: true,
    transaction(work) {
      const result = tail.then(() => runTransaction(tables, work))
      tail = result.catch(() => undefined)
      return result
    },
    async close() {},
  })
}
