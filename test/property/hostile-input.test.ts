import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/error-codes.js'
import { routes } from '../../src/http/routes.js'
import { populate, snapshot } from '../support/fixtures.js'
import { KEY_A, setup as setupWith, UNKNOWN_ID, WS_A, WS_B } from '../support/helpers.js'
import { storageKinds } from '../support/fixtures.js'

// Generated hostile input against every route: every answer is the documented envelope with a
// documented status, never a 500, and a refused request leaves the store exactly as it was.

const DOCUMENTED = new Set([200, 201, 400, 403, 404, 405, 413, 415, 422])

const fieldNames = [
  'campaignName',
  'workspaceId',
  'commissionType',
  'amount',
  'minimumPayoutAmount',
  'url',
  'payoutTerm',
  'allowedUrlParameters',
  'isDefault',
  'email',
  'campaignId',
  'affiliateId',
  'payoutEmail',
  'payoutMethod',
  'details',
  'isActive',
  'isBanned',
  'referralCode',
  'urlParameter',
  'event',
  'referredUser',
  'referredTo',
  'adminEarnedAmount',
  'status',
  'commissionDate',
  'remarks',
  'payoutDate',
  'name',
  'isWalletPayment',
  'chargeId',
  'invoiceId',
  'stripeSubscriptionId',
  'isSelfReferral',
  'id',
  'commissionId',
  'totalEarnings',
  'page',
  'limit',
  'contains',
  'orderType',
  'orderValue',
  'linkId',
  '__proto__',
  'constructor',
  'prototype',
]

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    'NaN',
    'Infinity',
    '-1',
    '1e400',
    '0.001',
    '12.345',
    '-0.01',
    '1,5',
    '0x10',
    'null',
    'true',
    'not-an-email',
    'a@b',
    '@example.com',
    'x'.repeat(300),
    'é'.repeat(5000),
    '\u0000',
    '\ud800',
    '<script>',
    "'; DROP TABLE campaigns; --",
    '%',
    '_',
    '../../etc/passwd',
    'REF-AAAAAAAA',
    'percentage',
    'fixed',
    'pending',
    'paid',
    'refunded',
    'open',
    'click',
    'ASC',
    'desc',
    'createdAt',
    'ftp://x',
    'https://ok.example',
    '2026-01-01T00:00:00.000Z',
    '2026-13-45T99:99:99Z',
    UNKNOWN_ID,
    WS_A,
    WS_B,
    UNKNOWN_ID.toUpperCase(),
  ),
)

const hostileNumber = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, -1, 0.5, 0.125, 0.1 + 0.2, 1e21, 1e-7, Number.MAX_SAFE_INTEGER, 2 ** 53 + 1, 1000000000.01, 100.01),
)

const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null))
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...fieldNames), tie('value'), { maxKeys: 4 }),
  ),
})).value

const body = fc.oneof(
  // Objects with known and poisonous keys.
  fc.dictionary(fc.constantFrom(...fieldNames), value, { maxKeys: 8 }).map((o) => JSON.stringify(o)),
  // JSON texts that are not objects, malformed, deep or huge.
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    'NaN',
    '{"amount": NaN}',
    '{"amount": Infinity}',
    '[]',
    'null',
    '"text"',
    '{"__proto__": {"isAdmin": true}}',
    '{"constructor": {"prototype": {"polluted": 1}}}',
    '\u0000',
    '{"email": "a@b.c", "email": "dup@example.com"}',
  ),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.constant(JSON.stringify({ campaignName: 'x'.repeat(200_000) })),
)

const query = fc
  .array(fc.tuple(fc.constantFrom(...fieldNames, 'referredUser'), hostileString), { maxLength: 5 })
  .map((pairs) => new URLSearchParams(pairs).toString())

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/json; charset=latin1',
  undefined,
)

for (const [kind, makeStorage] of storageKinds)
  describe(`hostile input (${kind})`, () => {
    const setup = async () => setupWith({ storage: await makeStorage() })
    it('every route answers a documented 4xx envelope (never a 500) and a refused request changes nothing', async () => {
      const { call, storage, errors } = await setup()
      const owned = await populate(call, KEY_A, WS_A, 'a')
      const realIds = [owned.campaign.id, owned.affiliate.id, owned.link.id, owned.commission.commissionId]
      const routeArb = fc.constantFrom(...routes)
      await fc.assert(
        fc.asyncProperty(routeArb, query, body, contentType, fc.constantFrom(...realIds, UNKNOWN_ID), async (route, q, raw, type, id) => {
          // Half the time aim the query at a real record, so deep checks run, not just the id format.
          const idParam = { GET: 'campaignId', PUT: 'campaignId', DELETE: 'campaignId', POST: '' }[route.method]
          const aimed =
            idParam && q.length % 2 === 0
              ? `${q ? `${q}&` : ''}${route.path.slice(1).split('/')[0]?.replace(/s$/, '').replace('referred-user', 'commission')}Id=${id}`
              : q
          const before = await snapshot(storage)
          const hasBody = route.method === 'POST' || route.method === 'PUT'
          const response = await call(route.method, `${route.path}${aimed ? `?${aimed}` : ''}`, {
            ...(hasBody ? { body: raw, headers: type ? { 'content-type': type } : {} } : {}),
          })
          expect(
            DOCUMENTED.has(response.status),
            `${route.method} ${route.path} answered ${response.status}: ${response.text.slice(0, 300)}`,
          ).toBe(true)
          if (route.answer === 'csv' && response.status === 200) {
            // An export whose query survived (say `contains=` alone): its file, not an envelope.
            expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
            expect(await snapshot(storage)).toBe(before)
            return
          }
          expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
          expect(response.body.status).toBe(response.status)
          expect(typeof response.body.message).toBe('string')
          if (response.status >= 400) {
            expect(Object.keys(response.body).sort()).toEqual(
              response.body.errors ? ['code', 'errors', 'message', 'status'] : ['code', 'message', 'status'],
            )
            // A listed code, of the status answered.
            expect(ERROR_CODES[response.body.code as keyof typeof ERROR_CODES]?.[0]).toBe(response.status)
            for (const entry of response.body.errors ?? []) {
              expect(Object.keys(entry).sort()).toEqual(['location', 'msg', 'path', 'type'])
              expect(['body', 'query']).toContain(entry.location)
            }
            expect(response.text).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/)
            expect(await snapshot(storage)).toBe(before)
          }
          expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
          expect(({} as Record<string, unknown>).polluted).toBeUndefined()
        }),
        { numRuns: 400 },
      )
      expect(errors).toEqual([])
    })

    it('a typed API call with hostile input throws the typed error and changes nothing', async () => {
      const { api, storage } = await setup()
      const namespaces = ['campaigns', 'affiliates', 'commissions', 'referredUsers'] as const
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...namespaces),
          fc.dictionary(fc.constantFrom(...fieldNames), value, { maxKeys: 8 }),
          async (name, input) => {
            const before = await snapshot(storage)
            const outcome = await (api[name].create as (input: unknown) => Promise<unknown>)(input).then(
              () => 'created',
              (error: { name?: string; status?: number }) => error,
            )
            if (outcome !== 'created') {
              expect((outcome as Error).name).toBe('AffiliateError')
              expect(DOCUMENTED.has((outcome as { status: number }).status)).toBe(true)
              expect(await snapshot(storage)).toBe(before)
            }
          },
        ),
        { numRuns: 300 },
      )
    })
  })
