// The Hono peer: what a performance-minded team would write for the same three routes. Hono on
// @hono/node-server, zod through @hono/zod-validator for query and body, hono-rate-limiter keyed
// by the API key's id, the key looked up by its SHA-256 (node:crypto) in a Map, the same storage.
import { createAdaptorServer } from '@hono/node-server'
import { zValidator } from '@hono/zod-validator'
import { Hono, type Context } from 'hono'
import { rateLimiter } from 'hono-rate-limiter'
import { z } from 'zod'
import type { FieldError } from '../../src/errors.js'
import { REFERRAL_CODE } from '../../src/domain/link.js'
import type { Server } from 'node:http'
import {
  FORBIDDEN,
  listen,
  MESSAGES,
  notFound,
  PEER_LIMIT,
  peerKeys,
  RATE_LIMITED,
  sha256Hex,
  UNAUTHORIZED,
  validationFailed,
  type Principal,
  type Running,
} from './common.js'
import type { Store } from './store.js'

const uuid = z.uuid()
const noQuery = z.strictObject({})
const campaignQuery = z.strictObject({ campaignId: uuid })
const listQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  contains: z.string().max(200).optional(),
  workspaceId: uuid.optional(),
  orderType: z.enum(['createdAt', 'updatedAt', 'commissionDate', 'amount', 'status']).optional(),
  orderValue: z.enum(['ASC', 'DESC']).optional(),
  affiliateId: uuid.optional(),
  campaignId: uuid.optional(),
  status: z.enum(['pending', 'processing', 'paid', 'refunded']).optional(),
})
const trackBody = z.strictObject({ referralCode: z.string().regex(REFERRAL_CODE), event: z.enum(['open', 'click']) })

type Location = FieldError['location']

/** zod's issues as the service's `errors` entries. */
function fieldErrors(issues: readonly z.core.$ZodIssue[], location: Location): FieldError[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ type: 'field' as const, msg: `${key} is not a known field`, path: key, location }))
      : [{ type: 'field' as const, msg: `${issue.path.join('.')} ${issue.message}`, path: issue.path.join('.'), location }],
  )
}

const check = <S extends z.ZodType>(target: 'query' | 'json', schema: S) =>
  zValidator(target, schema, (result, c) => {
    if (!result.success) return c.json(validationFailed(fieldErrors(result.error.issues, target === 'json' ? 'body' : 'query')), 400)
  })

type Env = { Variables: { principal: Principal } }

export function honoApp(store: Store): Hono<Env> {
  const keys = peerKeys()
  const app = new Hono<Env>().basePath('/api/v1')
  app.use('*', async (c, next) => {
    const key = c.req.header('x-auth-service')
    const principal = key ? keys.get(sha256Hex(key)) : undefined
    if (!principal) return c.json(UNAUTHORIZED, 401)
    c.set('principal', principal)
    await next()
  })
  app.use(
    '*',
    rateLimiter<Env>({
      ...PEER_LIMIT,
      standardHeaders: 'draft-6',
      keyGenerator: (c: Context<Env>) => c.get('principal').keyId,
      handler: (c: Context<Env>) => c.json(RATE_LIMITED, 429),
    }),
  )
  app.get('/campaigns', check('query', campaignQuery), async (c) => {
    const campaign = await store.campaign(c.get('principal').workspaceIds, c.req.valid('query').campaignId)
    return campaign ? c.json({ status: 200, message: MESSAGES.campaign, data: campaign }) : c.json(notFound('Campaign'), 404)
  })
  app.get('/commissions/list', check('query', listQuery), async (c) => {
    const query = c.req.valid('query')
    const principal = c.get('principal')
    if (query.workspaceId !== undefined && !principal.workspaceIds.includes(query.workspaceId.toLowerCase())) {
      return c.json(FORBIDDEN, 403)
    }
    return c.json({ status: 200, message: MESSAGES.commissions, data: await store.commissions(principal.workspaceIds, query) })
  })
  app.post('/links/track', check('query', noQuery), check('json', trackBody), async (c) => {
    const { referralCode, event } = c.req.valid('json')
    const link = await store.track(c.get('principal').workspaceIds, referralCode, event)
    return link ? c.json({ status: 200, message: MESSAGES.track, data: link }) : c.json(notFound('Link'), 404)
  })
  return app
}

export const startHono = (store: Store): Promise<Running> => listen(createAdaptorServer({ fetch: honoApp(store).fetch }) as Server)
