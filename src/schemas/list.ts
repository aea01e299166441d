import { optional, type Struct } from 'superstruct'
import { oneOf, queryInteger, text, uuid } from '../domain/checks.js'
import { allOptional, schema } from './validate.js'

export const MAX_LIMIT = 100
export const MAX_PAGE = 1_000_000

/** The query every `/list` route takes, with `orderType` limited to `orderFields` and optional extra filters. */
export const listQuery = <F extends string, S extends Record<string, Struct<any, any>> = {}>(
  orderFields: readonly F[],
  filters: S = {} as S,
) =>
  schema({
    page: optional(queryInteger(1, MAX_PAGE)),
    limit: optional(queryInteger(1, MAX_LIMIT)),
    contains: optional(text(200)),
    workspaceId: optional(uuid),
    orderType: optional(oneOf(orderFields)),
    orderValue: optional(oneOf(['ASC', 'DESC'] as const)),
    ...allOptional(filters),
  })
