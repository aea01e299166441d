import type { BodyLimits } from '../http/body.js'
import { cookiesOf, setCookie } from './cookies.js'
import type { CsrfTokens } from './csrf.js'
import { readForm, type Form } from './form-reader.js'
import { PageError } from './page-error.js'

/** One request to a site's pages: what it carries, and the answers it may get. */
export interface Visit {
  readonly request: Request
  readonly url: URL
  /** What the adapter passed with the request (the client address). */
  readonly context: unknown
  readonly cookies: ReadonlyMap<string, string>
  /** This browser's CSRF token: every form carries it. A new one after `renewCsrf`. */
  readonly csrf: string
  /**
   * Gives this browser a new CSRF seed (set on the answer) and the token of it: at sign-in, so a
   * seed planted or seen before the session began is worth nothing within it.
   */
  renewCsrf(): void
  /** The route's parameters (`/join/:campaignId` -> `campaignId`), undecoded. */
  params: Record<string, string>
  /** Who is signed in, named in the page's header; set once the site knows. */
  signedInAs?: string
  /** The form of this POST, after its CSRF token is checked against this browser's seed (403 otherwise); read once. */
  form(): Promise<Form>
  /** Sets a cookie of the site (its path, `HttpOnly`, its `SameSite`, `Secure` as configured) on the answer; `maxAge` 0 removes it. */
  cookie(name: string, value: string, maxAge?: number): void
  /** The fixed text `?notice=` names, when the site knows it (a URL cannot put words on a page). */
  notice(): string | undefined
  /** An HTML page with the headers every page carries (and the cookies set). */
  page(body: string, status?: number, headers?: Record<string, string>): Response
  /** A 303 to `to` (post/redirect/get), with the cookies set. */
  redirect(to: string): Response
}

export interface VisitConfig {
  /** Where the site is (its cookies are scoped to it). */
  path: string
  /** The cookie holding this browser's CSRF seed. */
  csrfCookie: string
  csrf: CsrfTokens
  /** Mark cookies `Secure`; null: when the request is https. */
  secureCookies: boolean | null
  sameSite: 'Lax' | 'Strict'
  /** The Content-Security-Policy of every page. */
  csp: string
  /** The limits of a form's body. */
  form: BodyLimits
  notices: Readonly<Record<string, string>>
}

/** The visit of `request`: its cookies, its CSRF seed (made now, and set, when it had none). */
export function visitOf(config: VisitConfig, request: Request, context: unknown): Visit {
  const url = new URL(request.url)
  const secure = config.secureCookies ?? url.protocol === 'https:'
  const cookies = cookiesOf(request)
  const setCookies: string[] = []
  const cookie = (name: string, value: string, maxAge?: number) =>
    void setCookies.push(
      setCookie(name, value, { path: config.path, secure, sameSite: config.sameSite, ...(maxAge !== undefined ? { maxAge } : {}) }),
    )
  const sent = cookies.get(config.csrfCookie)
  const { seed, fresh } = config.csrf.seedOf(sent)
  if (fresh) cookie(config.csrfCookie, seed)
  let csrf = config.csrf.tokenOf(seed)
  const withCookies = (headers: Headers) => {
    for (const c of setCookies) headers.append('set-cookie', c)
    return headers
  }
  let form: Promise<Form> | undefined
  const checkedForm = async () => {
    const read = await readForm(request, config.form)
    if (!config.csrf.check(sent, read.get('csrf'))) {
      throw new PageError(
        403,
        'Form expired',
        'This form has expired or did not come from this site. Go back, reload the page and send it again.',
      )
    }
    return read
  }
  return {
    request,
    url,
    context,
    cookies,
    get csrf() {
      return csrf
    },
    renewCsrf() {
      const renewed = config.csrf.seedOf(undefined).seed
      // The seed set before on this answer (a browser that had none) is replaced, not sent twice.
      const at = setCookies.findIndex((c) => c.startsWith(`${config.csrfCookie}=`))
      if (at >= 0) setCookies.splice(at, 1)
      cookie(config.csrfCookie, renewed)
      csrf = config.csrf.tokenOf(renewed)
    },
    params: {},
    form: () => (form ??= checkedForm()),
    cookie,
    notice: () => {
      const name = url.searchParams.get('notice') ?? ''
      return Object.hasOwn(config.notices, name) ? config.notices[name] : undefined
    },
    page(body, status = 200, headers = {}) {
      const out = new Headers({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': config.csp,
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        ...headers,
      })
      return new Response(request.method === 'HEAD' ? null : body, { status, headers: withCookies(out) })
    },
    redirect(to) {
      return new Response(null, {
        status: 303,
        headers: withCookies(new Headers({ location: to, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })),
      })
    },
  }
}
