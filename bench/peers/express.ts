// The Express 5 peer, the source document's reference stack: express + express-validator (query
// and body, unknown fields refused with checkExact) + express-rate-limit keyed by the API key's id,
// the key looked up by its SHA-256 (node:crypto) in a Map, the same storage. Express's defaults
// (ETag on answers, X-Powered-By) are left as a team would find them.
import { createServer } from 'node:http'
import express, { type NextFunction, type Request, type Response } from 'express'
import { rateLimit } from 'express-rate-limit'
import { body, checkExact, matchedData, query, validationResult, type ValidationChain, type ValidationError } from 'express-validator'
import { REFERRAL_CODE } from '../../src/domain/link.js'
import type { FieldError } from '../../src/errors.js'
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
import type { CommissionListQuery, Store } from './store.js'

const toFieldErrors = (errors: ValidationError[]): FieldError[] =>
  errors.flatMap((error): FieldError[] => {
    if (error.type === 'field')
      return [
        {
          type: 'field',
          msg: `${error.path} ${String(error.msg)}`,
          path: error.path,
          location: error.location === 'body' ? 'body' : 'query',
        },
      ]
    if (error.type === 'unknown_fields') {
      return error.fields.map((field) => ({
        type: 'field',
        msg: `${field.path} is not a known field`,
        path: field.path,
        location: field.location === 'body' ? 'body' : 'query',
      }))
    }
    return []
  })

/** The chains, unknown fields refused, then a 400 with every failure or on to the handler. */
const validate = (chains: ValidationChain[]) => [
  checkExact(chains, { locations: ['query', 'body'] }),
  (req: Request, res: Response, next: NextFunction) => {
    const result = validationResult(req)
    if (result.isEmpty()) return next()
    res.status(400).json(validationFailed(toFieldErrors(result.array())))
  },
]

const uuid = (chain: ValidationChain) => chain.isUUID().withMessage('must be a UUID')
const listChains = [
  query('page').optional().isInt({ min: 1, max: 1_000_000 }).toInt(),
  query('limit').optional().isInt({ min: 1, max: 100 }).toInt(),
  query('contains').optional().isString().isLength({ max: 200 }),
  uuid(query('workspaceId').optional()),
  query('orderType').optional().isIn(['createdAt', 'updatedAt', 'commissionDate', 'amount', 'status']),
  query('orderValue').optional().isIn(['ASC', 'DESC']),
  uuid(query('affiliateId').optional()),
  uuid(query('campaignId').optional()),
  query('status').optional().isIn(['pending', 'processing', 'paid', 'refunded']),
]
const trackChains = [body('referralCode').isString().matches(REFERRAL_CODE), body('event').isIn(['open', 'click'])]

const principalOf = (res: Response): Principal => res.locals.principal as Principal

export function expressApp(store: Store): express.Express {
  const keys = peerKeys()
  const api = express.Router()
  api.use((req, res, next) => {
    const key = req.get('x-auth-service')
    const principal = key ? keys.get(sha256Hex(key)) : undefined
    if (!principal) return void res.status(401).json(UNAUTHORIZED)
    res.locals.principal = principal
    next()
  })
  api.use(
    rateLimit({
      ...PEER_LIMIT,
      standardHeaders: 'draft-6',
      legacyHeaders: false,
      keyGenerator: (_req, res) => principalOf(res).keyId,
      handler: (_req, res) => void res.status(429).json(RATE_LIMITED),
    }),
  )
  api.get('/campaigns', ...validate([uuid(query('campaignId'))]), async (req, res) => {
    const { campaignId } = matchedData(req, { locations: ['query'] }) as { campaignId: string }
    const campaign = await store.campaign(principalOf(res).workspaceIds, campaignId)
    if (campaign) res.json({ status: 200, message: MESSAGES.campaign, data: campaign })
    else res.status(404).json(notFound('Campaign'))
  })
  api.get('/commissions/list', ...validate(listChains), async (req, res) => {
    const q = matchedData(req, { locations: ['query'] }) as CommissionListQuery
    const principal = principalOf(res)
    if (q.workspaceId !== undefined && !principal.workspaceIds.includes(q.workspaceId.toLowerCase()))
      return void res.status(403).json(FORBIDDEN)
    res.json({ status: 200, message: MESSAGES.commissions, data: await store.commissions(principal.workspaceIds, q) })
  })
  api.post('/links/track', ...validate(trackChains), async (req, res) => {
    const { referralCode, event } = matchedData(req, { locations: ['body'] }) as { referralCode: string; event: 'open' | 'click' }
    const link = await store.track(principalOf(res).workspaceIds, referralCode, event)
    if (link) res.json({ status: 200, message: MESSAGES.track, data: link })
    else res.status(404).json(notFound('Link'))
  })
  const app = express()
  app.use(express.json({ limit: '100kb' }))
  app.use('/api/v1', api)
  return app
}

export const startExpress = (store: Store): Promise<Running> => listen(createServer(expressApp(store)))
