import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { snapshot } from '../support/fixtures.js'
import { apiCampaignInput, KEY_A, USER_A, WS_A } from '../support/helpers.js'

// The Stripe promotion codes of promo codes (SPEC wave 4, "Promo codes"): with an integration's
// Stripe key, a code of a campaign with a stripeCouponId is made through the official SDK, pointed
// (`stripeApi`: host, port, protocol) at a stand-in on 127.0.0.1 that answers as Stripe's API does
// (its own example promotion code, test/fixtures/stripe/promotion-code.json). Each request's form
// body, key and Idempotency-Key is checked; Stripe's refusals and failures store nothing.

const PROMOTION_CODE = JSON.parse(readFileSync(new URL('../fixtures/stripe/promotion-code.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>
const API_KEY = 'rk_test_51Promo'

interface Seen {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: Record<string, string>
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> }

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

/** A stand-in for api.stripe.com: records each request, answers what `answer` says (a made promotion code by default). */
async function stripeStandIn(answer?: (request: Seen, count: number) => Answer | undefined) {
  const seen: Seen[] = []
  let made = 0
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
    req.on('end', () => {
      const request: Seen = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Object.fromEntries(new URLSearchParams(raw)),
      }
      seen.push(request)
      const chosen = answer?.(request, seen.length) ?? defaultAnswer(request, ++made)
      res.writeHead(chosen.status, { 'content-type': 'application/json', 'request-id': `req_${seen.length}`, ...chosen.headers })
      res.end(JSON.stringify(chosen.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return { seen, port: (server.address() as AddressInfo).port }
}

/** What Stripe answers a create (the example object, with what was asked) and a deactivation. */
function defaultAnswer(request: Seen, n: number): Answer {
  const b = request.body
  if (request.path === '/v1/promotion_codes') {
    const metadata = Object.fromEntries(
      Object.entries(b).flatMap(([key, value]) => (key.startsWith('metadata[') ? [[key.slice(9, -1), value]] : [])),
    )
    return {
      status: 200,
      body: {
        ...PROMOTION_CODE,
        id: `promo_stand_in_${n}`,
        active: true,
        code: b.code,
        metadata,
        promotion: { coupon: b['promotion[coupon]'], type: 'coupon' },
      },
    }
  }
  const id = request.path.split('/').pop()!
  return { status: 200, body: { ...PROMOTION_CODE, id, active: b.active !== 'false' } }
}

const stripeError = (status: number, type: string, message: string, extra: Record<string, unknown> = {}): Answer => ({
  status,
  body: { error: { type, message, doc_url: 'https://stripe.com/docs/error-codes', ...extra } },
  headers: status >= 500 ? { 'stripe-should-retry': 'false' } : {},
})

async function program(port: number, options: { coupon?: string; apiKey?: string | null; limitToOther?: boolean } = {}) {
  const storage = memoryStorage()
  const errors: unknown[] = []
  const service = createAffiliateService({
    storage,
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    rateLimit: false,
    stripeApi: { host: '127.0.0.1', port, protocol: 'http' },
    onError: (error) => errors.push(error),
  })
  const { api } = service
  const campaign = await api.campaigns.create(apiCampaignInput({ stripeCouponId: options.coupon ?? 'SUMMER20' }))
  const other = await api.campaigns.create(apiCampaignInput({ campaignName: 'Other' }))
  const affiliate = await api.affiliates.create({ email: 'ann@example.com', campaignId: campaign.id })
  const integration = await api.integrations.create({
    workspaceId: WS_A,
    provider: 'stripe',
    signingSecret: 'whsec_test',
    ...(options.apiKey === null ? {} : { apiKey: options.apiKey ?? API_KEY }),
    ...(options.limitToOther ? { campaignId: other.id } : {}),
  })
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await service.fetch(
      new Request(`http://test.local/api/v1${path}`, {
        method,
        headers: { 'x-auth-service': KEY_A, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    )
    return { status: response.status, body: (await response.json()) as any }
  }
  return { service, storage, api, campaign, affiliate, integration, call, errors }
}

describe('a promo code of a campaign with a Stripe coupon, with an integration holding a Stripe key', () => {
  it('makes the Stripe promotion code (coupon, code, metadata; the key; an idempotency key per promo code) and stores its id', async () => {
    const stripe = await stripeStandIn()
    const p = await program(stripe.port)
    // The key is write-only, like the signing secret.
    expect(JSON.stringify(p.integration)).not.toContain(API_KEY)
    const made = await p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'alice20' })
    expect(made.status).toBe(201)
    const promoCodeId = made.body.data.promoCodeId
    expect(made.body.data).toMatchObject({ code: 'ALICE20', stripePromotionCodeId: 'promo_stand_in_1' })
    expect(stripe.seen).toHaveLength(1)
    const [request] = stripe.seen
    expect(request!.method).toBe('POST')
    expect(request!.path).toBe('/v1/promotion_codes')
    expect(request!.body).toEqual({
      'promotion[type]': 'coupon',
      'promotion[coupon]': 'SUMMER20',
      code: 'ALICE20',
      'metadata[affiliateId]': p.affiliate.id,
      'metadata[promoCodeId]': promoCodeId,
      'metadata[workspaceId]': WS_A,
    })
    expect(request!.headers['idempotency-key']).toBe(`affiliate-service-promo-code-create-${promoCodeId}`)
    expect(request!.headers.authorization).toBe(`Bearer ${API_KEY}`)
    expect(request!.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(request!.headers['stripe-version']).toMatch(/^\d{4}-\d{2}-\d{2}/)
    expect(p.errors).toEqual([])
  })

  it('deleting the code deactivates it (active=false, its own idempotency key), then deletes the record', async () => {
    const stripe = await stripeStandIn()
    const p = await program(stripe.port)
    const made = (await p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'ANN10' })).body.data
    const deleted = await p.call('DELETE', `/promo-codes?promoCodeId=${made.promoCodeId}`)
    expect(deleted.status).toBe(200)
    expect(stripe.seen).toHaveLength(2)
    const deactivation = stripe.seen[1]!
    expect([deactivation.method, deactivation.path]).toEqual(['POST', `/v1/promotion_codes/${made.stripePromotionCodeId}`])
    expect(deactivation.body).toEqual({ active: 'false' })
    expect(deactivation.headers['idempotency-key']).toBe(`affiliate-service-promo-code-deactivate-${made.promoCodeId}`)
    expect((await p.call('GET', `/promo-codes?promoCodeId=${made.promoCodeId}`)).status).toBe(404)
  })

  it('Stripe refusing (no such coupon) is 422 provider_refused with its message, and nothing is stored', async () => {
    const stripe = await stripeStandIn(() =>
      stripeError(400, 'invalid_request_error', "No such coupon: 'SUMMER20'", { code: 'resource_missing', param: 'promotion[coupon]' }),
    )
    const p = await program(stripe.port)
    const before = await snapshot(p.storage)
    const refused = await p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'ANN10' })
    expect(refused).toEqual({
      status: 422,
      body: {
        status: 422,
        code: 'provider_refused',
        message: "Stripe refused to make the promotion code ANN10: No such coupon: 'SUMMER20'",
      },
    })
    expect(await snapshot(p.storage)).toBe(before)
    expect(stripe.seen).toHaveLength(1)
  })

  it('Stripe failing is 502 provider_error with its message (reported to onError), and nothing is stored; deleting then keeps the code', async () => {
    let failing = true
    const stripe = await stripeStandIn(() => (failing ? stripeError(500, 'api_error', 'An unknown error occurred') : undefined))
    const p = await program(stripe.port)
    const before = await snapshot(p.storage)
    const failed = await p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'ANN10' })
    expect(failed).toEqual({
      status: 502,
      body: { status: 502, code: 'provider_error', message: 'Stripe failed to make the promotion code ANN10: An unknown error occurred' },
    })
    expect(await snapshot(p.storage)).toBe(before)
    expect(p.errors).toHaveLength(1)
    failing = false
    const made = (await p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'ANN10' })).body.data
    failing = true
    const kept = await p.call('DELETE', `/promo-codes?promoCodeId=${made.promoCodeId}`)
    expect(kept.status).toBe(502)
    expect((await p.call('GET', `/promo-codes?promoCodeId=${made.promoCodeId}`)).body.data).toEqual(made)
  })

  it('a code lost to a racing create is deactivated in Stripe: the loser answers 422 duplicate and nothing of it stays', async () => {
    const stripe = await stripeStandIn()
    const p = await program(stripe.port)
    const [a, b] = await Promise.all([
      p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'RACE1' }),
      p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'race1' }),
    ])
    expect([a.status, b.status].sort()).toEqual([201, 422])
    const winner = (a.status === 201 ? a : b).body.data
    const loser = (a.status === 201 ? b : a).body
    expect(loser).toMatchObject({ code: 'duplicate' })
    const creates = stripe.seen.filter((request) => request.path === '/v1/promotion_codes')
    expect(creates).toHaveLength(2)
    const lost = creates.find((request) => request.body['metadata[promoCodeId]'] !== winner.promoCodeId)!
    const deactivations = stripe.seen.filter((request) => request.body.active === 'false')
    expect(deactivations).toHaveLength(1)
    expect(deactivations[0]!.headers['idempotency-key']).toBe(
      `affiliate-service-promo-code-deactivate-${lost.body['metadata[promoCodeId]']}`,
    )
    expect(deactivations[0]!.path).not.toBe(`/v1/promotion_codes/${winner.stripePromotionCodeId}`)
    expect((await p.api.promoCodes.list({})).items).toEqual([winner])
  })

  it('asks Stripe nothing without a key, without a coupon, for a code given its promotion code, or with a key limited to another campaign', async () => {
    const stripe = await stripeStandIn()
    for (const options of [{ apiKey: null }, { coupon: '' }, { limitToOther: true }]) {
      const p = await program(stripe.port, options)
      const made = await p.call('POST', '/promo-codes', { affiliateId: p.affiliate.id, code: 'ANN10' })
      expect(made.body.data).toMatchObject({ code: 'ANN10', stripePromotionCodeId: null })
      expect((await p.call('DELETE', `/promo-codes?promoCodeId=${made.body.data.promoCodeId}`)).status).toBe(200)
    }
    const p = await program(stripe.port)
    const given = await p.call('POST', '/promo-codes', {
      affiliateId: p.affiliate.id,
      code: 'ANN10',
      stripePromotionCodeId: 'promo_made_by_host',
    })
    expect(given.body.data.stripePromotionCodeId).toBe('promo_made_by_host')
    expect(stripe.seen).toEqual([])
  })
})
