import { AffiliateError } from '../errors.js'

export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * An answer before it is a Response: what the handler makes. `service.fetch` turns it into a
 * Response at its edge; the Node adapter writes it with one `end()`, with no Response or stream.
 */
export interface Reply {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
  /**
   * Set when the answer holds a rate limiter's in-flight slot: whoever delivers the reply calls it
   * once the body has gone out (or the client has gone), and the slot is freed. Calls after the
   * first do nothing.
   */
  done?: () => void
}

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': JSON_TYPE })

const lowerCased = (headers: Record<string, string>): Record<string, string> => {
  const out: Record<string, string> = { 'content-type': JSON_TYPE }
  for (const name in headers) out[name.toLowerCase()] = headers[name]!
  return out
}

/** JSON with its content type, and `headers` (any case) beside it. */
export const jsonReply = (status: number, body: unknown, headers?: Record<string, string>): Reply => ({
  status,
  // Shared and frozen when there is nothing to add: a reply's headers are copied, never changed.
  headers: headers ? lowerCased(headers) : JSON_HEADERS,
  body: JSON.stringify(body),
})

/** `{ status, message, data }`. */
export const success = (status: number, message: string, data: unknown): Reply => jsonReply(status, { status, message, data })

/** The status, body and headers an error is answered with. */
export function errorParts(error: unknown): { status: number; body: object; headers?: Record<string, string> | undefined } {
  if (error instanceof AffiliateError) {
    const body = error.errors
      ? { status: error.status, message: error.message, errors: error.errors }
      : { status: error.status, message: error.message }
    return { status: error.status, body, headers: error.headers }
  }
  return { status: 500, body: { status: 500, message: 'Internal server error' } }
}

/**
 * The one place an error becomes an answer: `{ status, message }`, plus `errors` on a validation
 * error. Anything that is not an AffiliateError is a 500 that says nothing about its cause.
 */
export function errorReply(error: unknown): Reply {
  const { status, body, headers } = errorParts(error)
  return jsonReply(status, body, headers)
}
