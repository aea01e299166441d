// `npm start` as an operator runs it, for the tests: a real process, its output and exit, a port
// to name before it starts, a browser's cookies and CSRF token.
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Readable } from 'node:stream'

// What the shell running the tests may have set is not what a test means: each says what it sets.
export const unset = {
  DATABASE_URL: '',
  AFFILIATE_SCHEMA: '',
  AFFILIATE_DB: '',
  REDIS_URL: '',
  HOST: '',
  AFFILIATE_RATE_LIMIT: '',
  AFFILIATE_RATE_LIMIT_CAPACITY: '',
  AFFILIATE_RATE_LIMIT_REFILL: '',
  AFFILIATE_RATE_LIMIT_IN_FLIGHT: '',
  AFFILIATE_PORTAL_SECRET: '',
  AFFILIATE_PUBLIC_URL: '',
  SMTP_URL: '',
  AFFILIATE_MAIL_FROM: '',
  AFFILIATE_NOTIFY_OWNERS: '',
  AFFILIATE_PROGRAM_NAME: '',
  AFFILIATE_ADMIN_TOKEN: '',
  AFFILIATE_WEBHOOKS_ALLOW_HTTP: '',
  AFFILIATE_WEBHOOKS_ALLOW_PRIVATE: '',
}

export const children: ChildProcessByStdio<null, Readable, Readable>[] = []

/** Runs bin/start.ts (what `npm start` runs): its URL once it listens, or its exit code and output. */
export function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'bin', 'start.ts')], {
    env: { ...process.env, ...unset, PORT: '0', AFFILIATE_DB: ':memory:', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let output = ''
  child.stdout.on('data', (data: Buffer) => (output += data.toString()))
  child.stderr.on('data', (data: Buffer) => (output += data.toString()))
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+\/api\/v1)/.exec(output)
      if (found) resolve(found[1]!)
    })
    void exit.then((code) => reject(new Error(`start exited ${code} before listening:\n${output}`)))
  })
  url.catch(() => undefined)
  return { child, url, exit, output: () => output }
}

/** A port free a moment ago, so AFFILIATE_PUBLIC_URL can name it before the server starts. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** Quoted-printable, as nodemailer wraps long lines: soft breaks removed, `=XX` decoded. */
export const unquote = (text: string) =>
  text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))

/** Cookies and the last page's CSRF token, as a browser keeps them. */
export function browser() {
  const jar = new Map<string, string>()
  let page = ''
  const go = async (url: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') }
    let body: string | undefined
    if (form) {
      body = new URLSearchParams({ ...form, csrf: /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '' }).toString()
      headers['content-type'] = 'application/x-www-form-urlencoded'
    }
    const response = await fetch(url, { method: form ? 'POST' : 'GET', headers, body, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const at = pair.indexOf('=')
      jar.set(pair.slice(0, at), pair.slice(at + 1))
    }
    const text = await response.text()
    if (response.headers.get('content-type')?.startsWith('text/html')) page = text
    return { status: response.status, text, location: response.headers.get('location') }
  }
  return { go }
}
