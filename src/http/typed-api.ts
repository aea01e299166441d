import { accessOf, trusted, type Access } from '../api/access.js'
import type { AffiliateApi, Operations, ResourceApi } from '../api/index.js'
import { requestOf, routes, runRoute, type Query } from './routes.js'

// The typed API (`service.api`) is the route table's other face: the same operations, called with
// the arguments each route's entry says, without HTTP in between.

/**
 * The typed API over the operations, made from the route table: each method takes the arguments
 * the table says (see `Route`) and runs the same operation as its HTTP route.
 */
function bind(ops: Operations, access: Access): ResourceApi {
  const api: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {}
  for (const route of routes) {
    const [namespace, name] = route.operation
    ;(api[namespace] ??= {})[name] = (...args) => {
      const { query, body } = requestOf(route, args)
      return runRoute(route, ops, { access, query: query as Query, body: body as Record<string, unknown> | undefined })
    }
  }
  return api as unknown as ResourceApi
}

export const createApi = (ops: Operations): AffiliateApi => ({
  ...bind(ops, trusted),
  as: (principal) => bind(ops, accessOf(principal)),
})
