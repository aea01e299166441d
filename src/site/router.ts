import { Router, type IRequest } from 'itty-router'
import { PageError } from './page-error.js'
import type { Link } from './shell.js'
import type { Visit } from './visit.js'

/** One page or form: its answer. */
export type Handler<C> = (c: C) => Promise<Response> | Response

/**
 * A site's pages: `'METHOD /path'` -> handler, the path under the site's own (`/sign-in`,
 * `/join/:campaignId`; `/` is the site's root). A `GET` page also answers `HEAD`.
 */
export type Routes<C> = Readonly<Record<string, Handler<C>>>

/** What a request passes before its page: the page's context (who is signed in, ...), or the answer to give instead. */
export type Guard<C> = (v: Visit) => Promise<C | Response> | C | Response

/** The name of the 405 page's `Allow`: `GET` answers `HEAD` too. */
const allowOf = (methods: readonly string[]) => methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).join(', ')

/**
 * The pages of a site on itty-router, found in the order they are added: each table's paths, each
 * path's methods then a 405 naming them, and at the end a 404 for every other path. A guard runs
 * before its pages, their 405s and (with `otherwise`) the 404: nothing of a guarded page, not even
 * whether it exists, is told to a request it turns away.
 */
export function siteRouter(base: string, home: string) {
  const router = Router<IRequest, [Visit]>({ base })
  let rest: ((v: Visit) => Promise<Response>) | undefined

  const link: Link = { href: base, label: home }
  const notFound = () => new PageError(404, 'Page not found', 'There is no page at this address.', link)

  function add<C>(routes: Routes<C>, through: (v: Visit, then: (c: C) => Promise<Response> | Response) => Promise<Response>): void {
    const paths = new Map<string, [string, Handler<C>][]>()
    for (const [name, handler] of Object.entries(routes)) {
      const [method = '', path = ''] = name.split(' ')
      paths.set(path, [...(paths.get(path) ?? []), [method, handler]])
    }
    for (const [path, methods] of paths) {
      const at = path === '/' ? '' : path
      for (const [method, handler] of methods) {
        const run = (request: IRequest, v: Visit) => ((v.params = request.params), through(v, handler))
        router[method.toLowerCase()]!(at, run)
        if (method === 'GET') router.head(at, run)
      }
      const allow = allowOf(methods.map(([method]) => method))
      router.all(at, (_: IRequest, v: Visit) =>
        through(v, () => {
          throw new PageError(405, 'Not allowed', `This page answers ${allow} only.`, undefined, { allow })
        }),
      )
    }
  }

  const guarded =
    <C>(guard: Guard<C>) =>
    async (v: Visit, then: (c: C) => Promise<Response> | Response): Promise<Response> => {
      const entered = await guard(v)
      return entered instanceof Response ? entered : then(entered)
    }

  return {
    /** The link to the site's root its error pages offer ("Go to the overview"). */
    home: link,
    /** Pages open to every request (signing in, joining). */
    open(routes: Routes<Visit>): void {
      add(routes, async (v, then) => then(v))
    },
    /** Pages behind `guard`, which makes their context. */
    guarded<C>(guard: Guard<C>, routes: Routes<C>): void {
      add(routes, guarded(guard))
    },
    /** The 404 of every other path, behind `guard` (without it, open). */
    otherwise<C>(guard: Guard<C>): void {
      rest = (v) =>
        guarded(guard)(v, () => {
          throw notFound()
        })
    },
    /** The answer of the page `v` asks for. */
    async route(v: Visit): Promise<Response> {
      const found: Response | undefined = await router.fetch(v.request, v)
      if (found) return found
      if (rest) return rest(v)
      throw notFound()
    },
  }
}

export type SiteRouter = ReturnType<typeof siteRouter>
