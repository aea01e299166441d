import type { ModelName, Storage, StoredRecord, Where } from '../storage/types.js'
import { LineDigest, recordLine, type ModelDigest } from './format.js'

/** Records read per page (one short read-only transaction each). */
export const DEFAULT_PAGE_SIZE = 2_000

/**
 * Every record of a model, a page at a time, in id order: the primary key, which every storage
 * keys its records by (clicks have no other order kept: their ids are time-ordered), and one order
 * that is the same on every storage for the same records (ids are compared as JavaScript's `<`
 * does; the SQL storages compare text by code point). Pages follow the last id read, never an
 * offset, so each costs what it returns.
 */
export async function* recordPages(storage: Storage, model: ModelName, pageSize = DEFAULT_PAGE_SIZE): AsyncGenerator<StoredRecord[]> {
  const order = { field: 'id', direction: 'ASC' } as const
  let last: string | null = null
  for (;;) {
    const after = last
    const where: Where<ModelName> | undefined = after === null ? undefined : { id: { gt: after } }
    // `find` answers the model's own record type, a member of the union of every model's for a
    // `model` known only at run time: TypeScript cannot relate the two, so the page is widened here.
    const page = (await storage.transaction((tx) => tx.find(model, { ...(where ? { where } : {}), orderBy: order, limit: pageSize }), {
      readOnly: true,
    })) as unknown as StoredRecord[]
    if (page.length > 0) yield page
    if (page.length < pageSize) return
    last = page[page.length - 1]!.id
  }
}

/** The count and SHA-256 of a model's record lines as the storage holds them now (see `ModelDigest`). */
export async function digestModel(
  storage: Storage,
  model: ModelName,
  pageSize?: number,
  onPage?: (done: number) => void,
): Promise<ModelDigest> {
  const digest = new LineDigest()
  for await (const page of recordPages(storage, model, pageSize)) {
    digest.add(page.map((record) => recordLine(model, record)))
    onPage?.(digest.count)
  }
  return digest.digest()
}
