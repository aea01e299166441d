import { AffiliateError, type ErrorCode } from '../errors.js'
import { lightResponse, lightResponsesHere } from './light-response.js'

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

/** The Response of an answer: JSON, its own headers, then `extra` (the rate-limit headers). */
export function toResponse(answer: Answer, extra?: Record<string, string>, withBody = true): Response {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  for (const more of [answer.headers, extra]) if (more) for (const name in more) headers[name.toLowerCase()] = more[name]!
  const body = withBody ? answer.body : null
  return lightResponsesHere ? lightResponse({ status: answer.status, headers, body }) : new Response(body, { status: answer.status, headers })
}

/** A Response with no body (a redirect, a preflight): light where the runtime allows, as `toResponse`. */
export const emptyResponse = (status: number, headers: Record<string, string>): Response =>
  lightResponsesHere ? lightResponse({ status, headers, body: null }) : new Response(null, { status, headers })
