/**
 * How many proxies of your own stand in front of the server. `false` (the default): the socket's
 * peer is the client, and `X-Forwarded-For` is ignored (anyone can send it). `true` is one proxy;
 * a number is that many: the client is then the address that many hops back in `X-Forwarded-For`,
 * counted from the right, so entries a client wrote itself are never believed.
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
