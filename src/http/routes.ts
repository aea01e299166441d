import type { Access } from '../api/access.js'
import type { Operations } from '../api/index.js'

/** The query string as name -> value; a name given more than once -> every value, in order. */
export type Query = Record<string, string | string[]>

export interface Call {
  access: Access
  query: Query
  body: Record<string, unknown> | undefined
}

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  /** The envelope's `message` on success. */
  message: string
  /** @default 201 for POST, else 200 */
  status?: number
  run(ops: Operations, call: Call): Promise<unknown>
}

/** Every keyed route under `/api/v1`: a thin shell over the operations. */
export const routes: Route[] = [
  { method: 'GET', path: '/campaigns/list', message: 'Campaigns retrieved successfully', run: (o, c) => o.campaigns.list(c.access, c.query) },
  { method: 'GET', path: '/campaigns', message: 'Campaign retrieved successfully', run: (o, c) => o.campaigns.get(c.access, c.query) },
  { method: 'POST', path: '/campaigns', message: 'Campaign created successfully', run: (o, c) => o.campaigns.create(c.access, c.body, c.query) },
  { method: 'PUT', path: '/campaigns', message: 'Campaign updated successfully', run: (o, c) => o.campaigns.update(c.access, c.query, c.body) },
  { method: 'DELETE', path: '/campaigns', message: 'Campaign deleted successfully', run: (o, c) => o.campaigns.delete(c.access, c.query) },

  { method: 'GET', path: '/affiliates/list', message: 'Affiliates retrieved successfully', run: (o, c) => o.affiliates.list(c.access, c.query) },
  { method: 'GET', path: '/affiliates', message: 'Affiliate retrieved successfully', run: (o, c) => o.affiliates.get(c.access, c.query) },
  { method: 'POST', path: '/affiliates', message: 'Affiliate created successfully', run: (o, c) => o.affiliates.create(c.access, c.body, c.query) },
  { method: 'PUT', path: '/affiliates', message: 'Affiliate updated successfully', run: (o, c) => o.affiliates.update(c.access, c.query, c.body) },
  { method: 'DELETE', path: '/affiliates', message: 'Affiliate deleted successfully', run: (o, c) => o.affiliates.delete(c.access, c.query) },

  { method: 'GET', path: '/links', message: 'Links retrieved successfully', run: (o, c) => o.links.list(c.access, c.query) },
  { method: 'POST', path: '/links', message: 'Link created successfully', run: (o, c) => o.links.create(c.access, c.body, c.query) },
  { method: 'DELETE', path: '/links', message: 'Link deleted successfully', run: (o, c) => o.links.delete(c.access, c.query) },
  { method: 'POST', path: '/links/track', message: 'Link event tracked successfully', status: 200, run: (o, c) => o.links.track(c.access, c.body, c.query) },

  { method: 'GET', path: '/commissions/list', message: 'Commissions retrieved successfully', run: (o, c) => o.commissions.list(c.access, c.query) },
  { method: 'GET', path: '/commissions', message: 'Commission retrieved successfully', run: (o, c) => o.commissions.get(c.access, c.query) },
  { method: 'POST', path: '/commissions', message: 'Commission created successfully', run: (o, c) => o.commissions.create(c.access, c.body, c.query) },
  { method: 'PUT', path: '/commissions', message: 'Commission updated successfully', run: (o, c) => o.commissions.update(c.access, c.query, c.body) },
  { method: 'DELETE', path: '/commissions', message: 'Commission deleted successfully', run: (o, c) => o.commissions.delete(c.access, c.query) },

  { method: 'GET', path: '/referred-users/list', message: 'Referred users retrieved successfully', run: (o, c) => o.referredUsers.list(c.access, c.query) },
  { method: 'GET', path: '/referred-users', message: 'Referred user retrieved successfully', run: (o, c) => o.referredUsers.get(c.access, c.query) },
  { method: 'POST', path: '/referred-users', message: 'Referred user created successfully', run: (o, c) => o.referredUsers.create(c.access, c.body, c.query) },
  { method: 'PUT', path: '/referred-users', message: 'Referred user updated successfully', run: (o, c) => o.referredUsers.update(c.access, c.query, c.body) },
  { method: 'DELETE', path: '/referred-users', message: 'Referred user deleted successfully', run: (o, c) => o.referredUsers.delete(c.access, c.query) },
]
