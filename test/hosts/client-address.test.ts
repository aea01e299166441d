import type { AddressInfo } from 'node:net'
import express5 from 'express5'
import { afterEach, describe, expect, it } from 'vitest'
import { expressAdapter } from '../../adapters/express.js'
import { clientBehindProxies, proxyHops } from '../../adapters/forwarded.js'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { KEY_A, USER_A, WS_A } from '../support/helpers.js'

// Two wrong keys per address, refilled slowly: the third from one address is 429.
const service = () =>
  createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([{ key: KEY_A, userId: USER_A, workspaceIds: [WS_A] }]),
    failedKeyLimit: { capacity: 2, refillPerSecond: 0.001 },
  })

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

const wrongKey = (url: string, forwardedFor?: string) =>
  fetch(`${url}/campaigns/list?workspaceId=${WS_A}`, {
    headers: { 'x-auth-service': 'wrong', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  }).then((response) => response.status)

describe('clientBehindProxies', () => {
  it('believes X-Forwarded-For only as far back as the proxies trusted, counted from the right', () => {
    expect(clientBehindProxies('6.6.6.6, 1.1.1.1', '10.0.0.1', proxyHops(false))).toBe('10.0.0.1')
    expect(clientBehindProxies('6.6.6.6, 1.1.1.1', '10.0.0.1', proxyHops(true))).toBe('1.1.1.1')
    expect(clientBehindProxies('6.6.6.6, 1.1.1.1', '10.0.0.1', proxyHops(2))).toBe('6.6.6.6')
    // More hops trusted than the chain has: the farthest address known.
    expect(clientBehindProxies('1.1.1.1', '10.0.0.1', 5)).toBe('1.1.1.1')
    expect(clientBehindProxies(undefined, '10.0.0.1', 1)).toBe('10.0.0.1')
    expect(clientBehindProxies(' , ', '10.0.0.1', 1)).toBe('10.0.0.1')
    expect(proxyHops()).toBe(0)
    expect(() => proxyHops(-1)).toThrow('trustProxy must be')
    expect(() => proxyHops(1.5)).toThrow('trustProxy must be')
  })
})

describe('the Node adapter gives the service the client address', () => {
  it('the socket peer by default: a forged X-Forwarded-For does not earn fresh guesses', async () => {
    const running: RunningServer = await serve(service(), { port: 0 })
    closers.push(() => running.close())
    expect(await wrongKey(running.url, '1.1.1.1')).toBe(401)
    expect(await wrongKey(running.url, '2.2.2.2')).toBe(401)
    expect(await wrongKey(running.url, '3.3.3.3')).toBe(429)
  })

  it('with trustProxy, the address the proxy reports: each client has its own budget', async () => {
    const running = await serve(service(), { port: 0, trustProxy: true })
    closers.push(() => running.close())
    expect(await wrongKey(running.url, '1.1.1.1')).toBe(401)
    expect(await wrongKey(running.url, '1.1.1.1')).toBe(401)
    expect(await wrongKey(running.url, '1.1.1.1')).toBe(429)
    expect(await wrongKey(running.url, '2.2.2.2')).toBe(401)
  })

  it('refuses a bad trustProxy when serving starts', async () => {
    await expect(serve(service(), { port: 0, trustProxy: 1.5 })).rejects.toThrow('trustProxy must be')
  })
})

describe('the Express adapter', () => {
  it("uses req.ip, so the app's 'trust proxy' setting decides", async () => {
    for (const trust of [false, true]) {
      const app = express5()
      app.set('trust proxy', trust)
      app.use(expressAdapter(service()))
      const server = app.listen(0, '127.0.0.1')
      closers.push(() => new Promise((resolve) => server.close(resolve)))
      await new Promise((resolve) => server.once('listening', resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
      const statuses = [await wrongKey(url, '1.1.1.1'), await wrongKey(url, '1.1.1.1'), await wrongKey(url, '2.2.2.2')]
      expect(statuses).toEqual(trust ? [401, 401, 401] : [401, 401, 429])
      server.closeAllConnections()
    }
  })
})
