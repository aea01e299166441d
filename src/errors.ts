import type { ERROR_CODES } from './error-codes.js'

/** A stable snake_case name for every error the service answers; switch on it, never on `message`. */
export type ErrorCode = keyof typeof ERROR_CODES

/** The code an error has when it names none: one per status (422's is the generic `rule_violation`). */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'invalid_api_key',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'body_timeout',
  413: 'body_too_large',
  415: 'unsupported_media_type',
  422: 'rule_violation',
  429: 'rate_limited',
}

/** The code of a status, for an error that names none (and for answers from another version). */
export const codeOfStatus = (status: number): ErrorCode => CODE_OF_STATUS[status] ?? 'internal_error'

export interface AffiliateErrorOptions {
  /** @default by status: `validation_error`, `invalid_api_key`, `forbidden`, `not_found`, ..., `rule_violation` for 422 */
  code?: ErrorCode
  /** Present on 400 `Validation error`: one entry per failing field. */
  errors?: FieldError[]
  /** Extra response headers, such as `Allow` on 405 or `Retry-After` on 429. */
  headers?: Record<string, string>
  /** What led to it, for `onError` (a 5xx is reported there); never answered. */
  cause?: unknown
}

/** One entry of a `Validation error` body: a failing field and why. */
export interface FieldError {
  type: 'field'
  /** A sentence naming the field, e.g. `email must be a valid e-mail address`. */
  msg: string
  /** The field name; nested array items as `allowedUrlParameters[1]`. */
  path: string
  location: 'body' | 'query'
}

/**
 * The one error the service throws on purpose. The HTTP layer turns it into the
 * `{ status, code, message, errors? }` envelope; the typed API throws it as is.
 *
 * @example
 * try { await service.api.campaigns.get(id) }
 * catch (e) { if (e instanceof AffiliateError && e.code === 'not_found') ... }
 */
export class AffiliateError extends Error {
  override readonly name = 'AffiliateError'
  /** What went wrong, as a stable name: see `ErrorCode`. */
  readonly code: ErrorCode
  /** Present on 400 `Validation error`: one entry per failing field. */
  readonly errors?: FieldError[]
  /** Extra response headers, such as `Allow` on 405 or `Retry-After` on 429. */
  readonly headers?: Record<string, string>

  constructor(
    /** The HTTP status this error answers with. */
    readonly status: number,
    message: string,
    options: AffiliateErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = options.code ?? codeOfStatus(status)
    if (options.errors) this.errors = options.errors
    if (options.headers) this.headers = options.headers
  }
}

export const validationError = (errors: FieldError[]): AffiliateError => new AffiliateError(400, 'Validation error', { errors })

export const notFound = (what: string): AffiliateError => new AffiliateError(404, `${what} not found`)

export const forbiddenWorkspace = (): AffiliateError => new AffiliateError(403, 'You do not have access to this workspace')

/** A business rule refused the change (422), with the code that names the rule. */
export const unprocessable = (message: string, code: ErrorCode): AffiliateError => new AffiliateError(422, message, { code })
