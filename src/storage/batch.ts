// What the storages' batch operations share: cutting a batch into statements of a bounded size,
// and grouping per-record changes by the fields they set, so that each group is one statement.

/** Ids per `in` condition when reading records by id: well under every database's limit on bound parameters. */
export const IDS_PER_READ = 500

/** `items` in consecutive slices of at most `size`. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** Changes that set the same fields, in the order they came. */
export interface FieldGroup<C> {
  fields: string[]
  changes: C[]
}

/**
 * The changes of an `updateEach` or `incrementEach` grouped by the fields they set (fields whose
 * value is `undefined` left out), groups in first-seen order; `empty` holds the changes that set
 * nothing.
 */
export function fieldGroups<C>(
  changes: readonly C[],
  valuesOf: (change: C) => Record<string, unknown>,
): { groups: FieldGroup<C>[]; empty: C[] } {
  const groups = new Map<string, FieldGroup<C>>()
  const empty: C[] = []
  for (const change of changes) {
    const values = valuesOf(change)
    const fields = Object.keys(values).filter((field) => values[field] !== undefined)
    if (fields.length === 0) {
      empty.push(change)
      continue
    }
    const key = fields.join('\u0000')
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { fields, changes: [] }))
    group.changes.push(change)
  }
  return { groups: [...groups.values()], empty }
}
