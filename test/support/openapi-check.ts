import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { openApiDocument } from '../../src/http/openapi.js'

// Checks an answer against the service's own OpenAPI document: the status must be documented for
// the operation, the content type and body must match, and every required header must be there
// and match. `setup().call` runs every answer of the HTTP suites through it.

type Json = Record<string, any>
const BASE = '/api/v1'
const document = openApiDocument(BASE) as Json

const ajv = new (Ajv2020 as unknown as typeof import('ajv/dist/2020.js').Ajv2020)({ strict: false, allErrors: true, validateSchema: false })
;(addFormats as unknown as typeof addFormats.default)(ajv)
ajv.addSchema(document, 'openapi')

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')
const resolve = (value: Json): Json => (typeof value?.$ref === 'string' ? resolve(lookup(value.$ref)) : value)
function lookup(ref: string): Json {
  let node: any = document
  for (const part of ref.replace(/^#\//, '').split('/')) node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  if (node === undefined) throw new Error(`unresolved ${ref}`)
  return node
}

const validators = new Map<string, ReturnType<typeof ajv.compile>>()
function validate(ref: string, value: unknown): string | undefined {
  let check = validators.get(ref)
  if (!check) validators.set(ref, (check = ajv.compile({ $ref: `openapi#/${ref}` })))
  return check(value) ? undefined : ajv.errorsText(check.errors, { dataVar: 'body' })
}

export interface CheckedAnswer {
  method: string
  /** The request's path, with `basePath` (`/api/v1`) and query. */
  path: string
  status: number
  headers: Headers
  text: string
}

/** Documented paths with a parameter (`/r/{referralCode}`), as patterns of the paths they stand for. */
const templated = Object.keys(document.paths as Json)
  .filter((path) => path.includes('{'))
  .map((path) => [path, new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)] as const)
const documentedPath = (path: string): string =>
  (document.paths as Json)[path] ? path : (templated.find(([, pattern]) => pattern.test(path))?.[0] ?? path)

/** Why the answer does not match the document, or undefined when it does. */
export function mismatch(answer: CheckedAnswer): string | undefined {
  const method = answer.method.toLowerCase()
  const full = new URL(answer.path, 'http://x').pathname
  const path = documentedPath(full.startsWith(BASE) ? full.slice(BASE.length).replace(/\/+$/, '') : full)
  let responseRef: string
  const item = document.paths[path] as Json | undefined
  const operationOf = item?.[method === 'head' ? 'get' : method] as Json | undefined
  if (!operationOf) {
    // Unknown path or method: the documented 404 and 405.
    if (answer.status !== (item ? 405 : 404)) return `${answer.method} ${path} is not in the document, yet answered ${answer.status}`
    responseRef = pointer('components', 'responses', String(answer.status))
  } else {
    const documented = operationOf.responses[String(answer.status)]
    if (!documented) return `${answer.method} ${path} answered ${answer.status}, which its operation does not document`
    responseRef = documented.$ref
      ? documented.$ref.replace(/^#\//, '')
      : pointer('paths', path, method === 'head' ? 'get' : method, 'responses', String(answer.status))
  }
  const response = resolve(lookup(`#/${responseRef}`))
  for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
    const spec = resolve(header)
    const value = answer.headers.get(name)
    if (value === null) {
      if (spec.required) return `${answer.method} ${path} ${answer.status}: header ${name} is missing`
      continue
    }
    const why = ajv.validate(spec.schema, value) ? undefined : ajv.errorsText(ajv.errors)
    if (why) return `${answer.method} ${path} ${answer.status}: header ${name}: ${why}`
  }
  if (method === 'head') return answer.text === '' ? undefined : `HEAD ${path} answered a body`
  const type = answer.headers.get('content-type')
  const csv = response.content?.['text/csv']
  if (csv) {
    // A file answer: CSV text, documented as a string.
    if (type !== 'text/csv; charset=utf-8') return `${answer.method} ${path} ${answer.status}: content-type ${type}`
    const why = ajv.validate(csv.schema, answer.text) ? undefined : ajv.errorsText(ajv.errors)
    return why && `${answer.method} ${path} ${answer.status}: ${why}`
  }
  const content = response.content?.['application/json']
  if (!content) return undefined
  if (type !== 'application/json; charset=utf-8') return `${answer.method} ${path} ${answer.status}: content-type ${type}`
  let body: unknown
  try {
    body = JSON.parse(answer.text)
  } catch {
    return `${answer.method} ${path} ${answer.status}: body is not JSON: ${answer.text.slice(0, 100)}`
  }
  const why = validate(`${responseRef}/content/${pointer('application/json')}/schema`, body)
  return why && `${answer.method} ${path} ${answer.status}: ${why} in ${answer.text.slice(0, 300)}`
}

/** Throws when the answer does not match the document. */
export function checkAnswer(answer: CheckedAnswer): void {
  const why = mismatch(answer)
  if (why) throw new Error(`Answer does not match openapi.json: ${why}`)
}

/**
 * `fetch` for suites that talk to a served instance: every answer from under `/api/v1` (after
 * `mount`, the prefix a host mounted the service at) is checked against the document.
 */
export async function checkedFetch(url: string, init?: RequestInit, mount = ''): Promise<Response> {
  const response = await fetch(url, init)
  const { pathname, search } = new URL(url)
  const path = pathname.slice(mount.length)
  if (pathname.startsWith(mount) && (path === BASE || path.startsWith(`${BASE}/`))) {
    const text = await response.clone().text()
    checkAnswer({ method: init?.method ?? 'GET', path: path + search, status: response.status, headers: response.headers, text })
  }
  return response
}
