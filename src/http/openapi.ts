import { COMMISSION_STATUSES } from '../domain/commission-status.js'
import { PAYOUT_STATUSES } from '../domain/payout-status.js'
import { SKIP_REASONS } from '../domain/payout-run.js'
import { SALE_SKIP_REASONS } from '../domain/reward.js'
import { FRAUD_SKIP_REASONS } from '../domain/fraud-rules.js'
import { EVENT_TYPES } from '../events/types.js'
import { GRANULARITIES } from '../reports/buckets.js'
import { TOP_BY } from '../schemas/reports.js'
import { answerJsonSchema } from '../domain/answers.js'
import type { JsonSchema } from '../domain/checks.js'
import { fieldJsonSchema } from '../domain/describe.js'
import { jsonSchemaOf, MAX_FIELD_ERRORS } from '../schemas/validate.js'
import { linkTrack } from '../schemas/links.js'
import { routes, successStatus, type Answer, type Model, type Route } from './routes.js'
import { BEACON_MESSAGE, PUBLISHABLE_KEY_HEADER } from './tracking.js'
import { ERROR_CODES } from '../error-codes.js'

// The OpenAPI 3.1 document of the service, made from the route table (paths, operations, the
// query and body schemas that validate requests) and the one description of each record (answer
// schemas): nothing here describes a route or a field a second time.

/** Where each answer model is described: the record kind and the answer's name in `domain/schema`. */
const MODELS = {
  campaign: ['Campaign', () => answerJsonSchema('campaigns', 'campaign')],
  affiliate: ['Affiliate', () => answerJsonSchema('affiliates', 'affiliate')],
  link: ['ReferralLink', () => answerJsonSchema('links', 'link')],
  linkTrack: [
    'LinkTrackAnswer',
    () => ({
      description:
        'One event: the link as it now stands, its click written. A batch (`events`): how many were counted (repeats of a visitor and bots are not), and each link touched as it now stands, first-touched first.',
      oneOf: [
        ref('schemas', 'ReferralLink'),
        closed({ tracked: { type: 'integer', minimum: 0 }, items: { type: 'array', items: ref('schemas', 'ReferralLink') } }),
      ],
    }),
  ],
  commission: ['Commission', () => answerJsonSchema('commissions', 'commission')],
  referredUser: ['ReferredUser', () => answerJsonSchema('commissions', 'referredUser')],
  payout: ['Payout', () => answerJsonSchema('payouts', 'payout')],
  payoutRun: [
    'PayoutRun',
    () =>
      closed({
        payouts: { type: 'array', items: ref('schemas', 'Payout') },
        skipped: {
          type: 'array',
          items: closed({
            affiliateId: { type: 'string', format: 'uuid' },
            reason: { type: 'string', enum: [...SKIP_REASONS] },
            amount: moneyString(),
          }),
        },
      }),
  ],
  balance: [
    'AffiliateBalance',
    () =>
      closed({
        affiliateId: { type: 'string', format: 'uuid' },
        currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        held: moneyString('Pending commissions not yet due.'),
        due: moneyString('Pending, due and in no payout; negative when clawbacks outweigh sales.'),
        inPayout: moneyString('In payouts not yet paid.'),
        paidOut: moneyString('Paid out: the sum of its paid payouts.'),
        paidOutside: moneyString(
          'Commissions set processing or paid by hand outside any payout (and those refunded after such a payment). held + due + inPayout + paidOut + paidOutside = totalEarnings.',
        ),
      }),
  ],
  customer: ['Customer', () => answerJsonSchema('customers', 'customer')],
  saleResult: [
    'SaleResult',
    () =>
      closed({
        customer: { oneOf: [ref('schemas', 'Customer'), { type: 'null' }], description: 'Null when the sale could not be attributed.' },
        commission: { oneOf: [ref('schemas', 'Commission'), { type: 'null' }], description: 'The commission made; null when skipped.' },
        skipped: {
          type: ['string', 'null'],
          enum: [...SALE_SKIP_REASONS, ...FRAUD_SKIP_REASONS, null],
          description: 'Why no commission was made; null when one was.',
        },
      }),
  ],
  refundPreview: [
    'RefundPreview',
    () =>
      closed({
        commission: { ...ref('schemas', 'Commission'), description: 'The commission as the refund would leave it.' },
        clawback: {
          oneOf: [ref('schemas', 'Commission'), { type: 'null' }],
          description: 'The clawback a refund after payment would make (its id is not kept); null before payment.',
        },
        payoutChange: {
          oneOf: [
            closed({
              payoutId: { type: 'string', format: 'uuid' },
              previousAmount: moneyString(),
              amount: moneyString(),
              previousStatus: { type: 'string', enum: [...PAYOUT_STATUSES] },
              status: { type: 'string', enum: [...PAYOUT_STATUSES] },
            }),
            { type: 'null' },
          ],
          description:
            'The pending payout the commission would leave: its amount and status before and after (canceled at zero or below its minimum); null when it is in none.',
        },
      }),
  ],
  saleRefundResult: [
    'SaleRefundResult',
    () =>
      closed({
        commission: ref('schemas', 'Commission'),
        clawback: {
          oneOf: [ref('schemas', 'Commission'), { type: 'null' }],
          description: 'The clawback made when the commission had been paid.',
        },
      }),
  ],
  integration: ['Integration', () => answerJsonSchema('integrations', 'integration')],
  providerEvent: ['ProviderEvent', () => answerJsonSchema('providerEvents', 'providerEvent')],
  promoCode: ['PromoCode', () => answerJsonSchema('promoCodes', 'promoCode')],
  webhook: ['Webhook', () => answerJsonSchema('webhooks', 'webhook')],
  webhookWithSecret: [
    'WebhookWithSecret',
    () => {
      const webhook = answerJsonSchema('webhooks', 'webhook') as { properties: Record<string, unknown>; required: string[] }
      const secret = {
        type: 'string',
        pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
        description: 'Shown in this answer only: keep it to verify signatures.',
      }
      return closed({ ...webhook.properties, secret }, [...webhook.required, 'secret'])
    },
  ],
  delivery: ['WebhookDelivery', () => answerJsonSchema('webhookDeliveries', 'delivery')],
  event: [
    'Event',
    () =>
      closed({
        id: { type: 'string', format: 'uuid' },
        type: { type: 'string', enum: [...EVENT_TYPES] },
        createdAt: { type: 'string', format: 'date-time' },
        workspaceId: { type: 'string', format: 'uuid' },
        sequence: {
          type: 'integer',
          minimum: 1,
          description: 'Grows with commit order: an event committed later has a larger sequence (there may be gaps).',
        },
        data: { type: 'object', description: 'The resource as the API answers it, plus `previousStatus` on status changes.' },
      }),
  ],
  eventPage: [
    'EventPage',
    () =>
      closed({
        items: { type: 'array', items: ref('schemas', 'Event') },
        hasMore: { type: 'boolean', description: "More events follow: ask again with `after` set to the last item's id." },
      }),
  ],
  reportSummary: ['ReportSummary', () => closed({ ...periodProperties(), ...reportFigures() })],
  reportTimeseries: [
    'ReportTimeseries',
    () =>
      closed({
        ...periodProperties(),
        interval: { type: 'string', enum: [...GRANULARITIES] },
        timezone: { type: 'string', description: 'The canonical IANA name of the zone the buckets are in.' },
        items: {
          type: 'array',
          items: closed({
            start: { type: 'string', format: 'date-time' },
            end: {
              type: 'string',
              format: 'date-time',
              description: "The next bucket's start: a day across a daylight-saving change lasts 23 or 25 hours.",
            },
            opens: count(),
            clicks: count(),
            signups: count(),
            commissionCount: count(),
            earnings: moneyString('What the sales dated in the bucket earn.'),
          }),
        },
      }),
  ],
  topAffiliates: [
    'TopAffiliates',
    () =>
      closed({
        ...periodProperties(),
        by: { type: 'string', enum: [...TOP_BY] },
        items: {
          type: 'array',
          items: closed({
            affiliateId: { type: 'string', format: 'uuid' },
            campaignId: { type: 'string', format: 'uuid' },
            email: { type: 'string' },
            firstName: { type: 'string' },
            lastName: { type: 'string' },
            opens: count(),
            clicks: count(),
            signups: count(),
            conversionRate: rate(),
            commissionCount: count(),
            earnings: moneyString(),
          }),
        },
      }),
  ],
} satisfies Record<Model, [string, () => JsonSchema]>

const count = (): JsonSchema => ({ type: 'integer' })
const rate = (): JsonSchema => ({ type: 'number', minimum: 0, description: 'signups / clicks, four decimals; 0 without clicks.' })
const countAndAmount = (description: string) => ({ ...closed({ count: count(), amount: moneyString() }), description })

/** What every report answers about itself: whose figures, and the period. */
function periodProperties(): Record<string, JsonSchema> {
  const id = { type: ['string', 'null'], format: 'uuid' }
  return {
    workspaceId: { type: 'string', format: 'uuid' },
    campaignId: { ...id, description: 'null: every campaign of the workspace.' },
    affiliateId: { ...id, description: 'null: every affiliate.' },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
  }
}

function reportFigures(): Record<string, JsonSchema> {
  return {
    opens: count(),
    clicks: count(),
    signups: { ...count(), description: 'Referred e-mails whose first record for the affiliate is dated in the period.' },
    conversionRate: rate(),
    commissions: countAndAmount('Sales dated in the period; amount: what they earn (not refunded, less refunds after payment).'),
    byStatus: closed(
      Object.fromEntries(
        COMMISSION_STATUSES.map((status) => [
          status,
          countAndAmount(`The sales that are ${status} now; amount: the sum of their amounts.`),
        ]),
      ),
    ),
    clawbacks: countAndAmount('Clawbacks made in the period (negative amounts).'),
    paidOut: countAndAmount('Payouts paid in the period.'),
    sales: countAndAmount(
      'Sales dated in the period; amount: what the referred customers paid (their saleAmount, before refunds; 0 for commissions added without a sale): the referred revenue.',
    ),
  }
}

/** A two-decimal string amount, as answers give money. */
function moneyString(description?: string): JsonSchema {
  return fieldJsonSchema({ kind: 'money', wire: 'string', ...(description ? { description } : {}) })
}

/** An object with exactly these properties, all required unless `required` says which. */
const closed = (properties: Record<string, unknown>, required: string[] = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
})

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** The errors every keyed route may answer, by status; the route's own come from its shape. */
const ERRORS: Record<number, string> = {
  400: 'Validation error (with `errors`), a malformed body, or a bad `Idempotency-Key`',
  401: 'Missing or unknown key (`x-auth-service`, or `Authorization: Bearer`; both sent and different is refused too)',
  403: 'The key has no access to the workspace named',
  404: 'No such record in the workspaces the key sees',
  405: 'The path exists, the method does not (see `Allow`)',
  408: 'The body did not arrive within `bodyTimeoutMs`',
  409: 'A request with this `Idempotency-Key` is still being processed',
  413: 'The body is larger than `maxBodyBytes`',
  415: 'The body is not `application/json`',
  422: 'A rule refused the change (the message says which)',
  429: 'Rate limited: wait `Retry-After` seconds',
  500: 'Unexpected error (reported to `onError`)',
  502: 'A payment provider failed or could not be reached during a call made for the request (promo codes and Stripe): nothing was stored',
  503: "Not handled yet: a provider's event on its endpoint (reported to `onError`; the provider delivers the event again), or a promo code needing the `stripe` package",
}

/** The codes an error answer with this status may carry, in the order `ERROR_CODES` lists them. */
export const codesOfStatus = (status: number): string[] =>
  Object.entries(ERROR_CODES)
    .filter(([, [codeStatus]]) => codeStatus === status)
    .map(([code]) => code)

/** The error schema of one status: the shared `Error` with that status and its codes. */
const errorSchema = (status: number) => ({
  allOf: [ref('schemas', 'Error'), { properties: { status: { const: status }, code: { enum: codesOfStatus(status) } } }],
})

/** A status's description followed by the codes it answers with and what each means. */
const describeStatus = (status: number): string =>
  `${ERRORS[status] ?? 'Error'}. Codes: ${codesOfStatus(status)
    .map((code) => `\`${code}\` (${ERROR_CODES[code as keyof typeof ERROR_CODES][1].replace(/\.$/, '')})`)
    .join('; ')}.`

/** Routes that call a payment provider's API (promo codes made and deactivated in Stripe): they may answer 502 and 503 too. */
const callsProvider = (route: Route): boolean => route.operation[0] === 'promoCodes' && route.method !== 'GET'

const errorsOf = (route: Route): number[] =>
  [
    400,
    401,
    403,
    404,
    405,
    429,
    500,
    ...(route.body ? [408, 413, 415] : []),
    ...(route.method === 'POST' ? [409] : []),
    422,
    ...(callsProvider(route) ? [502, 503] : []),
  ].sort((a, b) => a - b)

const dataSchema = (answer: Exclude<Answer, 'csv'>): JsonSchema => {
  if (answer === 'deleted') return ref('schemas', 'Deleted')
  if ('one' in answer) return ref('schemas', MODELS[answer.one][0])
  if ('items' in answer) {
    return closed({ items: { type: 'array', items: ref('schemas', MODELS[answer.items][0]) } })
  }
  return closed({ items: { type: 'array', items: ref('schemas', MODELS[answer.page][0]) }, pagination: ref('schemas', 'Pagination') })
}

const rateLimitHeaders = {
  'RateLimit-Limit': ref('headers', 'RateLimit-Limit'),
  'RateLimit-Remaining': ref('headers', 'RateLimit-Remaining'),
  'RateLimit-Reset': ref('headers', 'RateLimit-Reset'),
}

/** A file route's success: CSV text, streamed, named by `Content-Disposition`. */
const fileAnswer = (route: Route) => ({
  description: `${route.message}: a CSV file (RFC 4180, CRLF line ends), streamed`,
  headers: {
    ...rateLimitHeaders,
    'Content-Disposition': {
      description: 'The name to save the file as, such as `payouts-paypal-2026-03-01.csv`.',
      required: true,
      schema: { type: 'string', pattern: '^attachment; filename="[^"]+\\.csv"$' },
    },
  },
  content: { 'text/csv': { schema: { type: 'string' } } },
})

function operation(route: Route): Record<string, unknown> {
  const [namespace, name] = route.operation
  const status = successStatus(route)
  const parameters: unknown[] = (route.query?.entries ?? []).map(([field, struct, optional]) => ({
    name: field,
    in: 'query',
    required: !optional,
    schema: struct.schema ?? {},
  }))
  if (route.method === 'POST') parameters.push(ref('parameters', 'Idempotency-Key'))
  const success = (status: number) =>
    route.answer === 'csv'
      ? fileAnswer(route)
      : {
          description: route.message,
          headers: {
            ...rateLimitHeaders,
            ...(route.method === 'POST' ? { 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') } : {}),
          },
          content: {
            'application/json': {
              schema: closed({
                status: { const: status },
                message: { const: route.message },
                data:
                  route.preview && route.preview.answer !== 'csv'
                    ? {
                        oneOf: [
                          dataSchema(route.answer),
                          {
                            ...dataSchema(route.preview.answer),
                            description: `When \`${route.preview.field}\` is true: what would happen; nothing is written.`,
                          },
                        ],
                      }
                    : dataSchema(route.answer),
              }),
            },
          },
        }
  return {
    operationId: `${namespace}${name[0]!.toUpperCase()}${name.slice(1)}`,
    summary: route.message.replace(/ successfully$/, ''),
    description: `Typed API: \`${namespace}.${name}\``,
    tags: [namespace],
    // Either scheme: the key in `x-auth-service` (the documented one) or as a bearer token.
    security: [{ apiKey: [] }, { bearerKey: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: route.alternativeBody
                  ? { oneOf: [jsonSchemaOf(route.body), jsonSchemaOf(route.alternativeBody)] }
                  : jsonSchemaOf(route.body),
                ...(route.example ? { example: route.example } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [status]: success(status),
      ...(route.alternativeStatus
        ? {
            [route.alternativeStatus.status]: {
              ...success(route.alternativeStatus.status),
              description: route.alternativeStatus.description,
            },
          }
        : {}),
      ...(route.statusIf
        ? {
            [route.statusIf.status]: {
              ...success(route.statusIf.status),
              description: `${route.message}, when \`${route.statusIf.field}\` is true`,
            },
          }
        : {}),
      ...Object.fromEntries(errorsOf(route).map((code) => [code, ref('responses', String(code))])),
    },
  }
}

/** The public tracking routes (no API key, limited per client address): see src/http/tracking.ts. */
function trackingPaths(): Record<string, Record<string, unknown>> {
  const limited = {
    description: 'Too many requests from this client address: wait `Retry-After` seconds',
    headers: { 'Retry-After': ref('headers', 'Retry-After') },
    content: lookupResponse(429).content,
  }
  const cors = {
    'Access-Control-Allow-Origin': {
      description: "The request's `Origin`, when the key's `allowedOrigins` holds it.",
      required: false,
      schema: { type: 'string' },
    },
    Vary: { description: '`Origin`', required: false, schema: { type: 'string' } },
  }
  const withCors = (code: number) => ({ ...lookupResponse(code), headers: cors })
  return {
    '/r/{referralCode}': {
      get: {
        operationId: 'trackingRedirect',
        security: [],
        summary: 'Referral redirect (no key; limited per client address): counts a click and redirects to the link',
        description:
          'Counts a click on the link (a repeat of the same visitor within `clickDedupeSeconds` counts once and carries the same ' +
          '`clickId`; known bots are redirected and not counted) and answers 302 to the link `url` with `clickId` added to its query.',
        tags: ['tracking'],
        parameters: [{ name: 'referralCode', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{3,64}$' } }],
        responses: {
          302: {
            description: "To the link's url, with `clickId=<uuid>` in its query (without it for a bot)",
            headers: { Location: { description: 'Where to go.', required: true, schema: { type: 'string', format: 'uri' } } },
          },
          404: ref('responses', '404'),
          429: limited,
          500: ref('responses', '500'),
        },
      },
    },
    '/track': {
      post: {
        operationId: 'trackingBeacon',
        summary: 'Tracking beacon (publishable key; limited per client address): counts a click or an open',
        description:
          'For client-side code: `x-publishable-key` takes a publishable (`pk_`) key, never a secret one. CORS is answered for the ' +
          "key's `allowedOrigins`; another `Origin` is 403. Dedupe and bots as for the redirect; a bot's `clickId` is null.",
        tags: ['tracking'],
        security: [{ publishableKey: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: jsonSchemaOf(linkTrack), example: { referralCode: 'REF-7K2M9QXD', event: 'click' } } },
        },
        responses: {
          200: {
            description: BEACON_MESSAGE,
            headers: cors,
            content: {
              'application/json': {
                schema: closed({
                  status: { const: 200 },
                  message: { const: BEACON_MESSAGE },
                  data: closed({
                    clickId: { type: ['string', 'null'], format: 'uuid', description: 'Null for a bot: nothing was counted.' },
                  }),
                }),
              },
            },
          },
          ...Object.fromEntries(
            [400, 401, 403, 404, 408, 413, 415, 429, 500].map((code) => [
              code,
              code === 429 ? { ...limited, headers: { ...limited.headers, ...cors } } : withCors(code),
            ]),
          ),
        },
      },
      options: {
        operationId: 'trackingPreflight',
        security: [],
        summary: 'CORS preflight of the beacon (no key)',
        tags: ['tracking'],
        responses: {
          204: {
            description: 'What the beacon accepts',
            headers: {
              'Access-Control-Allow-Methods': { required: true, schema: { const: 'POST, OPTIONS' } },
              'Access-Control-Allow-Headers': { required: true, schema: { const: `content-type, ${PUBLISHABLE_KEY_HEADER}` } },
              'Access-Control-Max-Age': integerHeader('Seconds a browser may keep this answer.'),
            },
          },
        },
      },
    },
  }
}

/** A shared error response with the beacon's CORS headers beside its own. */
const lookupResponse = (code: number) => ({
  description: describeStatus(code),
  content: { 'application/json': { schema: errorSchema(code) } },
})

const integerHeader = (description: string, required = true) => ({ description, required, schema: { type: 'string', pattern: '^\\d+$' } })

function components(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    Deleted: closed({ id: { type: 'string', format: 'uuid' } }),
    Pagination: closed({
      page: { type: 'integer', minimum: 1 },
      limit: { type: 'integer', minimum: 1 },
      total: { type: 'integer', minimum: 0 },
      totalPages: { type: 'integer', minimum: 0 },
    }),
    FieldError: closed({
      type: { const: 'field' },
      msg: { type: 'string' },
      path: { type: 'string' },
      location: { enum: ['body', 'query'] },
    }),
    Error: {
      ...closed(
        {
          status: { type: 'integer' },
          code: {
            type: 'string',
            enum: Object.keys(ERROR_CODES),
            description:
              'What went wrong, as a stable name: switch on it, never on `message`. Each code with its status and meaning:\n\n' +
              Object.entries(ERROR_CODES)
                .map(([code, [status, meaning]]) => `- \`${code}\` (${status}): ${meaning}`)
                .join('\n'),
          },
          message: { type: 'string', description: 'For people; its text may change.' },
          errors: { type: 'array', items: ref('schemas', 'FieldError'), minItems: 1, maxItems: MAX_FIELD_ERRORS },
        },
        ['status', 'code', 'message'],
      ),
      'x-error-codes': Object.fromEntries(
        Object.entries(ERROR_CODES).map(([code, [status, description]]) => [code, { status, description }]),
      ),
    },
    Health: closed({ status: { const: 'ok' }, service: { type: 'string' }, timestamp: { type: 'string', format: 'date-time' } }),
    HealthUnavailable: closed({
      status: { const: 'unavailable' },
      service: { type: 'string' },
      timestamp: { type: 'string', format: 'date-time' },
      reason: {
        type: 'string',
        description: 'Why, e.g. `storage: the database cannot be opened (trying again): … is in use by process 4242 …`.',
      },
    }),
  }
  for (const [name, describe] of Object.values(MODELS)) schemas[name] = describe()

  const responses: Record<string, unknown> = {}
  for (const code of Object.keys(ERRORS)) {
    const status = Number(code)
    const headers: Record<string, unknown> = {}
    // 401 (before a key is known), 405 and 500 of an unknown path carry no key's limits.
    if (status === 429) headers['Retry-After'] = ref('headers', 'Retry-After')
    if (status === 405) headers.Allow = ref('headers', 'Allow')
    responses[code] = {
      description: describeStatus(status),
      ...(Object.keys(headers).length ? { headers } : {}),
      content: { 'application/json': { schema: errorSchema(status) } },
    }
  }

  return {
    securitySchemes: {
      apiKey: { type: 'apiKey', in: 'header', name: 'x-auth-service', description: 'An API key; it names the workspaces it may use.' },
      bearerKey: {
        type: 'http',
        scheme: 'bearer',
        description:
          'The same API key as `Authorization: Bearer <key>`, for clients that only send bearer tokens. Sent with a different `x-auth-service`: 401.',
      },
      publishableKey: {
        type: 'apiKey',
        in: 'header',
        name: PUBLISHABLE_KEY_HEADER,
        description: 'A publishable key (`pk_`): tracking only, safe in web pages; its `allowedOrigins` decide CORS.',
      },
    },
    schemas,
    responses,
    parameters: {
      'Idempotency-Key': {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Send the same key to retry safely: the first answer is replayed (24 h) and nothing runs twice.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    },
    headers: {
      // On every keyed answer once the key is known, unless the host turned limiting off.
      'RateLimit-Limit': integerHeader("The key's burst capacity (absent when `rateLimit: false`).", false),
      'RateLimit-Remaining': integerHeader('Requests left in the burst now (absent when `rateLimit: false`).', false),
      'RateLimit-Reset': integerHeader('Seconds until the burst is full again (absent when `rateLimit: false`).', false),
      'Retry-After': integerHeader('Seconds to wait before trying again.'),
      'Idempotent-Replayed': {
        description: 'Present (`true`) on an answer replayed for a repeated `Idempotency-Key`.',
        required: false,
        schema: { const: 'true' },
      },
      Allow: { description: 'The methods the path answers.', required: true, schema: { type: 'string' } },
    },
  }
}

/** The OpenAPI 3.1 document of a service answering under `basePath`. */
export function openApiDocument(basePath: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {
    '/health': {
      get: {
        operationId: 'health',
        summary: 'Health check (no key, not limited); HEAD answers the same without a body',
        security: [],
        responses: {
          200: { description: 'Up', content: { 'application/json': { schema: ref('schemas', 'Health') } } },
          503: {
            description: 'The storage is not open (yet): every other route would fail',
            content: { 'application/json': { schema: ref('schemas', 'HealthUnavailable') } },
          },
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This document (no key, not limited)',
        security: [],
        responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  }
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route)
  Object.assign(paths, trackingPaths())
  return {
    openapi: '3.1.0',
    info: {
      title: 'affiliate-service',
      version: '1',
      description:
        'Campaigns, affiliates, referral links, commissions and referred users, behind API keys and per-key rate limits. ' +
        'Success is `{ status, message, data }`; errors are `{ status, code, message, errors? }`, `code` one of those listed on the `Error` schema (`x-error-codes`).',
    },
    // Paths are relative to it; the root basePath ('' once normalized) is '/'.
    servers: [{ url: basePath || '/' }],
    // Every keyed route needs `x-auth-service`; the public ones (health, this document, the
    // redirect, the beacon's preflight) say `security: []`, the beacon names its publishable key.
    security: [{ apiKey: [] }],
    tags: [...new Set(routes.map((route) => route.operation[0]))].map((name) => ({ name })),
    paths,
    components: components(),
  }
}
