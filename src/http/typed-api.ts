import type { Struct } from 'superstruct'
import { accessOf, trusted, type Access } from '../api/access.js'
import type { Operations } from '../api/index.js'
import { Answered } from '../api/shared.js'
import type { Principal } from '../keys/types.js'
import { apiOf, requestOf, type Namespace, type RouteInfo, type RouteTable } from './route-table.js'
import { runRoute, type Query, type Validations } from './routes.js'

// The typed API (`service.api`) is the route table's other face: the same operations, called with
// the arguments each route's entry says, without HTTP in between. Its type is computed from the
// table too: the input from the route's schemas, the answer from its operation.

type SchemaType<S> = S extends { struct: Struct<infer T, any> } ? T : never
type BodyOf<V> = (V extends { body: infer B } ? SchemaType<B> : never) | (V extends { alternativeBody: infer B } ? SchemaType<B> : never)
type QueryOf<V> = V extends { query: infer Q } ? SchemaType<Q> : Record<string, never>
/** What an operation answers; of an `Answered` (an answer with a chosen status), its data: the status is HTTP's. */
type AnswerOf<F> = F extends (...args: any[]) => Promise<infer R> ? (R extends Answered<infer D> ? D : R) : never
type Without<T, K> = Omit<T, K & keyof T>

/**
 * One method of the typed API, from its route: POST `create(input)` or, with an `id`, an action
 * `verb(id, input?)`; PUT `update(id, changes)`; GET and DELETE `get(id, query?)` with an `id`,
 * else `list(query)`.
 */
export type Verb<R extends RouteInfo, V, F> = R extends {
  method: 'POST'
  id: string
  preview: { field: infer K extends string; answerHas: infer P extends string }
}
  ? Previewing<Without<BodyOf<V>, R['id']>, K, AnswerOf<F>, { [Q in P]: unknown }>
  : R extends { method: 'POST'; id: string }
    ? {} extends Without<BodyOf<V>, R['id']>
      ? (id: string, input?: Without<BodyOf<V>, R['id']>) => Promise<AnswerOf<F>>
      : (id: string, input: Without<BodyOf<V>, R['id']>) => Promise<AnswerOf<F>>
    : R extends { method: 'POST' }
      ? (input: BodyOf<V>) => Promise<AnswerOf<F>>
      : R extends { method: 'PUT' }
        ? (id: string, changes: BodyOf<V>) => Promise<AnswerOf<F>>
        : R extends { id: string }
          ? {} extends Without<QueryOf<V>, R['id']>
            ? (id: string, query?: Without<QueryOf<V>, R['id']>) => Promise<AnswerOf<F>>
            : (id: string, query: Without<QueryOf<V>, R['id']>) => Promise<AnswerOf<F>>
          : {} extends QueryOf<V>
            ? (query?: QueryOf<V>) => Promise<AnswerOf<F>>
            : (query: QueryOf<V>) => Promise<AnswerOf<F>>

/**
 * An action with a dry run (`preview` in its route): with `K` true it answers the preview (the
 * member of `A` holding `Has`), else the action's own answer.
 */
type Previewing<I, K extends string, A, Has> = {
  (id: string, input: I & { [F in K]: true }): Promise<Extract<A, Has>>
  (id: string, input?: I & { [F in K]?: false | undefined }): Promise<Exclude<A, Has>>
  (id: string, input?: I): Promise<A>
}

/** One namespace per resource, one method per route. Validation and rules are those of HTTP; failures throw `AffiliateError`. */
export type ResourceApi = {
  [N in Namespace]: {
    [M in keyof RouteTable[N]]: Verb<
      RouteTable[N][M] & RouteInfo,
      Validations[N][M & keyof Validations[N]],
      M extends keyof Operations[N] ? Operations[N][M] : never
    >
  }
}

/**
 * The typed API. Called directly it acts as the embedding app, trusted with every workspace;
 * `as(principal)` gives the same API limited to that principal's workspaces, exactly as over HTTP.
 */
export interface AffiliateApi extends ResourceApi {
  as(principal: Principal): ResourceApi
}

function bind(ops: Operations, access: Access): ResourceApi {
  return apiOf<ResourceApi>((route, operation, args) => {
    const { query, body } = requestOf(route, args)
    const answer = runRoute({ ...route, operation }, ops, {
      access,
      query: query as Query,
      body: body as Record<string, unknown> | undefined,
    })
    // An operation that may choose its status answers `Answered`: the typed API answers its data.
    return route.alternativeStatus ? answer.then((value) => (value instanceof Answered ? value.data : value)) : answer
  })
}

export const createApi = (ops: Operations): AffiliateApi => ({
  ...bind(ops, trusted),
  as: (principal) => bind(ops, accessOf(principal)),
})

export type CampaignsApi = ResourceApi['campaigns']
export type AffiliatesApi = ResourceApi['affiliates']
export type LinksApi = ResourceApi['links']
export type CommissionsApi = ResourceApi['commissions']
export type ReferredUsersApi = ResourceApi['referredUsers']
export type PayoutsApi = ResourceApi['payouts']
export type WebhooksApi = ResourceApi['webhooks']
export type EventsApi = ResourceApi['events']
export type ReportsApi = ResourceApi['reports']
export type ExportsApi = ResourceApi['exports']
export type CustomersApi = ResourceApi['customers']
export type ConversionsApi = ResourceApi['conversions']
export type IntegrationsApi = ResourceApi['integrations']
export type PromoCodesApi = ResourceApi['promoCodes']
