// How the service mounts a site (the portal, the admin) in front of its API: which requests are the
// site's, and a site whose pages load with its first request. Small on purpose: the service imports
// it, and the site layer's pages stay out of a cold start.

/** A set of pages (the portal, the admin) served from the service's `fetch`: `serves` says whether a request is one of them. */
export interface Site {
  readonly path: string
  serves(request: Request): boolean
  fetch(request: Request, context?: unknown): Promise<Response>
}

/** The path of an absolute URL, read without parsing it (every request of the service asks this). */
export function pathnameOf(url: string): string | null {
  // The path part of an absolute URL: after the third '/'.
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return null
  const end = url.slice(start).search(/[?#]/)
  return end < 0 ? url.slice(start) : url.slice(start, start + end)
}

/** Whether `request` is for a page under `path` (`path` itself or below it). */
export function isUnder(path: string, request: Request): boolean {
  const pathname = pathnameOf(request.url)
  return pathname !== null && (pathname === path || pathname.startsWith(`${path}/`))
}

/** `fetch` answering `site`'s pages first, everything else as before. */
export const withSite =
  (site: Site, next: (request: Request, context?: unknown) => Promise<Response>) =>
  (request: Request, context?: unknown): Promise<Response> =>
    site.serves(request) ? site.fetch(request, context) : next(request, context)

/**
 * A site under `path` whose pages and their modules `load` with its first request: they are most
 * of the package's code, and a cold start (serverless, workers) answers without them. A failed
 * load is tried again by the next request.
 */
export function lazySite(path: string, load: () => Promise<Site>): Site {
  let site: Promise<Site> | undefined
  const loaded = () =>
    (site ??= load().catch((error: unknown) => {
      site = undefined
      throw error
    }))
  return {
    path,
    serves: (request) => isUnder(path, request),
    fetch: async (request, context) => (await loaded()).fetch(request, context),
  }
}
