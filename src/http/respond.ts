import { AffiliateError, type ErrorCode } from '../errors.js'
import { portableRuntime, type Runtime } from '../runtime.js'

export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * An answer before it is a Response: its status, JSON text and extra headers. Kept as data where
 * it must be stored (an idempotent request's answer) or added to (the rate-limit headers); the
 * handler turns every one into a Response with `toResponse`.
 */
export interface Answer {
  status: number
  body: string
  headers?: Record<string, string> | undefined
}

/** `{ status, message, data }`: the success envelope, the one place it is built. */
export const envelope = (status: number, message: string, data: unknown): Answer => ({
  status,
  body: JSON.stringify({ status, message, data }),
})

/** The status and body an error answers with: `{ status, code, message }`, plus `errors` on a validation error. */
export function errorBody(error: unknown): { status: number; code: ErrorCode; message: string; errors?: unknown[] } {
  if (!(error instanceof AffiliateError)) return { status: 500, code: 'internal_error', message: 'Internal server error' }
  const body = { status: error.status, code: error.code, message: error.message }
  return error.errors ? { ...body, errors: error.errors } : body
}

/**
 * The one place an error becomes an answer. Anything that is not an AffiliateError is a 500 that
 * says nothing about its cause.
 */
export function errorAnswer(error: unknown): Answer {
  const body = errorBody(error)
  return { status: body.status, body: JSON.stringify(body), headers: error instanceof AffiliateError ? error.headers : undefined }
}

/**
 * The Response of an answer: JSON, its own headers, then `extra` (the rate-limit headers), made by
 * the caller's runtime (the Node adapter's light Response, else a real one).
 */
export function toResponse(answer: Answer, extra?: Record<string, string>, runtime: Runtime = portableRuntime, withBody = true): Response {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  for (const more of [answer.headers, extra]) if (more) for (const name in more) headers[name.toLowerCase()] = more[name]!
  return runtime.response(answer.status, headers, withBody ? answer.body : null)
}
