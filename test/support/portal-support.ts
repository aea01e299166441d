import {
  createAffiliateService,
  memoryKeyStore,
  memoryStorage,
  type AdminOptions,
  type NotifyOptions,
  type PortalOptions,
  type Storage,
} from '../../src/index.js'
import { manualClock } from './helpers.js'

export const PORTAL_SECRET = 'a-test-secret-of-at-least-32-characters!'
export const WS = '44444444-4444-4444-8444-444444444444'
export const OTHER_WS = '55555555-5555-4555-8555-555555555555'
export const ORIGIN = 'http://portal.test'

/** A service with the portal on, capturing every sign-in link it sends. */
export function portalSetup(
  options: { storage?: Storage; portal?: Partial<PortalOptions>; basePath?: string; notify?: NotifyOptions; admin?: AdminOptions } = {},
) {
  const clock = manualClock()
  const sent: { email: string; url: string }[] = []
  const notices: { email: string; subject: string; text: string }[] = []
  const errors: unknown[] = []
  // The portal decides what to send before it answers, and sends it a microtask after: a test
  // waits for the entries themselves (`holds`), never for a turn of the event loop.
  const waiters = new Set<() => void>()
  const record =
    <T>(list: T[]) =>
    (entry: T) => {
      list.push(entry)
      for (const waiter of waiters) waiter()
    }
  /** Resolves once `list` (`sent`, `notices` or `errors`) holds at least `count` entries. */
  const holds = (list: readonly unknown[], count: number): Promise<void> =>
    new Promise((resolve) => {
      const check = () => {
        if (list.length < count) return
        waiters.delete(check)
        resolve()
      }
      waiters.add(check)
      check()
    })
  const service = createAffiliateService({
    storage: options.storage ?? memoryStorage(),
    keyStore: memoryKeyStore([{ key: 'portal-test-key', userId: '66666666-6666-4666-8666-666666666666', workspaceIds: [WS, OTHER_WS] }]),
    clock,
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    rateLimit: false,
    onError: record(errors),
    portal: {
      secret: PORTAL_SECRET,
      publicUrl: ORIGIN,
      sendSignInLink: (email, url) => record(sent)({ email, url }),
      sendNotice: (email, subject, text) => record(notices)({ email, subject, text }),
      ...options.portal,
    },
    ...(options.notify ? { notify: options.notify } : {}),
    ...(options.admin ? { admin: options.admin } : {}),
  })
  return { service, api: service.api, clock, sent, notices, errors, holds }
}

export type PortalSetup = ReturnType<typeof portalSetup>

/** A browser in a test: keeps cookies, sends forms with the CSRF token of the page it read last. */
export function visitor(setup: PortalSetup, clientAddress = '203.0.113.7') {
  const jar = new Map<string, string>()
  let lastPage = ''

  function keep(response: Response) {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      if (/Max-Age=0/.test(cookie)) jar.delete(name)
      else jar.set(name, value)
    }
  }

  async function request(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const init: RequestInit = { method, headers: { ...(cookie ? { cookie } : {}), ...headers } }
    if (form) {
      init.body = new URLSearchParams(form).toString()
      ;(init.headers as Record<string, string>)['content-type'] ??= 'application/x-www-form-urlencoded'
    }
    const url = path.startsWith('http') ? path : `${ORIGIN}${path}`
    const response = await setup.service.fetch(new Request(url, init), { clientAddress })
    keep(response)
    const text = await response.text()
    if (response.headers.get('content-type')?.startsWith('text/html')) lastPage = text
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') }
  }

  /** The CSRF token of the last page read. */
  const csrf = () => /name="csrf" value="([^"]+)"/.exec(lastPage)?.[1] ?? ''

  return {
    jar,
    get: (path: string) => request('GET', path),
    /** Posts a form with the last page's CSRF token (unless `csrf` is given, '' for none). */
    post: (path: string, form: Record<string, string> = {}, options: { csrf?: string | null; headers?: Record<string, string> } = {}) => {
      const token = options.csrf === undefined ? csrf() : options.csrf
      return request('POST', path, token === null ? form : { ...form, csrf: token }, options.headers)
    },
    csrf,
  }
}

/** Signs `email` in through the link the service sent it: answers the visitor, now with a session. */
export async function signIn(setup: PortalSetup, email: string, browser = visitor(setup)) {
  await browser.get('/portal/sign-in')
  const before = setup.sent.length
  const answer = await browser.post('/portal/sign-in', { email })
  if (answer.status !== 200) throw new Error(`sign-in answered ${answer.status}`)
  await setup.holds(setup.sent, before + 1)
  const link = setup.sent.slice(before).find((entry) => entry.email.toLowerCase() === email.toLowerCase())
  if (!link) throw new Error(`no sign-in link was sent to ${email}`)
  const confirm = await browser.get(link.url)
  if (confirm.status !== 200) throw new Error(`the link answered ${confirm.status}`)
  const done = await browser.post('/portal/sign-in/confirm', { token: new URL(link.url).searchParams.get('token')! })
  if (done.status !== 303) throw new Error(`confirming answered ${done.status}`)
  return browser
}
