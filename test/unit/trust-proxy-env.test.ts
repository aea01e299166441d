import { afterEach, describe, expect, it, vi } from 'vitest'
import { trustProxyFromEnv } from '../../bin/env.js'

// AFFILIATE_TRUST_PROXY for npm start: the number of proxies in front, read by serve() as trustProxy.
describe('AFFILIATE_TRUST_PROXY', () => {
  afterEach(() => vi.restoreAllMocks())

  it('is 0 unset, off or 0; 1 for true; the number of hops given', () => {
    expect(trustProxyFromEnv({})).toBe(0)
    expect(trustProxyFromEnv({ AFFILIATE_TRUST_PROXY: '' })).toBe(0)
    expect(trustProxyFromEnv({ AFFILIATE_TRUST_PROXY: 'off' })).toBe(0)
    expect(trustProxyFromEnv({ AFFILIATE_TRUST_PROXY: '0' })).toBe(0)
    expect(trustProxyFromEnv({ AFFILIATE_TRUST_PROXY: 'true' })).toBe(1)
    expect(trustProxyFromEnv({ AFFILIATE_TRUST_PROXY: '2' })).toBe(2)
  })

  it.each(['-1', '1.5', 'lots', '11'])('refuses %s, saying what it takes', (value) => {
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => {
      throw new Error('exited')
    })
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    expect(() => trustProxyFromEnv({ AFFILIATE_TRUST_PROXY: value })).toThrow('exited')
    expect(exit).toHaveBeenCalledWith(1)
    expect(error).toHaveBeenCalledWith(
      `affiliate-service: AFFILIATE_TRUST_PROXY must be the number of proxies in front (0 to 10), got ${value}`,
    )
  })
})
