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
 * `{ status, message, errors? }` envelope; the typed API throws it as is.
 *
 * @example
 * try { await service.api.campaigns.get(id) }
 * catch (e) { if (e instanceof AffiliateError && e.status === 404) ... }
 */
export class AffiliateError extends Error {
  override readonly name = 'AffiliateError'
  constructor(
    /** The HTTP status this error answers with. */
    readonly status: number,
    message: string,
    /** Present on 400 `Validation error`: one entry per failing field. */
    readonly errors?: FieldError[],
    /** Extra response headers, such as `Allow` on 405 or `Retry-After` on 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }
}

export const validationError = (errors: FieldError[]): AffiliateError =>
  new AffiliateError(400, 'Validation error', errors)

export const notFound = (what: string): AffiliateError => new AffiliateError(404, `${what} not found`)

export const forbiddenWorkspace = (): AffiliateError =>
  new AffiliateError(403, 'You do not have access to this workspace')

export const unprocessable = (message: string): AffiliateError => new AffiliateError(422, message)
