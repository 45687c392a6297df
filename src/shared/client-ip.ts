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

  return (peer: string, forwardedFor: string | null): string => {
    const ip = peer.startsWith('::ffff:') ? peer.slice(7) : peer
    if (!enabled || !forwardedFor || !isTrusted(ip)) return ip
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
