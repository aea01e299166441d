import { constantTimeEqual } from '../crypto.js'
import { AffiliateError } from '../errors.js'
import { readBody, type BodyLimits } from '../http/body.js'
import { cookiesOf, setCookie } from './cookies.js'
import type { FieldErrors } from './forms.js'
import { keyedHash, randomToken } from './secrets.js'

// What the portal's and the admin's pages share around HTML: one request's cookies and CSRF
// token, reading a form, and the answers (a page with its security headers, a redirect).

/** A set of pages (the portal, the admin) served from the service's `fetch`: `serves` says whether a request is one of them. */
export interface Site {
  readonly path: string
  serves(request: Request): boolean
  fetch(request: Request, context?: unknown): Promise<Response>
}

/** `fetch` answering `site`'s pages first, everything else as before. */
export const withSite =
  (site: Site, next: (request: Request, context?: unknown) => Promise<Response>) =>
  (request: Request, context?: unknown): Promise<Response> =>
    site.serves(request) ? site.fetch(request, context) : next(request, context)

/** Forms are small: a larger body is refused before it is read. */
export const MAX_FORM_BYTES = 16 * 1024

/** Answers a refused form or page with a status; its text is shown on a page of its own. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly link?: { href: string; label: string },
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }
}

/** A form as sent: the first value of each field, trimmed; `all` every value of a repeated field. */
export interface Form {
  get(name: string): string
  all(name: string): string[]
  has(name: string): boolean
}

/** What one request carries: its cookies, the CSRF seed (made now when it had none) and its answer's cookies. */
export interface Visit {
  request: Request
  url: URL
  secure: boolean
  cookies: Map<string, string>
  seed: string
  /** The CSRF token of this browser: every form carries it. */
  csrf: string
  setCookies: string[]
}

export interface PagesConfig {
  /** Where the pages are (cookies are scoped to it). */
  path: string
  /** Keys the CSRF tokens. */
  key: Uint8Array
  /** The cookie holding this browser's CSRF seed. */
  csrfCookie: string
  /** Mark cookies `Secure`; null: when the request is https. */
  secureCookies: boolean | null
  sameSite: 'Lax' | 'Strict'
  /** The Content-Security-Policy of every page. */
  csp: string
  body: BodyLimits
}

const SEED = /^[A-Za-z0-9_-]{43}$/

/**
 * The request side of server-rendered pages: a visit per request, forms checked against the
 * visit's CSRF token (a double-submit: the token is an HMAC of a seed the browser holds in a
 * cookie), and the answers with the headers every page carries.
 */
export function pages(config: PagesConfig) {
  const csrfOf = (seed: string) => keyedHash(config.key, `csrf:${seed}`)
  const formLimits: BodyLimits = { maxBytes: Math.min(MAX_FORM_BYTES, config.body.maxBytes), timeoutMs: config.body.timeoutMs }

  function visit(request: Request): Visit {
    const url = new URL(request.url)
    const secure = config.secureCookies ?? url.protocol === 'https:'
    const cookies = cookiesOf(request)
    const setCookies: string[] = []
    let seed = cookies.get(config.csrfCookie) ?? ''
    if (!SEED.test(seed)) {
      seed = randomToken()
      setCookies.push(setCookie(config.csrfCookie, seed, { path: config.path, secure, sameSite: config.sameSite }))
    }
    return { request, url, secure, cookies, seed, csrf: csrfOf(seed), setCookies }
  }

  /** A cookie of these pages (path, `HttpOnly`, `SameSite`, `Secure` as configured) to set on the answer. */
  function cookie(v: Visit, name: string, value: string, maxAge?: number): void {
    v.setCookies.push(setCookie(name, value, { path: config.path, secure: v.secure, sameSite: config.sameSite, ...(maxAge !== undefined ? { maxAge } : {}) }))
  }

  function page(v: Visit, body: string, status = 200, headers: Record<string, string> = {}): Response {
    const out = new Headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': config.csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      ...headers,
    })
    for (const c of v.setCookies) out.append('set-cookie', c)
    return new Response(v.request.method === 'HEAD' ? null : body, { status, headers: out })
  }

  function redirect(v: Visit, to: string): Response {
    const out = new Headers({ location: to, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
    for (const c of v.setCookies) out.append('set-cookie', c)
    return new Response(null, { status: 303, headers: out })
  }

  /** The form of a POST, after its CSRF token is checked against this browser's seed (403 otherwise). */
  async function form(v: Visit): Promise<Form> {
    const type = (v.request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (type !== 'application/x-www-form-urlencoded') {
      throw new PageError(415, 'Form not understood', 'This page takes forms sent by the browser (application/x-www-form-urlencoded).')
    }
    let params: URLSearchParams
    try {
      params = new URLSearchParams(new TextDecoder('utf-8', { fatal: true }).decode(await readBody(v.request, formLimits)))
    } catch (error) {
      // A 408 carries `Connection: close` (the rest of the body is unread): the page keeps it.
      if (error instanceof AffiliateError && (error.code === 'body_too_large' || error.code === 'body_timeout')) {
        throw new PageError(error.status, 'Form refused', error.message, undefined, error.headers)
      }
      if (error instanceof AffiliateError) throw error
      throw new PageError(400, 'Form not understood', 'The form was not valid UTF-8 text.')
    }
    const sent = params.get('csrf') ?? ''
    // The seed came with this request (not made now) and the token is the one made from it.
    if (!v.cookies.has(config.csrfCookie) || v.cookies.get(config.csrfCookie) !== v.seed || !constantTimeEqual(sent, csrfOf(v.seed))) {
      throw new PageError(403, 'Form expired', 'This form has expired or did not come from this site. Go back, reload the page and send it again.')
    }
    return { get: (name) => (params.get(name) ?? '').trim(), all: (name) => params.getAll(name).map((value) => value.trim()), has: (name) => params.has(name) }
  }

  return { visit, cookie, page, redirect, form }
}

export type Pages = ReturnType<typeof pages>

/** An API refusal of a form as what the page shows: its message and each named field's. Other errors are thrown on. */
export function refusal(error: unknown, fields: readonly string[]): { problem: string; errors: FieldErrors; status: number } {
  if (!(error instanceof AffiliateError) || error.status >= 500 || error.status === 404) throw error
  const errors: FieldErrors = {}
  for (const entry of error.errors ?? []) if (fields.includes(entry.path)) errors[entry.path] = entry.msg
  const problem = error.errors ? 'Please correct the following:' : error.message
  return { problem, errors, status: error.status }
}
