import { describe, expect, it } from 'vitest'
import { checkAddress, checkWebhookUrl, forbiddenAddressReason, ipLiteral, WebhookAddressError } from '../../src/webhooks/address.js'

// Pure checks: nothing here opens a socket or resolves a name.

const refused: Array<[string, RegExp]> = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['10.0.0.1', /private/],
  ['10.255.255.255', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['169.254.169.254', /metadata/],
  ['169.254.1.1', /link-local/],
  ['100.64.0.1', /carrier-grade NAT/],
  ['100.127.255.255', /carrier-grade NAT/],
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['255.255.255.255', /broadcast/],
  ['240.0.0.1', /reserved/],
  ['192.0.2.1', /reserved/],
  ['::1', /loopback/],
  ['::', /unspecified/],
  ['fc00::1', /unique local/],
  ['fd12:3456::1', /unique local/],
  ['fe80::1', /link-local/],
  ['febf::1', /link-local/],
  ['ff02::1', /multicast/],
  ['fec0::1', /site-local/],
  ['::ffff:127.0.0.1', /IPv4-mapped 127\.0\.0\.1\) is a loopback/],
  ['::ffff:7f00:1', /IPv4-mapped 127\.0\.0\.1\) is a loopback/],
  ['::ffff:10.0.0.1', /IPv4-mapped 10\.0\.0\.1\) is a private/],
  ['::ffff:169.254.169.254', /metadata/],
  ['64:ff9b::7f00:1', /NAT64/],
  ['2002:7f00:1::1', /6to4/],
  ['2001:0:4136:e378::1', /Teredo/],
  ['::7f00:1', /not a global unicast/],
  ['2001:db8::1', /reserved/],
  ['fe80::1%eth0', /link-local|zone/],
  ['[::1]', /loopback/],
  ['localhost', /not an IP address/],
]

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '172.15.255.255',
  '100.128.0.1',
  '100.63.255.255',
  '169.253.255.255',
  '11.0.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8',
]

describe('forbiddenAddressReason', () => {
  it.each(refused)('refuses %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toMatch(reason)
  })

  it.each(allowed)('allows the public address %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeUndefined()
  })

  it('names the address it refuses', () => {
    expect(forbiddenAddressReason('10.0.0.1')).toBe('10.0.0.1 is a private address')
    expect(forbiddenAddressReason('169.254.169.254')).toBe('169.254.169.254 is the cloud metadata address (link-local)')
  })
})

describe('checkAddress', () => {
  it('throws a WebhookAddressError that names the test option', () => {
    expect(() => checkAddress('127.0.0.1')).toThrow(WebhookAddressError)
    expect(() => checkAddress('127.0.0.1')).toThrow(
      'refused: 127.0.0.1 is a loopback address (allowed only with webhooks: { allowPrivateAddresses: true })',
    )
    expect(() => checkAddress('8.8.8.8')).not.toThrow()
  })

  it('lets every IP address through with allowPrivateAddresses, but never a non-address', () => {
    for (const [address] of refused.filter(([a]) => a !== 'localhost' && !a.startsWith('['))) {
      expect(() => checkAddress(address, { allowPrivateAddresses: true }), address).not.toThrow()
    }
    expect(() => checkAddress('localhost', { allowPrivateAddresses: true })).toThrow(/not an IP address/)
  })
})

describe('ipLiteral', () => {
  it('answers the bare address of IP hosts and nothing for names', () => {
    expect(ipLiteral('127.0.0.1')).toBe('127.0.0.1')
    expect(ipLiteral('[::1]')).toBe('::1')
    expect(ipLiteral('[::ffff:7f00:1]')).toBe('::ffff:7f00:1')
    expect(ipLiteral('example.com')).toBeUndefined()
    expect(ipLiteral('127.0.0.1.nip.io')).toBeUndefined()
    expect(ipLiteral('localhost')).toBeUndefined()
  })
})

describe('checkWebhookUrl', () => {
  it('accepts https URLs with names or public addresses', () => {
    expect(checkWebhookUrl('https://hooks.example.com/affiliates?x=1').hostname).toBe('hooks.example.com')
    expect(checkWebhookUrl('https://8.8.8.8:8443/hook').port).toBe('8443')
    expect(checkWebhookUrl('https://[2606:4700:4700::1111]/').hostname).toBe('[2606:4700:4700::1111]')
  })

  it('refuses http unless allowHttp, and every other scheme', () => {
    expect(() => checkWebhookUrl('http://hooks.example.com/')).toThrow(
      'webhook URLs must be https, not http (http only with webhooks: { allowHttp: true })',
    )
    expect(checkWebhookUrl('http://hooks.example.com/', { allowHttp: true }).protocol).toBe('http:')
    for (const url of [
      'ftp://hooks.example.com/',
      'file:///etc/passwd',
      'gopher://x/',
      'ws://x/',
      'javascript:alert(1)',
      'data:text/plain,hi',
    ]) {
      expect(() => checkWebhookUrl(url, { allowHttp: true, allowPrivateAddresses: true }), url).toThrow(/must be https/)
    }
  })

  it('refuses what is not an absolute URL, and user names or passwords', () => {
    expect(() => checkWebhookUrl('/hook')).toThrow(/not an absolute URL/)
    expect(() => checkWebhookUrl('hooks.example.com')).toThrow(/absolute URL|must be https/)
    expect(() => checkWebhookUrl('https://user:pass@hooks.example.com/')).toThrow(/user name or password/)
  })

  it('refuses loopback, private, link-local and metadata literals in every spelling the URL parser accepts', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.1/',
      'https://0x7f000001/',
      'https://2130706433/',
      'https://0177.0.0.1/',
      'https://10.0.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]:8443/',
      'https://[::ffff:127.0.0.1]/',
      'https://[0:0:0:0:0:ffff:a00:1]/',
      'https://[fd00::1]/',
      'https://0.0.0.0/',
    ]) {
      expect(() => checkWebhookUrl(url), url).toThrow(/^refused: .* address/)
    }
    expect(() => checkWebhookUrl('http://10.0.0.1/', { allowHttp: true })).toThrow('refused: 10.0.0.1 is a private address')
  })

  it('allows those literals with allowPrivateAddresses (tests), http still needing allowHttp', () => {
    expect(checkWebhookUrl('https://127.0.0.1:9/', { allowPrivateAddresses: true }).hostname).toBe('127.0.0.1')
    expect(() => checkWebhookUrl('http://127.0.0.1:9/', { allowPrivateAddresses: true })).toThrow(/must be https/)
    expect(checkWebhookUrl('http://127.0.0.1:9/', { allowHttp: true, allowPrivateAddresses: true }).protocol).toBe('http:')
  })

  it('leaves names to the resolver (checked at delivery, on the address connected to)', () => {
    expect(checkWebhookUrl('https://localhost/').hostname).toBe('localhost')
    expect(checkWebhookUrl('https://metadata.google.internal/').hostname).toBe('metadata.google.internal')
  })
})
