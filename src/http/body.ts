import { refusal } from '../errors.js'
import type { Incoming } from './incoming.js'

/** @default 100 KiB */
export const DEFAULT_MAX_BODY_BYTES = 100 * 1024

const isJsonType = (header: string | null): boolean => {
  if (!header) return false
  // What nearly every client sends, accepted before taking the header apart.
  if (header === 'application/json' || header === 'application/json; charset=utf-8') return true
  const [type = '', ...params] = header.toLowerCase().split(';').map((part) => part.trim())
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false
  const charset = params.find((param) => param.startsWith('charset='))
  return !charset || /^charset="?utf-8"?$/.test(charset)
}

const tooLarge = (limit: number) => refusal(413, `Request body is larger than the limit of ${limit} bytes`)
const invalidJson = () => refusal(400, 'Invalid JSON body')

const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * The request's JSON object body: 415 unless the content type is JSON, 413 over `limit` bytes
 * (by Content-Length before reading anything, else once that many have come),
 * 400 `Invalid JSON body` when it does not parse (an empty body included), and 400 when it is not an object.
 */
export async function readJsonBody(request: Incoming, limit: number): Promise<Record<string, unknown>> {
  if (!isJsonType(request.header('content-type'))) {
    throw refusal(415, 'Content-Type must be application/json')
  }
  const declared = request.header('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  const bytes = await request.readBody(limit)
  if (bytes === undefined) throw tooLarge(limit)
  let value: unknown
  try {
    value = JSON.parse(decoder.decode(bytes))
  } catch {
    throw invalidJson()
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw refusal(400, 'Request body must be a JSON object')
  }
  return value as Record<string, unknown>
}
