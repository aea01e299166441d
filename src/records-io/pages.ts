import type { ModelName, Storage, StoredRecord, Where } from '../storage/types.js'
import { LineDigest, recordLine, type ModelDigest } from './format.js'

/** Records read per page (one short read-only transaction each). */
export const DEFAULT_PAGE_SIZE = 2_000

/**
 * Every record of a model, a page at a time, in (createdAt, id) order: the order every storage
 * keeps an index for, and one that is the same on every storage for the same records. Pages follow
 * the last record read (never an offset), so each costs what it returns; the `where` of the
 * contract only ANDs, so a page first takes the rest of the records sharing the last `createdAt`
 * (by id), then those after it.
 */
export async function* recordPages(storage: Storage, model: ModelName, pageSize = DEFAULT_PAGE_SIZE): AsyncGenerator<StoredRecord[]> {
  const order = { field: 'createdAt', direction: 'ASC' } as const
  let last: StoredRecord | null = null
  // Whether records sharing the last one's createdAt may be left (the last page was full).
  let ties = false
  for (;;) {
    const after: StoredRecord | null = last
    const where: Where<ModelName> | undefined =
      after === null ? undefined : ties ? { createdAt: after.createdAt as string, id: { gt: after.id } } : { createdAt: { gt: after.createdAt as string } }
    const page = (await storage.transaction((tx) => tx.find(model, { ...(where ? { where } : {}), orderBy: order, limit: pageSize }), {
      readOnly: true,
    })) as unknown as StoredRecord[]
    if (page.length > 0) {
      yield page
      last = page[page.length - 1]!
    }
    if (page.length === pageSize) ties = true
    else if (ties) ties = false
    else return
  }
}

/** The count and SHA-256 of a model's record lines as the storage holds them now (see `ModelDigest`). */
export async function digestModel(storage: Storage, model: ModelName, pageSize?: number, onPage?: (done: number) => void): Promise<ModelDigest> {
  const digest = new LineDigest()
  for await (const page of recordPages(storage, model, pageSize)) {
    digest.add(page.map((record) => recordLine(model, record)))
    onPage?.(digest.count)
  }
  return digest.digest()
}
