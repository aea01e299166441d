import type { AffiliateService } from '../../src/index.js'

/**
 * A browser on the admin in a test: keeps its cookies and sends forms with the CSRF token of the
 * page it read last; `headers` stand for the host's sign-in (what `admin.authorize` reads).
 */
export function adminVisitor(service: Pick<AffiliateService, 'fetch'>, headers: Record<string, string> = {}, origin = 'http://x') {
  const cookies = new Map<string, string>()
  let csrf = ''
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
  }
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  async function get(path: string) {
    const response = await service.fetch(new Request(`${origin}${path}`, { headers: { ...headers, cookie: cookieHeader() } }))
    remember(response)
    const text = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
    return { status: response.status, text, location: response.headers.get('location') }
  }
  async function post(path: string, fields: Record<string, string | string[]>) {
    const body = new URLSearchParams({ csrf })
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
    const response = await service.fetch(
      new Request(`${origin}${path}`, {
        method: 'POST',
        body,
        headers: { ...headers, cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    remember(response)
    const text = await response.text()
    csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf
    return { status: response.status, text, location: response.headers.get('location') }
  }
  return { get, post }
}

/** The text of a page without its tags and with its entities read, spaces collapsed: what a reader sees. */
export const visibleText = (page: string): string =>
  page
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    // Inline elements run on with their text; others stand apart.
    .replace(/<\/?(a|code|span|strong|time|b|em)\b[^>]*>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
