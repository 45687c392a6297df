/**
 * The client IP: the socket peer, or, when the peer is a trusted proxy
 * (`server.trustProxy` CIDRs), the right-most X-Forwarded-For address that is not
 * itself a trusted proxy.
 */
import { BlockList, isIP } from 'node:net'

export function createClientIpResolver(trustProxy: string[]) {
  const trusted = new BlockList()
  for (const cidr of trustProxy) {
    const [addr, bits] = cidr.split('/')
    const family = isIP(addr!) === 6 ? 'ipv6' : 'ipv4'
    if (bits === undefined) trusted.addAddress(addr!, family)
    else trusted.addSubnet(addr!, Number(bits), family)
  }
  const isTrusted = (ip: string) => {
    const v = isIP(ip)
    if (v === 0) return false
    const plain = ip.startsWith('::ffff:') && v === 6 ? ip.slice(7) : ip
    return trusted.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4')
  }
  const enabled = trustProxy.length > 0
  // Peers are few (the proxies in front, or the clients themselves): each is checked once. Bounded.
  const peers = new Map<string, boolean>()
  const isTrustedPeer = (ip: string) => {
    let t = peers.get(ip)
    if (t === undefined) {
      t = isTrusted(ip)
      if (peers.size >= 4096) peers.clear()
      peers.set(ip, t)
    }
    return t
  }

  return (peer: string, forwardedFor: string | null): string => {
    const ip = peer.startsWith('::ffff:') ? peer.slice(7) : peer
    if (!enabled || !forwardedFor || !isTrustedPeer(ip)) return ip
    // One hop (a single proxy in front): no split, no array.
    if (!forwardedFor.includes(',')) {
      const hop = forwardedFor.trim()
      return isIP(hop) === 0 ? ip : hop // a trusted hop too: it is the leftmost there is
    }
    const hops = forwardedFor
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    for (let i = hops.length - 1; i >= 0; i--) {
      if (isIP(hops[i]!) === 0) return ip
      if (!isTrusted(hops[i]!)) return hops[i]!
    }
    return hops[0] ?? ip
  }
}
