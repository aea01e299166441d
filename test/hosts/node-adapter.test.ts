import { createServer, IncomingMessage, request as httpRequest, ServerResponse } from 'node:http'
import { connect, Socket, type AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { serve, toNodeListener, type RunningServer } from '../../adapters/node.js'
import { answer } from '../../adapters/node/answer.js'
import { knownBody } from '../../adapters/node/response.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { KEY_A, USER_A, WS_A, campaignInput, setup } from '../support/helpers.js'

type Fetch = (request: Request) => Promise<Response>

const running: RunningServer[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()))
})

async function start(service: { fetch: Fetch }) {
  const server = await serve(service, { port: 0 })
  running.push(server)
  const origin = new URL(server.url).origin
  return { server, origin, port: Number(new URL(server.url).port) }
}

/** Resolves once the server has seen a connection close (its response's 'close' has been told too). */
function connectionClosed({ server }: Awaited<ReturnType<typeof start>>): Promise<void> {
  return new Promise((resolve) => {
    // The socket's 'close' listeners run in one emit, the response's own among them: a microtask after, all have run.
    server.server.on('connection', (socket) => socket.on('close', () => queueMicrotask(resolve)))
  })
}

/** A promise with its resolve handle, to hold a handler until the test lets it go. */
function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/** Sends raw bytes and answers everything the server sends back until it closes the connection. */
function rawExchange(port: number, send: (socket: ReturnType<typeof connect>) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => (received += chunk.toString('latin1')))
    socket.on('error', (error) => (received ? resolve(received) : reject(error)))
    socket.on('close', () => resolve(received))
    socket.on('connect', () => send(socket))
  })
}

/**
 * A POST that declares 100 bytes and sends 10, then waits, never closing: `head` resolves with the
 * answer's status line and headers, `closed` with everything received once the server closes.
 */
function slowUpload(port: number) {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  let sawHead!: (head: string) => void
  const head = new Promise<string>((resolve) => (sawHead = resolve))
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)))
  socket.on('error', () => undefined)
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1')
    const end = received.indexOf('\r\n\r\n')
    if (end >= 0) sawHead(received.slice(0, end + 2))
  })
  socket.on('connect', () =>
    socket.write(
      'POST /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nx-auth-service: test-key-a\r\n' +
        'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"campaign',
    ),
  )
  return { head, closed }
}

/** A server of our own with `listener`, on a free port. */
async function listenWith(listener: ReturnType<typeof toNodeListener>) {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return { port: (server.address() as AddressInfo).port, close }
}

describe('node adapter: requests', () => {
  it('serves the service end to end: health, create, read, validation error', async () => {
    const { service } = setup()
    const { origin, server } = await start(service)
    expect(server.url).toBe(`${origin}/api/v1`)

    const health = await fetch(`${origin}/api/v1/health`)
    expect(health.status).toBe(200)
    expect(health.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const healthText = await health.text()
    expect(health.headers.get('content-length')).toBe(String(Buffer.byteLength(healthText)))
    expect(JSON.parse(healthText)).toMatchObject({ status: 'ok', service: 'affiliate-service' })

    const headers = { 'x-auth-service': KEY_A, 'content-type': 'application/json' }
    const created = await fetch(`${origin}/api/v1/campaigns`, { method: 'POST', headers, body: JSON.stringify(campaignInput()) })
    expect(created.status).toBe(201)
    const { data: campaign } = (await created.json()) as { data: { id: string; campaignName: string } }

    const read = await fetch(`${origin}/api/v1/campaigns?campaignId=${campaign.id}`, { headers })
    expect(read.status).toBe(200)
    expect(((await read.json()) as { data: unknown }).data).toEqual(campaign)

    const invalid = await fetch(`${origin}/api/v1/affiliates`, { method: 'POST', headers, body: JSON.stringify({ email: 'nope' }) })
    expect(invalid.status).toBe(400)
    const body = (await invalid.json()) as { message: string; errors: { path: string }[] }
    expect(body.message).toBe('Validation error')
    expect(body.errors.map((e) => e.path).sort()).toEqual(['campaignId', 'email'])
  })

  it('delivers rate-limited answers to the end, so each frees its in-flight slot', async () => {
    // Three tokens on a still clock and two slots: three answers in a row pass only if each slot is
    // released, which happens when its streamed body has been written out.
    const { service } = setup({ rateLimit: { capacity: 3, refillPerSecond: 1, maxInFlight: 2 } })
    const { origin } = await start(service)
    const get = () => fetch(`${origin}/api/v1/campaigns/list`, { headers: { 'x-auth-service': KEY_A } })
    for (const remaining of ['2', '1', '0']) {
      const answer = await get()
      expect(answer.status).toBe(200)
      expect(answer.headers.get('ratelimit-remaining')).toBe(remaining)
      expect(((await answer.json()) as { status: number }).status).toBe(200)
    }
    const refused = await get()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toEqual({ status: 429, code: 'rate_limited', message: 'Rate limit exceeded. Please retry later.' })
  })

  it('hands the service a Request that behaves as one, built lazily', async () => {
    const seen = deferred<Record<string, unknown>>()
    const { origin } = await start({
      async fetch(request) {
        const clone = request.clone()
        seen.resolve({
          isRequest: request instanceof Request,
          method: request.method,
          url: request.url,
          header: request.headers.get('x-custom'),
          text: await request.text(),
          cloneText: await clone.text(),
          bodyUsed: request.bodyUsed,
          aborted: request.signal.aborted,
        })
        return new Response('ok')
      },
    })
    await fetch(`${origin}/api/v1/echo?x=1`, { method: 'PUT', headers: { 'x-custom': 'yes' }, body: 'hello' })
    expect(await seen.promise).toEqual({
      isRequest: true,
      method: 'PUT',
      url: `${origin}/api/v1/echo?x=1`,
      header: 'yes',
      text: 'hello',
      cloneText: 'hello',
      bodyUsed: true,
      aborted: false,
    })
  })

  it('gives GET requests no body and reads a streamed upload chunk by chunk', async () => {
    const bodies: (string | null)[] = []
    const { origin } = await start({
      async fetch(request) {
        bodies.push(request.body ? await new Response(request.body).text() : null)
        return new Response(null, { status: 204 })
      },
    })
    await fetch(`${origin}/a`)
    const parts = ['{"a":', '1,', '"b":2}']
    const upload = new ReadableStream<Uint8Array>({
      pull(controller) {
        const part = parts.shift()
        if (part === undefined) controller.close()
        else controller.enqueue(new TextEncoder().encode(part))
      },
    })
    await fetch(`${origin}/b`, { method: 'POST', body: upload, duplex: 'half' } as RequestInit)
    expect(bodies).toEqual([null, '{"a":1,"b":2}'])
  })

  it('refuses a declared Content-Length over the limit without reading the body', async () => {
    const { service } = setup()
    const { port } = await start(service)
    // Only the head is sent: an adapter that waited for the body would never answer.
    const received = await rawExchange(port, (socket) =>
      socket.write(
        'POST /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nx-auth-service: test-key-a\r\n' +
          'content-type: application/json\r\ncontent-length: 50000000\r\n\r\n',
      ),
    )
    expect(received).toMatch(/^HTTP\/1\.1 413 /)
    expect(received.toLowerCase()).toContain('connection: close')
    expect(received).toContain('"status":413')
  })

  it('answers Expect: 100-continue with the final status when the service refuses before reading', async () => {
    const { service } = setup()
    const { port } = await start(service)
    const received = await rawExchange(port, (socket) =>
      socket.write(
        'POST /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nx-auth-service: test-key-a\r\nexpect: 100-continue\r\n' +
          'content-type: application/json\r\ncontent-length: 50000000\r\n\r\n',
      ),
    )
    expect(received).toMatch(/^HTTP\/1\.1 413 /)
    expect(received).not.toContain('100 Continue')
  })

  it('sends 100 Continue when the service reads the body, then answers', async () => {
    const { service } = setup()
    const { port } = await start(service)
    const body = JSON.stringify(campaignInput())
    const received = await rawExchange(port, (socket) => {
      socket.write(
        'POST /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nx-auth-service: test-key-a\r\nexpect: 100-continue\r\n' +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
      )
      socket.once('data', (first) => {
        expect(first.toString()).toMatch(/^HTTP\/1\.1 100 Continue\r\n/)
        socket.write(body)
      })
    })
    expect(received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /)
    expect(received).toContain('"campaignName":"Spring launch"')
  })

  it('stops reading an unsized upload once it passes the limit, and closes that connection', async () => {
    const { service } = setup()
    const { port } = await start(service)
    const chunk = Buffer.alloc(16 * 1024, 'a')
    // 160 KiB in chunked encoding with no end: the 100 KiB cap must answer before the upload ends.
    const received = await rawExchange(port, (socket) => {
      socket.write(
        'POST /api/v1/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nx-auth-service: test-key-a\r\n' +
          'content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
      )
      for (let i = 0; i < 10; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`)
    })
    expect(received).toMatch(/^HTTP\/1\.1 413 /)
    expect(received.toLowerCase()).toContain('connection: close')
  })

  it('answers 408 with Connection: close and closes the socket, the rest of the body unread', async () => {
    const service = createAffiliateService({
      storage: memoryStorage(),
      keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
      rateLimit: false,
      bodyTimeoutMs: 50,
    })
    const { port } = await start(service)
    const exchange = slowUpload(port)
    const head = await exchange.head
    expect(head).toMatch(/^HTTP\/1\.1 408 /)
    expect(head.toLowerCase()).toContain('\r\nconnection: close\r\n')
    // The server closes the connection (the client never sends the rest, nor closes).
    expect(await exchange.closed).toContain('"message":"Request body timeout"')
  })

  it('closes the connection after a 408 from any fetch handler, even one that did not ask to', async () => {
    const { port, close } = await listenWith(
      toNodeListener({
        fetch: async () => new Response('{"status":408}', { status: 408, headers: { 'content-type': 'application/json' } }),
      }),
    )
    try {
      const exchange = slowUpload(port)
      const head = await exchange.head
      expect(head).toMatch(/^HTTP\/1\.1 408 /)
      expect(head.toLowerCase()).toContain('\r\nconnection: close\r\n')
      await exchange.closed
    } finally {
      await close()
    }
  })

  it('keeps the connection open after a small unread body', async () => {
    const { service } = setup()
    const { origin } = await start(service)
    const answer = await fetch(`${origin}/api/v1/campaigns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(campaignInput()),
    })
    expect(answer.status).toBe(401)
    expect(answer.headers.get('connection')).not.toBe('close')
  })

  it('aborts request.signal when the client disconnects', async () => {
    const aborted = deferred<unknown>()
    const arrived = deferred()
    const { port } = await start({
      fetch(request) {
        request.signal.addEventListener('abort', () => aborted.resolve(request.signal.reason))
        arrived.resolve()
        return new Promise<Response>(() => undefined)
      },
    })
    const client = httpRequest({ port, host: '127.0.0.1', path: '/slow' })
    client.on('error', () => undefined)
    client.end()
    await arrived.promise
    client.destroy()
    expect(await aborted.promise).toBeDefined()
  })

  it('aborts a signal first read after the client has gone', async () => {
    const called = deferred()
    const result = deferred<boolean>()
    let gone!: Promise<void> // set once the server is up, before any client comes
    const started = await start({
      async fetch(request) {
        called.resolve()
        await gone
        result.resolve(request.signal.aborted)
        return new Response('late')
      },
    })
    gone = connectionClosed(started)
    const client = httpRequest({ port: started.port, host: '127.0.0.1', path: '/' })
    client.on('error', () => undefined)
    client.end()
    // The client leaves once the service is answering it.
    await called.promise
    client.destroy()
    expect(await result.promise).toBe(true)
  })

  it('refuses to read a declared body once the client has gone, as an aborted signal would', async () => {
    const called = deferred()
    const result = deferred<string>()
    let gone!: Promise<void> // set once the server is up, before any client comes
    const started = await start({
      async fetch(request) {
        called.resolve()
        await gone
        result.resolve(
          await request.arrayBuffer().then(
            () => 'read',
            (error: Error) => error.message,
          ),
        )
        return new Response('late')
      },
    })
    gone = connectionClosed(started)
    const client = httpRequest({
      port: started.port,
      host: '127.0.0.1',
      path: '/',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': 2 },
    })
    client.on('error', () => undefined)
    client.end('{}')
    await called.promise
    client.destroy()
    expect(await result.promise).toBe('The client closed the request before its body ended')
  })

  it('answers 500 when the fetch handler throws, and logs the error', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    try {
      const { origin } = await start({
        fetch() {
          throw new Error('boom')
        },
      })
      const answer = await fetch(`${origin}/x`)
      expect(answer.status).toBe(500)
      expect(await answer.json()).toEqual({ status: 500, code: 'internal_error', message: 'Internal server error' })
      // A bare fetch handler has no onError: the default one logs it, naming the adapter and the request.
      expect(logged).toHaveBeenCalledWith('affiliate-service: unexpected error (adapter, GET /x)', new Error('boom'))
    } finally {
      logged.mockRestore()
    }
  })

  it('copes with a Host header that is not a host', async () => {
    const seen = deferred<string>()
    const { port } = await start({
      async fetch(request) {
        seen.resolve(request.url)
        return new Response('ok')
      },
    })
    await rawExchange(port, (socket) => socket.end('GET /api/v1/health?a=b HTTP/1.1\r\nHost: evil/x@y\r\nConnection: close\r\n\r\n'))
    expect(await seen.promise).toBe('http://localhost/api/v1/health?a=b')
  })

  it('takes the origin from the first Host header, whatever its case', async () => {
    const seen: string[] = []
    const { port } = await start({
      async fetch(request) {
        seen.push(`${request.url} ${request.headers.get('host')}`)
        return new Response('ok')
      },
    })
    await rawExchange(port, (socket) => socket.end('GET /a HTTP/1.1\r\nhOsT: one.example:8080\r\nConnection: close\r\n\r\n'))
    expect(seen).toEqual(['http://one.example:8080/a one.example:8080'])
  })
})

describe('node adapter: responses', () => {
  it('writes every header, each Set-Cookie apart, and the status', async () => {
    const { origin } = await start({
      async fetch() {
        const headers = new Headers({ 'x-one': '1', 'content-type': 'text/plain' })
        headers.append('set-cookie', 'a=1; Path=/')
        headers.append('set-cookie', 'b=2; Path=/')
        return new Response('created', { status: 201, headers })
      },
    })
    const answer = await fetch(`${origin}/`)
    expect(answer.status).toBe(201)
    expect(answer.headers.get('x-one')).toBe('1')
    expect(answer.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/'])
    expect(await answer.text()).toBe('created')
  })

  it('writes the answers made in one turn of the event loop together at its end; one failing write holds back none', async () => {
    const written: string[] = []
    const errors: unknown[] = []
    const service = {
      fetch: async (request: Request) => new Response(new URL(request.url).pathname),
      onError: (error: unknown) => void errors.push(error),
    }
    const exchange = (path: string, fail = false) => {
      const req = new IncomingMessage(new Socket())
      Object.assign(req, { method: 'GET', url: path, headers: { host: 'example.com' }, complete: true })
      const res = new ServerResponse(req)
      const writeHead = res.writeHead.bind(res)
      res.writeHead = ((...args: Parameters<typeof writeHead>) => {
        if (fail) throw new Error(`cannot write ${path}`)
        written.push(path)
        return writeHead(...args)
      }) as typeof res.writeHead
      return { res, done: answer(service, req, res) }
    }
    const [a, b, c] = [exchange('/a'), exchange('/b', true), exchange('/c')]
    // Every answer is made (each fetch resolves at once), and still none is written within the turn.
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => process.nextTick(resolve))
    expect(written).toEqual([])
    await new Promise<void>((resolve) => setImmediate(resolve))
    expect(written).toEqual(['/a', '/c'])
    await Promise.all([a.done, b.done, c.done])
    // The failed one is reported and cut off; the others went out whole.
    expect(errors).toEqual([new Error('cannot write /b')])
    expect(b.res.destroyed).toBe(true)
    expect([a.res.writableEnded, c.res.writableEnded]).toEqual([true, true])
  })

  it('answers pipelined requests in their order, a slow first one holding back the faster ones behind it', async () => {
    // The first is answered only once the last has been: the faster ones are ready before it.
    const last = deferred()
    const { port } = await start({
      async fetch(request) {
        const path = new URL(request.url).pathname
        if (path === '/slow') await last.promise
        if (path === '/c') queueMicrotask(last.resolve)
        return new Response(`answer to ${path}`)
      },
    })
    const received = await rawExchange(port, (socket) =>
      socket.write(
        ['/slow', '/b', '/c']
          .map((path, i) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${i === 2 ? 'Connection: close\r\n' : ''}\r\n`)
          .join(''),
      ),
    )
    // Where each answer's body stands (Node 24 streams every body, chunked: its text is still whole).
    const at = ['/slow', '/b', '/c'].map((path) => received.indexOf(`answer to ${path}`))
    expect(received.split('HTTP/1.1 200 OK')).toHaveLength(4)
    expect(at.every((index) => index > 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
  })

  it('streams a response body: the client reads a chunk before the next is made', async () => {
    const next = deferred()
    let pulls = 0
    const { origin } = await start({
      async fetch() {
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            pulls++
            if (pulls === 1) controller.enqueue(new TextEncoder().encode('first;'))
            else if (pulls === 2) {
              await next.promise
              controller.enqueue(new TextEncoder().encode('second'))
            } else controller.close()
          },
        })
        return new Response(body, { headers: { 'content-type': 'text/plain' } })
      },
    })
    const answer = await fetch(`${origin}/`)
    const reader = answer.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first;')
    next.resolve()
    let rest = ''
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      rest += new TextDecoder().decode(value)
    }
    expect(rest).toBe('second')
  })

  it('cancels a streamed body when the client disconnects', async () => {
    const cancelled = deferred<unknown>()
    const { port } = await start({
      async fetch() {
        const body = new ReadableStream<Uint8Array>({
          pull: (controller) => controller.enqueue(new Uint8Array(64 * 1024)),
          cancel: (reason) => cancelled.resolve(reason),
        })
        return new Response(body)
      },
    })
    const response = await new Promise<IncomingMessage>((resolve) => {
      const client = httpRequest({ port, host: '127.0.0.1', path: '/' }, resolve)
      client.on('error', () => undefined)
      client.end()
    })
    response.once('data', () => response.destroy())
    expect(await cancelled.promise).toBeInstanceOf(Error)
  })

  // Node 20 and 22's undici keep a Response's source under a `state` symbol; Node 24's keeps it in
  // a private field, where nothing is recognised and every body takes the streaming path.
  const undiciShowsState = Object.getOwnPropertySymbols(new Response('')).some((symbol) => symbol.description === 'state')

  it.runIf(!undiciShowsState)('recognises no body where undici hides its state (Node 24): every body is streamed', () => {
    expect(knownBody(new Response('{"a":1}'))).toBeUndefined()
  })

  it.runIf(undiciShowsState)('recognises a body held in memory, and not one already read', async () => {
    expect(knownBody(new Response('{"a":1}'))).toBe('{"a":1}')
    expect(knownBody(new Response(new Uint8Array([1, 2])))).toEqual(new Uint8Array([1, 2]))
    const used = new Response('x')
    await used.text()
    expect(knownBody(used)).toBeUndefined()
    expect(knownBody(new Response(new ReadableStream()))).toBeUndefined()
  })
})

describe('node adapter: serve()', () => {
  it('lets a request in flight finish on close(), then stops accepting', async () => {
    const release = deferred()
    const arrived = deferred()
    const server = await serve(
      {
        async fetch() {
          arrived.resolve()
          await release.promise
          return new Response('done')
        },
      },
      { port: 0 },
    )
    const pending = fetch(server.url)
    await arrived.promise
    let closed = false
    const closing = server.close().then(() => (closed = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(closed).toBe(false)
    release.resolve()
    const answer = await pending
    expect(await answer.text()).toBe('done')
    expect(answer.headers.get('connection')).toBe('close')
    await closing
    expect(closed).toBe(true)
    await expect(fetch(server.url)).rejects.toThrow()
  })

  it('toNodeListener mounts on a server of your own', async () => {
    const { service } = setup()
    const server = createServer(toNodeListener(service))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const answer = await fetch(`http://127.0.0.1:${port}/api/v1/campaigns/list`, { headers: { 'x-auth-service': KEY_A } })
      expect(answer.status).toBe(200)
      expect(((await answer.json()) as { data: { items: unknown[] } }).data.items).toEqual([])
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
