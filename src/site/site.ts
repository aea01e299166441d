import type { Clock } from '../clock.js'
import { AffiliateError } from '../errors.js'
import type { BodyLimits } from '../http/body.js'
import type { AffiliateApi } from '../http/typed-api.js'
import type { Storage } from '../storage/types.js'
import { csrfTokens } from './csrf.js'
import { formLimits } from './form-reader.js'
import { isUnder, pathnameOf, type Site } from './mount.js'
import { PageError } from './page-error.js'
import type { SiteRouter } from './router.js'
import { SCRIPT_PATH, scriptResponse } from './script.js'
import { cspHash } from './secrets.js'
import type { Link } from './shell.js'
import { visitOf, type Visit } from './visit.js'

/** What the service hands each of its sites. */
export interface SiteDeps {
  /** The service's operations: every page reads and writes through them. */
  api: AffiliateApi
  storage: Storage
  clock: Clock
  /** Where the API is (`/api/v1`). */
  basePath: string
  body: BodyLimits
  onError: (error: unknown, request: Request) => void
}

export type { Site } from './mount.js'

export interface SiteOptions {
  /** Where the pages are, e.g. `/portal`. */
  path: string
  /** Keys the CSRF tokens; a function when it is read from the storage (see `madeOnce`). */
  key: Uint8Array | (() => Promise<Uint8Array>)
  /** The cookie holding each browser's CSRF seed. */
  csrfCookie: string
  /** `Strict` keeps the site's cookies off every request another site starts (the admin). */
  sameSite: 'Lax' | 'Strict'
  /** Mark cookies `Secure`; null: when the request is https. */
  secureCookies: boolean | null
  /** The one style sheet, inline in every page (allowed by its hash). */
  style: string
  body: BodyLimits
  /** What `?notice=` may say: fixed texts only. */
  notices: Readonly<Record<string, string>>
  /**
   * A refusal of the API (4xx) that no page caught: shown with its message as "Not done" (the
   * admin, whose owner may read it), or taken as unexpected: `onError` and a 500 (the portal).
   */
  showRefusals: boolean
  onError(error: unknown, request: Request): void
  /** A page of text (an error, a refusal) in the site's layout. */
  message(v: Visit, title: string, text: string, link?: Link): string
  router: SiteRouter
}

/** The Content-Security-Policy of every page: nothing but this style sheet, and scripts, images and forms of this origin. */
export const contentSecurityPolicy = (style: string): string =>
  [
    "default-src 'none'",
    `style-src ${cspHash(style)}`,
    "script-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')

/** `make()` once, shared by every caller; made again when it failed (the storage was down). */
export function madeOnce<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | null = null
  return () =>
    (made ??= make()).catch((error: unknown) => {
      made = null
      throw error
    })
}

/**
 * Server-rendered pages under `path`: the one script file, a visit per request (cookies, CSRF),
 * its page found by the router, and every error as a page: a `PageError` with its status, an
 * unexpected one through `onError` as a 500 that says nothing of it.
 */
export function createSite(options: SiteOptions): Site {
  const { path, router } = options
  const csp = contentSecurityPolicy(options.style)
  const limits = formLimits(options.body)
  const { key: given } = options
  const keyOf = typeof given === 'function' ? given : async () => given
  function failure(v: Visit, error: unknown): Response {
    const { home } = router
    if (error instanceof PageError) return v.page(options.message(v, error.title, error.message, error.link), error.status, error.headers)
    if (options.showRefusals && error instanceof AffiliateError && error.status < 500) {
      const text = error.errors?.map((e) => `${e.path}: ${e.msg}`).join('; ') || error.message
      return v.page(options.message(v, 'Not done', text, home), error.status)
    }
    options.onError(error, v.request)
    return v.page(options.message(v, 'Something went wrong', 'The page could not be shown. Try again in a moment.'), 500)
  }

  return {
    path,
    serves: (request) => isUnder(path, request),
    async fetch(request, context) {
      if (pathnameOf(request.url) === `${path}${SCRIPT_PATH}` && (request.method === 'GET' || request.method === 'HEAD'))
        return scriptResponse(request.method)
      let key: Uint8Array
      try {
        key = await keyOf()
      } catch (error) {
        options.onError(error, request)
        return new Response('These pages could not start. Try again in a moment.', {
          status: 500,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        })
      }
      const v = visitOf(
        {
          path,
          csrfCookie: options.csrfCookie,
          csrf: csrfTokens(key),
          secureCookies: options.secureCookies,
          sameSite: options.sameSite,
          csp,
          form: limits,
          notices: options.notices,
        },
        request,
        context,
      )
      try {
        return await router.route(v)
      } catch (error) {
        return failure(v, error)
      }
    },
  }
}
