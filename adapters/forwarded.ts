/**
 * How many proxies of your own stand in front of the server. `false` (the default): the socket's
 * peer is the client, and `X-Forwarded-For` is ignored (anyone can send it). `true` is one proxy;
 * a number is that many: the client is then the address that many hops back in `X-Forwarded-For`,
 * counted from the right, so entries a client wrote itself are never believed; and the scheme
 * the client used is read from `X-Forwarded-Proto` the same way (https: `Secure` cookies and https
 * URLs on the portal's and the admin's pages).
 */
export type TrustProxy = boolean | number

/** The number of trusted hops `trust` stands for; a TypeError for anything but a boolean or a whole number. */
export function proxyHops(trust: TrustProxy = false): number {
  const hops = trust === true ? 1 : trust === false ? 0 : trust
  if (!Number.isInteger(hops) || hops < 0) throw new TypeError('trustProxy must be true, false or a whole number of proxies')
  return hops
}

/** The client address behind `hops` trusted proxies, from `X-Forwarded-For` and the socket's peer. */
export function clientBehindProxies(forwardedFor: string | null | undefined, peer: string | undefined, hops: number): string | undefined {
  if (hops === 0 || !forwardedFor) return peer
  const chain = forwardedFor
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  chain.push(peer ?? '')
  const client = chain[Math.max(0, chain.length - 1 - hops)]
  return client === '' ? undefined : client
}

/**
 * The scheme the client used, as the outermost of `hops` trusted proxies saw it in
 * `X-Forwarded-Proto` (the entry that many back from the right, as in `clientBehindProxies`; a
 * proxy that sets rather than appends leaves one entry, which is then it). Undefined with no
 * trusted proxy (the header is anyone's to send) or no usable header: the connection's own
 * scheme stands.
 */
export function protocolBehindProxies(forwardedProto: string | null | undefined, hops: number): 'http' | 'https' | undefined {
  if (hops === 0 || !forwardedProto) return undefined
  const chain = forwardedProto.split(',').map((entry) => entry.trim().toLowerCase())
  const scheme = chain[Math.max(0, chain.length - hops)]
  return scheme === 'https' || scheme === 'http' ? scheme : undefined
}

/**
 * `request` with the scheme a trusted proxy says the client used (`X-Forwarded-Proto`), for the
 * runtimes that hand over a real Request (Bun, Deno): the same request when it says nothing or
 * says the scheme the URL has, else a copy at the other scheme (headers, body and signal kept).
 */
export function withForwardedScheme(request: Request, hops: number): Request {
  const scheme = protocolBehindProxies(request.headers.get('x-forwarded-proto'), hops)
  if (scheme === undefined || request.url.startsWith(`${scheme}:`)) return request
  return new Request(`${scheme}:${request.url.slice(request.url.indexOf(':') + 1)}`, request)
}
