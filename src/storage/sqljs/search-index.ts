import type { ModelName } from '../types.js'
import { quote, SEARCH_COLUMN } from '../sql.js'
import type { Connection } from './connection.js'

/**
 * A search matching more records than this is answered by the SQL scan: looking up that many ids
 * one by one costs more than walking the table once.
 */
export const MAX_INDEXED_MATCHES = 1_000

/** What a transaction did to one model's search texts: id to its new text, or null when deleted. */
export type SearchChanges = Map<ModelName, Map<string, string | null> | 'unknown'>

/**
 * The committed search texts (the hidden `_search` column) of each searchable model, kept in
 * JavaScript beside the database: sql.js walks about 4 rows per microsecond, so a `contains` search
 * over 100k records costs about 100 ms in SQL, while `String.includes` over the same texts costs
 * about 5. Built from the table on a model's first search (so a store that is never searched pays
 * nothing), then kept in step with every committed transaction; a transaction's own changes reach
 * it only when it commits, so a rollback leaves it untouched.
 */
export class SearchIndex {
  private readonly texts = new Map<ModelName, Map<string, string>>()

  constructor(private readonly connection: Connection) {}

  /**
   * The ids of the committed records of `model` whose search text contains `term` (lower-cased),
   * or null when more than `MAX_INDEXED_MATCHES` do. Call only when the open transaction has not
   * changed this model's search texts: it reads what is committed.
   */
  matching(model: ModelName, term: string): string[] | null {
    const ids: string[] = []
    for (const [id, text] of this.of(model)) {
      if (!text.includes(term)) continue
      if (ids.length === MAX_INDEXED_MATCHES) return null
      ids.push(id)
    }
    return ids
  }

  /** Applies what a committed transaction changed. */
  commit(changes: SearchChanges): void {
    for (const [model, changed] of changes) {
      const texts = this.texts.get(model)
      if (!texts) continue
      if (changed === 'unknown') {
        this.texts.delete(model)
        continue
      }
      for (const [id, text] of changed) {
        if (text === null) texts.delete(id)
        else texts.set(id, text)
      }
    }
  }

  private of(model: ModelName): Map<string, string> {
    let texts = this.texts.get(model)
    if (!texts) {
      const rows = this.connection.all(`SELECT "id", ${SEARCH_COLUMN} FROM ${quote(model)}`)
      texts = new Map(rows.map(([id, text]) => [id as string, text as string]))
      this.texts.set(model, texts)
    }
    return texts
  }
}
