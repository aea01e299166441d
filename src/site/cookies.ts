/** The cookies a request sent, name -> value (the first of a repeated name). */
export function cookiesOf(request: Request): Map<string, string> {
  const out = new Map<string, string>()
  for (const pair of (request.headers.get('cookie') ?? '').split(';')) {
    const at = pair.indexOf('=')
    if (at < 0) continue
    const name = pair.slice(0, at).trim()
    if (name && !out.has(name)) out.set(name, pair.slice(at + 1).trim())
  }
  return out
}

export interface CookieOptions {
  path: string
  secure: boolean
  /** Seconds; 0 removes the cookie. Omitted: it lasts as long as the browser session. */
  maxAge?: number
  /** `Strict` keeps the cookie off every request another site starts (the admin's session). @default 'Lax' */
  sameSite?: 'Lax' | 'Strict'
}

/** A `Set-Cookie` value: always `HttpOnly`, `SameSite=Lax` unless `Strict` is asked; `Secure` when asked (https). */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  let out = `${name}=${value}; Path=${options.path}; HttpOnly; SameSite=${options.sameSite ?? 'Lax'}`
  if (options.maxAge !== undefined) out += `; Max-Age=${options.maxAge}`
  if (options.secure) out += '; Secure'
  return out
}
