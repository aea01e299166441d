// A storage of your own, in ~100 lines: every collection a Map, every query a scan. It is
// correct (it passes the conformance kit, see test/storage/storage-custom.test.ts), not fast: use it
// as the skeleton for a storage on your own database.
//
// You write records in, records out (a `DriverTransaction`); `defineStorage` makes the typed
// `Storage` the service takes.
//
// In your project, import from 'affiliate-service/storage' instead of '../../src/storage/index.js'.
import {
  conditionHolds,
  defineStorage,
  models,
  UniqueViolationError,
  type DriverQuery,
  type DriverTransaction,
  type DriverWhere,
  type ModelName,
  type StoredRecord as Row,
} from '../../src/storage/index.js'

type Tables = Map<ModelName, Map<string, Row>>

const matches = (row: Row, where: DriverWhere | undefined): boolean =>
  Object.entries(where ?? {}).every(([field, condition]) => condition === undefined || conditionHolds(row[field], condition))

const contains = (model: ModelName, row: Row, term: string | undefined): boolean =>
  !term ||
  models[model].search.some((field) =>
    String(row[field] ?? '')
      .toLowerCase()
      .includes(term.toLowerCase()),
  )

const compare = (a: unknown, b: unknown): number =>
  a === b ? 0 : a === null || a === undefined ? -1 : b === null || b === undefined ? 1 : a < b ? -1 : 1

/** Throws when `row` shares every field of a unique constraint, none of them null, with another record. */
function checkUnique(model: ModelName, table: Map<string, Row>, row: Row): void {
  for (const { name, fields } of models[model].unique) {
    if (fields.some((field) => row[field] === null || row[field] === undefined)) continue
    for (const other of table.values()) {
      if (other.id !== row.id && fields.every((field) => other[field] === row[field])) throw new UniqueViolationError(name)
    }
  }
}

/**
 * Transactions run one at a time. Writes go to copies of the tables they touch, which replace
 * the committed ones only when the work resolves: a rejected transaction leaves nothing behind.
 */
export function mapStorage() {
  let committed: Tables = new Map(Object.keys(models).map((model) => [model as ModelName, new Map()]))
  let queue: Promise<unknown> = Promise.resolve()

  function transaction<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<T> {
    const run = async () => {
      const working: Tables = new Map(committed)
      const copied = new Set<ModelName>()
      let open = true
      const read = (model: ModelName) => {
        if (!open) throw new Error('This transaction has already finished')
        const table = working.get(model)
        if (!table) throw new Error(`Unknown model ${model}`)
        return table
      }
      const write = (model: ModelName) => {
        const table = read(model)
        if (copied.has(model)) return table
        const copy = new Map(table)
        working.set(model, copy)
        copied.add(model)
        return copy
      }
      const find = (model: ModelName, query: DriverQuery): Row[] => {
        const field = query.orderBy?.field ?? 'createdAt'
        const sign = query.orderBy?.direction === 'ASC' ? 1 : -1
        const rows = [...read(model).values()]
          .filter((row) => matches(row, query.where) && contains(model, row, query.contains))
          .sort((a, b) => sign * (compare(a[field], b[field]) || compare(a.id, b.id)))
        const offset = query.offset ?? 0
        return rows.slice(offset, query.limit === undefined ? undefined : offset + query.limit)
      }
      const update = (model: ModelName, id: string, patch: Record<string, unknown>): Row | null => {
        const table = write(model)
        const current = table.get(id)
        if (!current) return null
        const next = { ...current }
        for (const [field, value] of Object.entries(structuredClone(patch))) if (value !== undefined) next[field] = value
        checkUnique(model, table, next)
        table.delete(id)
        table.set(next.id, next)
        return structuredClone(next)
      }
      const tx: DriverTransaction = {
        get: async (model, id) => structuredClone(read(model).get(id) ?? null),
        find: async (model, query) => structuredClone(find(model, query)),
        count: async (model, query) => find(model, query).length,
        insert: async (model, record) => {
          const row = structuredClone(record)
          const table = write(model)
          if (table.has(row.id)) throw new Error(`A ${model} record with id ${row.id} already exists`)
          checkUnique(model, table, row)
          table.set(row.id, row)
        },
        update: async (model, id, patch) => update(model, id, patch),
        increment: async (model, id, deltas) => {
          const current = read(model).get(id)
          if (!current) return null
          const patch: Record<string, number> = {}
          for (const [field, delta] of Object.entries(deltas)) {
            if (delta !== undefined) patch[field] = (current[field] as number) + delta
          }
          return update(model, id, patch)
        },
        delete: async (model, id) => write(model).delete(id),
        deleteMany: async (model, where) => {
          const doomed = find(model, { where })
          const table = write(model)
          for (const row of doomed) table.delete(row.id)
          return doomed.length
        },
      }
      try {
        const result = await work(tx)
        committed = working
        return result
      } finally {
        open = false
      }
    }
    const result = queue.then(run)
    queue = result.catch(() => undefined)
    return result
  }

  return defineStorage({ transaction })
}
