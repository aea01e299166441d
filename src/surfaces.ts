// What the service answers, and where: one list, so that every adapter that must pick the
// requests it hands to `fetch` (Express, beside the app's own routes) serves all of it.

/** One part of what the service answers, and the path it answers at and below. */
export interface ServiceSurface {
  /**
   * `api`: the JSON API (the payment providers' webhook receivers included); `tracking`: the
   * public redirect (`{basePath}/r/<code>`) and beacon (`{basePath}/track`); `portal` and `admin`:
   * their HTML pages, when they are on.
   */
  name: 'api' | 'tracking' | 'portal' | 'admin'
  /** Where it is, e.g. `/api/v1`, `/api/v1/r`, `/portal`; `''` is the root (every path). */
  path: string
}

/** The surfaces of a service with these paths (null: that site is off), in the order they are listed in the docs. */
export function surfacesOf(basePath: string, portalPath: string | null, adminPath: string | null): readonly ServiceSurface[] {
  const list: ServiceSurface[] = [
    { name: 'api', path: basePath },
    { name: 'tracking', path: `${basePath}/r` },
    { name: 'tracking', path: `${basePath}/track` },
  ]
  if (portalPath !== null) list.push({ name: 'portal', path: portalPath })
  if (adminPath !== null) list.push({ name: 'admin', path: adminPath })
  return Object.freeze(list.map((surface) => Object.freeze(surface)))
}

/**
 * The surface a request path (with or without its query) is for, or undefined: a path is a
 * surface's when it is the surface's path or lies below it (`/portal`, `/portal/`, `/portal?x`,
 * `/portal/sign-in`; never `/portalx`). The most specific surface wins (`tracking` before `api`).
 */
export function surfaceOf(surfaces: readonly ServiceSurface[], path: string): ServiceSurface | undefined {
  let found: ServiceSurface | undefined
  for (const surface of surfaces) {
    const at = surface.path
    const next = path[at.length]
    const under = path.startsWith(at) && (next === undefined || next === '/' || next === '?' || at === '')
    if (under && (found === undefined || at.length > found.path.length)) found = surface
  }
  return found
}
