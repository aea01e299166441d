/** The order every list keeps: `createdAt`, then `id`. */
export interface Ordered {
  id: string
  createdAt: string
}

const before = (a: Ordered, b: Ordered): boolean => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)

/** An array kept sorted by (createdAt, id). Appends in time order are O(1). */
export class SortedList<R extends Ordered> {
  readonly items: R[] = []

  get size(): number {
    return this.items.length
  }

  /** The index where `key` is or would go. */
  private position(key: Ordered): number {
    let low = 0
    let high = this.items.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (before(this.items[mid]!, key)) low = mid + 1
      else high = mid
    }
    return low
  }

  add(record: R): void {
    const last = this.items[this.items.length - 1]
    if (!last || before(last, record)) this.items.push(record)
    else this.items.splice(this.position(record), 0, record)
  }

  /** Removes the record stored under `key` (its createdAt and id when it was added). */
  remove(key: Ordered): void {
    const at = this.position(key)
    if (this.items[at]?.id === key.id) this.items.splice(at, 1)
  }
}

/** Walks sorted lists as one, ascending or descending, merging when there is more than one. */
export function* walk<R extends Ordered>(lists: readonly SortedList<R>[], descending: boolean): Generator<R> {
  if (lists.length === 1) {
    const items = lists[0]!.items
    if (descending) for (let i = items.length - 1; i >= 0; i--) yield items[i]!
    else for (let i = 0; i < items.length; i++) yield items[i]!
    return
  }
  const cursors = lists.map((list) => (descending ? list.size - 1 : 0))
  for (;;) {
    let pick = -1
    let best: R | undefined
    for (let l = 0; l < lists.length; l++) {
      const candidate = lists[l]!.items[cursors[l]!]
      if (!candidate) continue
      if (!best || (descending ? before(best, candidate) : before(candidate, best))) {
        best = candidate
        pick = l
      }
    }
    if (!best) return
    cursors[pick] = cursors[pick]! + (descending ? -1 : 1)
    yield best
  }
}
