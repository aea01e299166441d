// Which webhook URLs and IP addresses a delivery may reach (SSRF protection). Address ranges come
// from ipaddr.js (plain JavaScript, every runtime). Deny by default: an IPv4 address must be public
// unicast, an IPv6 address global unicast (2000::/3) and in no special range; IPv4-mapped IPv6
// addresses are judged as the IPv4 address they carry.

import ipaddr from 'ipaddr.js'

export interface WebhookAddressPolicy {
  /** `http:` URLs too (SPEC.md: `webhooks: { allowHttp: true }`, for tests). */
  allowHttp?: boolean
  /** Loopback, private, link-local and other non-public addresses too (`webhooks: { allowPrivateAddresses: true }`, for tests). */
  allowPrivateAddresses?: boolean
}

/** A URL or address a webhook may not use; `reason` says why, for `lastError` and 400 answers. */
export class WebhookAddressError extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = 'WebhookAddressError'
  }
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10)',
  private: 'a private',
  reserved: 'a reserved',
  uniqueLocal: 'a unique local (fc00::/7)',
  deprecatedSiteLocal: 'a site-local',
  rfc6052: 'a NAT64 (64:ff9b::/96)',
  rfc6145: 'an IPv4-translated',
  '6to4': 'a 6to4 (2002::/16)',
  teredo: 'a Teredo (2001::/32)',
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3')
const METADATA = ipaddr.IPv4.parse('169.254.169.254')

/**
 * Why `address` (an IPv4 or IPv6 literal, without brackets) may not be reached, or undefined when it
 * may. Names the range, e.g. "127.0.0.1 is a loopback address".
 */
export function forbiddenAddressReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (!ipaddr.isValid(bare)) return `${address} is not an IP address`
  let ip = ipaddr.parse(bare)
  let shown = address
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    ip = (ip as ipaddr.IPv6).toIPv4Address()
    shown = `${address} (IPv4-mapped ${ip.toString()})`
  }
  if (ip.kind() === 'ipv4') {
    if ((ip as ipaddr.IPv4).match(METADATA, 32)) return `${shown} is the cloud metadata address (link-local)`
    const range = ip.range()
    return range === 'unicast' ? undefined : `${shown} is ${RANGE_NAMES[range] ?? `a special-purpose (${range})`} address`
  }
  const v6 = ip as ipaddr.IPv6
  if ((v6 as { zoneId?: string }).zoneId) return `${shown} has a zone id (link-local)`
  const range = v6.range()
  if (range !== 'unicast') return `${shown} is ${RANGE_NAMES[range] ?? `a special-purpose (${range})`} address`
  if (!v6.match(GLOBAL_UNICAST_V6)) return `${shown} is not a global unicast (2000::/3) address`
  return undefined
}

/** Whether `host` (as `URL.hostname` gives it, IPv6 in brackets) is an IP literal; its bare address if so. */
export function ipLiteral(host: string): string | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  return ipaddr.IPv4.isValidFourPartDecimal(bare) || (bare.includes(':') && ipaddr.IPv6.isValid(bare)) ? bare : undefined
}

/**
 * Checks what can be checked without DNS, for `POST /webhooks` and `PUT /webhooks` as well as before
 * every delivery: an absolute `https:` URL (`http:` only with `allowHttp`), no user name or password,
 * and, when the host is an IP literal, an address that may be reached. Answers the parsed URL;
 * throws `WebhookAddressError` naming the problem.
 */
export function checkWebhookUrl(url: string, policy: WebhookAddressPolicy = {}): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new WebhookAddressError(`${JSON.stringify(url)} is not an absolute URL`)
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    const hint = parsed.protocol === 'http:' ? ' (http only with webhooks: { allowHttp: true })' : ''
    throw new WebhookAddressError(`webhook URLs must be https, not ${parsed.protocol.slice(0, -1)}${hint}`)
  }
  if (parsed.username || parsed.password) throw new WebhookAddressError('webhook URLs may not carry a user name or password')
  if (!parsed.hostname) throw new WebhookAddressError('the webhook URL has no host')
  const literal = ipLiteral(parsed.hostname)
  if (literal !== undefined) checkAddress(literal, policy)
  return parsed
}

/** One spelling per address (`0:0:0:0:0:0:0:1` and `::1` alike), for comparing a socket's peer with the checked addresses. */
export function canonicalAddress(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  return ipaddr.isValid(bare) ? ipaddr.parse(bare).toNormalizedString() : bare
}

/** Throws `WebhookAddressError` unless `address` may be reached under `policy`. */
export function checkAddress(address: string, policy: WebhookAddressPolicy = {}): void {
  if (policy.allowPrivateAddresses) {
    if (!ipaddr.isValid(address)) throw new WebhookAddressError(`${address} is not an IP address`)
    return
  }
  const reason = forbiddenAddressReason(address)
  if (reason) throw new WebhookAddressError(`refused: ${reason} (allowed only with webhooks: { allowPrivateAddresses: true })`)
}
