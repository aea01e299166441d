import { AffiliateError } from '../errors.js'
import { readBody, type BodyLimits } from '../http/body.js'
import { PageError } from './page-error.js'

/** Forms are small: a larger body is refused before it is read. */
export const MAX_FORM_BYTES = 16 * 1024

/** A form as sent: the first value of each field, trimmed; `all` every value of a repeated field. */
export interface Form {
  get(name: string): string
  all(name: string): string[]
  has(name: string): boolean
}

/** The limits of a form's body: the service's, at most `MAX_FORM_BYTES`. */
export const formLimits = (body: BodyLimits): BodyLimits => ({
  maxBytes: Math.min(MAX_FORM_BYTES, body.maxBytes),
  timeoutMs: body.timeoutMs,
})

/** The form a browser sent (`application/x-www-form-urlencoded`, UTF-8); anything else is a `PageError`. */
export async function readForm(request: Request, limits: BodyLimits): Promise<Form> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') {
    throw new PageError(415, 'Form not understood', 'This page takes forms sent by the browser (application/x-www-form-urlencoded).')
  }
  let params: URLSearchParams
  try {
    params = new URLSearchParams(new TextDecoder('utf-8', { fatal: true }).decode(await readBody(request, limits)))
  } catch (error) {
    // A 408 carries `Connection: close` (the rest of the body is unread): the page keeps it.
    if (error instanceof AffiliateError && (error.code === 'body_too_large' || error.code === 'body_timeout')) {
      throw new PageError(error.status, 'Form refused', error.message, undefined, error.headers)
    }
    if (error instanceof AffiliateError) throw error
    throw new PageError(400, 'Form not understood', 'The form was not valid UTF-8 text.')
  }
  return {
    get: (name) => (params.get(name) ?? '').trim(),
    all: (name) => params.getAll(name).map((value) => value.trim()),
    has: (name) => params.has(name),
  }
}
